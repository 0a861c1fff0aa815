package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/internal/fakeclaude"
	"github.com/debussy-dev/debussy/internal/fakeexe"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
)

// fake is the program run as claude: this test package re-executed
// (internal/fakeclaude), built without -race under -race (internal/fakeexe);
// the end-to-end tests run the real CLI.
var fake fakeexe.Exe

func TestMain(m *testing.M) {
	if scenario := os.Getenv("FAKE_CLAUDE"); scenario != "" {
		os.Exit(fakeclaude.Main(scenario))
	}
	os.Exit(fake.Run(m))
}

// fakeConfig is a session of the fake's "hooks" scenario: two Bash calls
// (PreToolUse, PostToolUse each), a text answer, the Stop hook.
func fakeConfig(t *testing.T) (Config, string) {
	t.Helper()
	exe := fake.Path(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal")
	handoff := filepath.Join(dir, "handoff-1.md")
	return Config{
		Phase: "1", Number: 1,
		Spec: runner.Spec{Bin: exe, Dir: dir, Prompt: "do the thing", LogPath: filepath.Join(dir, "session-1.jsonl"),
			StopGrace: 10 * time.Second, KillGrace: 10 * time.Second,
			SetEnv: map[string]string{"FAKE_CLAUDE": "hooks", "FAKE_CLAUDE_JOURNAL": journal}},
		Policy:           policy.Config{Phase: "1", ContextThreshold: 80, MaxRestarts: 3, Handoff: true, HandoffPath: handoff, Root: dir},
		HandoffGraceTime: time.Minute,
		Facts: Facts{SignalPath: filepath.Join(dir, "signal.json"), HandoffSignalPath: filepath.Join(dir, "handoff.json"),
			HandoffPath: handoff},
		Root: dir,
	}, journal
}

func journalOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Every hook call is answered while the owner takes none of the session's
// effects: an answer never waits on the owner (which may be committing,
// running the user's pre-commit hook).
func TestAnswersNeverWaitOnTheOwner(t *testing.T) {
	cfg, journal := fakeConfig(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := s.Wait() // nothing taken before the session is over
	if res.Outcome.Kind != runner.OutcomeCompleted || res.Trigger != "" || res.Interrupted {
		t.Fatalf("result %+v", res)
	}
	j := journalOf(t, journal)
	for _, hook := range []string{"answer PreToolUse", "answer PostToolUse", "answer Stop"} {
		if !strings.Contains(j, hook) {
			t.Errorf("journal lacks %q:\n%s", hook, j)
		}
	}
	effects, over := s.Take()
	if !over {
		t.Error("Take says the session is not over after Wait")
	}
	var observed, tools int
	for _, e := range effects {
		switch e := e.(type) {
		case Observed:
			observed++
		case Log:
			if e.Msg == "tool" {
				tools++
			}
			if len(e.Args) < 2 || e.Args[0] != "phase" || e.Args[1] != "1" {
				t.Errorf("log %q does not name the phase first: %v", e.Msg, e.Args)
			}
		}
	}
	if observed == 0 || tools != 2 {
		t.Errorf("%d events observed, %d tools logged, want some and 2", observed, tools)
	}
}

// The agent's `debussy done` signal on disk at the Stop hook ends the
// session as done: the watcher reads the fact, the policy decides.
func TestDoneSignalAtTheStopHook(t *testing.T) {
	cfg, _ := fakeConfig(t)
	if err := os.WriteFile(cfg.Facts.SignalPath, []byte(`{"phase":"1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Policy.RequireDoneSignal = true
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res := s.Wait(); !res.Done || res.State != policy.Done {
		t.Fatalf("result %+v, want done", res)
	}
}

// meters are budgets at a fixed standing.
type meters struct{ st Standing }

func (m meters) Observe(event.Event) budget.Progress                { return "" }
func (m meters) Check(time.Time) (Standing, bool)                   { return m.st, true }
func (m meters) Quarter(time.Time, int, int) (budget.Quarter, bool) { return budget.Quarter{}, false }
func (m meters) NextLevel(time.Time) (time.Duration, bool)          { return 0, false }
func (m meters) Live(time.Time) Live                                { return Live{} }

// The policy decides on the Meters' readings: at a strict budget's
// wrap-up level every tool but the handoff's is refused with the budget's
// reason; spent, the session stops for the budget, not for a restart, and
// lets the running tool finish.
func TestBudgetLevels(t *testing.T) {
	lim := budget.Limits{Tokens: 1000}
	status := func(l budget.Level, used float64) budget.Status {
		st := budget.Status{Spend: budget.Spend{Tokens: int64(used * 1000)}, Used: used, Dimension: budget.DimTokens, Level: l,
			Action: budget.Strict.Action(l)}
		if st.Action.Stop {
			st.Exhausted = "tokens 1.2K of 1K"
		}
		return st
	}
	tests := []struct {
		name      string
		st        budget.Status
		trigger   estimator.Trigger
		exhausted string
		journal   string
	}{
		{"wrap-up", status(budget.LevelWrapUp, 0.97), "", "", "debussy (phase budget): Refused"},
		{"spent", status(budget.LevelExhausted, 1.2), policy.TriggerBudget, "phase tokens 1.2K of 1K", "budget exhausted: phase tokens 1.2K of 1K"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, journal := fakeConfig(t)
			cfg.Meters = meters{Standing{Phase: tt.st, PhaseLimits: lim}}
			cfg.Budget = &BudgetState{Mode: budget.Strict, Written: map[string]bool{}}
			s, err := Start(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := s.Wait()
			if res.Trigger != tt.trigger || cfg.Budget.Exhausted != tt.exhausted {
				t.Fatalf("trigger %q, exhausted %q; want %q, %q", res.Trigger, cfg.Budget.Exhausted, tt.trigger, tt.exhausted)
			}
			if j := journalOf(t, journal); !strings.Contains(j, tt.journal) {
				t.Errorf("journal lacks %q:\n%s", tt.journal, j)
			}
			var levels, denied int
			effects, _ := s.Take()
			for _, e := range effects {
				r, ok := e.(Record)
				if !ok {
					continue
				}
				switch ev := r.Event.(type) {
				case record.BudgetLevel:
					levels++
					if ev.Level != tt.st.Level.String() || ev.Phase != "1" || ev.Turn == nil {
						t.Errorf("budget_level %+v", ev)
					}
				case record.Policy:
					// What the session refused, the Result says, as the
					// events log does.
					if ev.Name == "tool_denied" {
						denied++
						if id := *ev.ToolUseID; res.Refused[id] != ev.Why {
							t.Errorf("tool_denied %s (%s): Result.Refused %v", id, ev.Why, res.Refused)
						}
					}
				}
			}
			if levels != 1 {
				t.Errorf("%d budget_level records, want 1 (a level is recorded when it changes)", levels)
			}
			if len(res.Refused) != denied || (tt.name == "wrap-up" && denied == 0) {
				t.Errorf("Result.Refused %v, %d tool_denied records", res.Refused, denied)
			}
		})
	}
}

// Ctrl-C stops the session at the next safe point: the Result says it was
// interrupted, and the interrupt is recorded (from beside the loop, which
// the race detector checks).
func TestInterrupted(t *testing.T) {
	cfg, _ := fakeConfig(t)
	cfg.Spec.SetEnv["FAKE_CLAUDE"] = "tool" // a tool that runs until interrupted
	cfg.Spec.CancelGrace, cfg.Spec.StopGrace = 10*time.Second, 100*time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for observed := false; !observed; {
		<-s.Ready()
		effects, _ := s.Take()
		for _, e := range effects {
			if o, ok := e.(Observed); ok && o.Event.Kind == event.KindAssistant {
				observed = true
			}
		}
	}
	cancel()
	res := s.Wait()
	if !res.Interrupted {
		t.Fatalf("result %+v, want interrupted", res)
	}
	effects, _ := s.Take()
	var recorded bool
	for _, e := range effects {
		if r, ok := e.(Record); ok && r.Event == (record.Interrupt{Session: record.Session{Phase: "1", Session: 1}}) {
			recorded = true
		}
	}
	if !recorded {
		t.Error("no interrupt record")
	}
}
