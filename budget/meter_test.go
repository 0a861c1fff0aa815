package budget

import (
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
)

func apiResponse(id string, input int64) runner.Event {
	return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{
		MessageID: id, Model: "claude-sonnet-4-5", Usage: runner.Usage{InputTokens: input, OutputTokens: 1},
	}}
}

// A strict phase budget of 100K tokens over two sessions: each level is
// told once, the count goes on across the restart and a compaction, and at
// 100 % the action is a stop naming the spend.
func TestMeterStrictAcrossSessions(t *testing.T) {
	m := NewMeter(Limits{Tokens: 100_000}, Strict, AdaptiveConfig{}, nil)
	compaction := runner.Event{Kind: runner.KindSystem, Subtype: "compact_boundary", System: &runner.System{Subtype: "compact_boundary", PreTokens: 150_000}}
	steps := []struct {
		session bool // start a new session first
		ev      runner.Event
		level   Level
		note    string // substring; "" for none
		stop    bool
	}{
		{true, apiResponse("a1", 50_000), LevelNone, "", false},
		{false, apiResponse("a2", 20_000), LevelNote, "30K tokens left", false},
		{false, apiResponse("a2", 20_000), LevelNote, "", false}, // same response, counted once, told once
		{true, apiResponse("b1", 10_000), LevelNote, "", false},  // the restart keeps the count
		{false, compaction, LevelNote, "", false},
		{false, apiResponse("b2", 11_000), LevelFirm, "9K tokens left", false},
		{false, apiResponse("b3", 4_000), LevelWrapUp, "Wrap up now", false},
		{false, apiResponse("b4", 5_000), LevelExhausted, "Budget exhausted", true},
	}
	for i, st := range steps {
		if st.session {
			m.StartSession()
		}
		m.Observe(st.ev)
		got := m.Check(time.Minute)
		if got.Level != st.level || got.Action.Stop != st.stop {
			t.Fatalf("step %d: level %v stop %v, want %v %v (spend %+v)", i, got.Level, got.Action.Stop, st.level, st.stop, got.Spend)
		}
		if (st.note == "") != (got.Note == "") || !strings.Contains(got.Note, st.note) {
			t.Errorf("step %d: note %q, want one with %q", i, got.Note, st.note)
		}
		if st.stop && !strings.HasPrefix(got.Exhausted, "tokens 100K of 100K") {
			t.Errorf("step %d: exhausted = %q", i, got.Exhausted)
		}
	}
	m.EndSession()
	if tot := m.Totals(); tot.Turns != 6 || tot.Tokens.Input != 100_000 {
		t.Errorf("totals = %+v", tot)
	}
}

func TestMeterModes(t *testing.T) {
	for _, tt := range []struct {
		mode     Mode
		notes    int
		stop     bool
		quarters int
	}{
		{Strict, 3, true, 0},
		{Advisory, 3, false, 0},
		{Soft, 0, false, 0},
		{Adaptive, 3, true, 4},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			m := NewMeter(Limits{CostUSD: 1}, tt.mode, AdaptiveConfig{RestartThreshold: 0.9, MinCompletionProbability: 0.5}, nil)
			notes, stop := 0, false
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			// Sonnet input at $3/MTok: 33_334 tokens ≈ $0.10 a step.
			for i := range 11 {
				m.Observe(apiResponse(string(rune('a'+i)), 33_334))
				st := m.Check(time.Duration(i) * time.Minute)
				if st.Note != "" {
					notes++
				}
				stop = stop || st.Action.Stop
				m.Quarter(at, time.Duration(i)*time.Minute, 1, 4)
			}
			if notes != tt.notes || stop != tt.stop || len(m.Quarters()) != tt.quarters {
				t.Errorf("notes %d stop %v quarters %d, want %d %v %d", notes, stop, len(m.Quarters()), tt.notes, tt.stop, tt.quarters)
			}
			if tt.mode == Adaptive {
				last := m.Quarters()[3]
				if last.Decision != Restart || last.TasksDone != 1 || last.UsedPct < 100 {
					t.Errorf("last quarter = %+v", last)
				}
				// The restart's fresh window starts over.
				m.OpenWindow(10 * time.Minute)
				if st := m.Check(10 * time.Minute); st.Level != LevelNone || st.Action.Stop {
					t.Errorf("after OpenWindow: %+v", st)
				}
				if m.Spend(0).CostUSD < 1 {
					t.Error("the phase's totals lost the first window")
				}
			}
		})
	}
}

func TestMeterNoBudget(t *testing.T) {
	m := NewMeter(Limits{}, Strict, AdaptiveConfig{}, nil)
	m.Observe(apiResponse("a", 10_000_000))
	if st := m.Check(time.Hour); st.Level != LevelNone || st.Note != "" || st.Action != (Action{}) {
		t.Errorf("no budget: %+v", st)
	}
	if _, ok := m.Quarter(time.Time{}, time.Hour, 0, 1); ok {
		t.Error("a quarter without a budget")
	}
}

func TestMeterDuration(t *testing.T) {
	m := NewMeter(Limits{Duration: time.Hour}, Strict, AdaptiveConfig{}, nil)
	if st := m.Check(61 * time.Minute); !st.Action.Stop || st.Dimension != DimDuration {
		t.Errorf("an hour over: %+v", st)
	}
}

func TestRefusal(t *testing.T) {
	strict := func(l Level) Action { return Strict.Action(l) }
	tests := []struct {
		name   string
		action Action
		call   Call
		want   string // prefix; "" allowed
	}{
		{"below firm a search runs", strict(LevelNote), Call{Name: "Grep"}, ""},
		{"firm refuses a search", strict(LevelFirm), Call{Name: "Grep"}, "Refused: the budget is nearly spent"},
		{"firm refuses a read-only shell", strict(LevelFirm), Call{Name: "Bash", Command: "find . -name '*.go'"}, "Refused: the budget is nearly spent"},
		{"firm lets the phase's file be read", strict(LevelFirm), Call{Name: "Read", PhaseFile: true}, ""},
		{"firm lets an edit run", strict(LevelFirm), Call{Name: "Edit"}, ""},
		{"firm lets the tests run", strict(LevelFirm), Call{Name: "Bash", Command: "go test ./..."}, ""},
		{"wrap-up refuses an edit", strict(LevelWrapUp), Call{Name: "Edit"}, "Refused: the budget is almost spent"},
		{"wrap-up lets the handoff be written", strict(LevelWrapUp), Call{Name: "Write", WrapUp: true}, ""},
		{"exhausted lets debussy done run", strict(LevelExhausted), Call{Name: "Bash", Command: "debussy done", WrapUp: true}, ""},
		{"advisory never refuses", Advisory.Action(LevelExhausted), Call{Name: "Grep"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Refusal(tt.action, tt.call, "5K tokens")
			if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Refusal = %q, want %q…", got, tt.want)
			}
		})
	}
}

// The duration budget's next level is due at 70, 90, just past 95 and 100
// % of the window, then never.
func TestMeterNextDurationLevel(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		elapsed time.Duration
		want    time.Duration
		ok      bool
	}{
		{"no duration limit", Limits{Tokens: 10}, 0, 0, false},
		{"at the start: the note", Limits{Duration: 100 * time.Second}, 0, 70 * time.Second, true},
		{"past the note: firm", Limits{Duration: 100 * time.Second}, 80 * time.Second, 10 * time.Second, true},
		{"at firm: wrap-up, just past 95 %", Limits{Duration: 100 * time.Second}, 92 * time.Second, 3*time.Second + 1, true},
		{"past wrap-up: the end", Limits{Duration: 100 * time.Second}, 97 * time.Second, 3 * time.Second, true},
		{"spent", Limits{Duration: 100 * time.Second}, 100 * time.Second, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeter(tt.limits, Strict, AdaptiveConfig{}, nil)
			got, ok := m.NextDurationLevel(tt.elapsed)
			if got != tt.want || ok != tt.ok {
				t.Errorf("NextDurationLevel(%s) = %s, %v; want %s, %v", tt.elapsed, got, ok, tt.want, tt.ok)
			}
		})
	}
	// An adaptive window counts from its opening.
	m := NewMeter(Limits{Duration: 100 * time.Second}, Adaptive, AdaptiveConfig{}, nil)
	m.OpenWindow(100 * time.Second)
	if got, ok := m.NextDurationLevel(110 * time.Second); !ok || got != 60*time.Second {
		t.Errorf("in a window opened at 100 s: %s, %v; want 60s", got, ok)
	}
}

// An extension raises each limit it sets and the notes start over, while
// the spend stays; Standing tells where it stands without marking notes.
func TestMeterExtend(t *testing.T) {
	m := NewMeter(Limits{Tokens: 100_000}, Strict, AdaptiveConfig{}, nil)
	m.Observe(apiResponse("a", 101_000))
	if st := m.Check(time.Minute); !st.Action.Stop {
		t.Fatalf("before the extension: %+v", st)
	}
	m.Extend(Limits{Tokens: 100_000})
	if got := m.Limits(); got != (Limits{Tokens: 200_000}) {
		t.Errorf("limits = %+v", got)
	}
	if used, dim := m.Standing(time.Minute); used < 0.5 || used > 0.51 || dim != DimTokens {
		t.Errorf("standing = %v %s", used, dim)
	}
	if st := m.Check(time.Minute); st.Action.Stop || st.Level != LevelNone {
		t.Errorf("after the extension: %+v", st)
	}
	m.Observe(apiResponse("b", 40_000))
	if used, _ := m.Standing(time.Minute); LevelOf(used) != LevelNote {
		t.Errorf("standing %v, want the note's level", used)
	}
	if st := m.Check(time.Minute); st.Level != LevelNote || !strings.Contains(st.Note, "59K tokens left") {
		t.Errorf("the note of the larger budget: %+v", st)
	}
}
