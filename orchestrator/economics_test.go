package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/state"
)

// budgetScript climbs a 100K-token phase budget one API call at a time:
// each step is one call of the fake (its context counts whole), so the
// levels are crossed where the comments say. Reads and writes between
// them are where the agent hears a note or is refused.
var budgetScript = []string{
	"usage 70000", // 70K: note
	"usage 1000",
	"write a.txt",          // 72K; its PostToolUse carries the 70 % note
	"usage 19000",          // 91K: firm
	"usage 1000",           // 92K
	"read README.md",       // 93K: exploration, refused under strict
	"read plan/phase-1.md", // 94K: the phase's own file runs
	"usage 2000",           // 96K: wrap up
	"usage 1000",           // 97K
	"write b.txt",          // 98K: refused under strict
	"progress wrapping up", // 99K: the wrap-up runs
	"usage 2000",           // 101K: exhausted
	"write c.txt",          // the running tool's PostToolUse stops a strict session
	"write d.txt",
	"done",
	"result",
}

// Each enforcement mode against the same spend, with the fake CLI asking
// at its hooks; phase 2 follows phase 1.
func TestBudgetEnforcement(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		set    func(c *config.Config)
		script script
		// hooks: each string must appear in phase 1's session-1 hook log;
		// a "!" prefix must not.
		hooks    []string
		exists   []string // "!" prefix: absent
		wantErr  error
		phase2   bool // phase 2 started
		events   []string
		check    func(t *testing.T, f *fixture, run *state.Run, err error)
		sessions int
	}{
		{
			name: "strict: notes at 70 and 90 %, exploration then all but the wrap-up refused, a stop at 100 %",
			set:  func(c *config.Config) { c.Budget.Phase.Tokens = 100_000 },
			hooks: []string{
				"post Write note: debussy: Budget: 30K tokens left",
				"pre Read deny: debussy (phase budget): Refused: the budget is nearly spent",
				"post Read note: debussy: Budget nearly spent:",
				"pre Write deny: debussy (phase budget): Refused: the budget is almost spent",
				"post Bash note: debussy: Budget almost gone:",
				"post Write stop: budget exhausted: phase tokens 10",
			},
			exists:   []string{"a.txt", "!b.txt", "c.txt", "!d.txt"},
			wantErr:  ErrBudgetExhausted,
			sessions: 1,
			events:   []string{"budget_level", "budget_level", "tool_denied", "budget_level", "tool_denied", "budget_level", "hook_stop", "session_ended", "commit", "phase_ended"},
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				msg := err.Error()
				for _, want := range []string{"phase 1: budget exhausted: phase tokens 10", "of 100K", "work committed",
					"budget.phase.tokens", "--budget-tokens", "DEBUSSY_BUDGET_PHASE_TOKENS"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q lacks %q", msg, want)
					}
				}
				p := run.Phase("1")
				e := p.Economics
				if p.Status != state.StatusFailed || e == nil || !e.Exhausted || e.Level != "exhausted" || e.Limits.Tokens != 100_000 ||
					e.Enforcement != "strict" || e.Dimension != "tokens" || e.UsedPct < 100 {
					t.Errorf("phase 1: status %s, economics %+v", p.Status, e)
				}
				if p.Restarts != 0 {
					t.Errorf("restarts = %d, want none", p.Restarts)
				}
				if run.ExitCode != 1 || run.Status != state.StatusFailed {
					t.Errorf("run: exit %d, status %s", run.ExitCode, run.Status)
				}
				// c.txt is in the phase's last commit.
				if msgs := f.commitSubjects(); len(msgs) == 0 || !strings.Contains(msgs[0], "failed") {
					t.Errorf("commits %v", msgs)
				}
				if f.dirty() {
					t.Error("work left uncommitted")
				}
			},
		},
		{
			name:     "strict without restarts still stops",
			set:      func(c *config.Config) { c.Budget.Phase.Tokens = 100_000; c.MaxRestarts = 0 },
			hooks:    []string{"post Write stop: budget exhausted"},
			exists:   []string{"c.txt", "!d.txt"},
			wantErr:  ErrBudgetExhausted,
			sessions: 1,
		},
		{
			name: "advisory: the notes only, the phase completes",
			set:  func(c *config.Config) { c.Budget.Phase.Tokens = 100_000; c.Budget.Enforcement = config.EnforceAdvisory },
			hooks: []string{"post Write note: debussy: Budget: 30K tokens left", "post Read note: debussy: Budget nearly spent:",
				"post Write note: debussy: Budget almost gone:", "post Write note: debussy: Budget spent", "!deny", "!stop", "!refused"},
			exists:   []string{"a.txt", "b.txt", "c.txt", "d.txt"},
			phase2:   true,
			sessions: 1,
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				e := run.Phase("1").Economics
				if e.Exhausted || e.Level != "exhausted" || e.Enforcement != "advisory" {
					t.Errorf("economics %+v", e)
				}
				// The Meter's cost against the CLI's total_cost_usd.
				if e.ReportedCostUSD == 0 || math.Abs(e.CostUSD-e.ReportedCostUSD) > 0.01*e.ReportedCostUSD {
					t.Errorf("cost %.6f, reported %.6f: more than 1 %% apart", e.CostUSD, e.ReportedCostUSD)
				}
				if run.Phase("1").Tokens != e.Tokens || e.Tokens < 100_000 || e.APITurns < 15 {
					t.Errorf("record tokens %d, economics %+v", run.Phase("1").Tokens, e)
				}
				if run.Economics == nil || run.Economics.Tokens != e.Tokens+run.Phase("2").Economics.Tokens {
					t.Errorf("run economics %+v", run.Economics)
				}
			},
		},
		{
			name:     "soft: tracking only",
			set:      func(c *config.Config) { c.Budget.Phase.Tokens = 100_000; c.Budget.Enforcement = config.EnforceSoft },
			hooks:    []string{"!note: debussy: Budget", "!deny", "!stop"},
			exists:   []string{"d.txt"},
			phase2:   true,
			sessions: 1,
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				if e := run.Phase("1").Economics; e.Level != "exhausted" || e.UsedPct < 100 {
					t.Errorf("economics %+v", e)
				}
			},
		},
		{
			name:     "no budget: nothing said, everything counted",
			hooks:    []string{"!Budget", "!deny", "!stop"},
			phase2:   true,
			sessions: 1,
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				if e := run.Phase("1").Economics; e == nil || e.Tokens < 100_000 || e.Level != "" || e.Limits != (state.Limits{}) {
					t.Errorf("economics %+v", e)
				}
			},
		},
		{
			name: "plan budget: every phase hears the plan's level, not only the one that crossed it",
			set:  func(c *config.Config) { c.Budget.Plan.Tokens = 100_000 },
			script: script{
				// Each call counts its whole context: phase 1 spends 70K+ of
				// the plan's 100K (a note), phase 2 a little more.
				"1": {{"usage 35000", "usage 35000", "usage 500", "write a.txt", "done", "result"}},
				"2": {{"usage 500", "write b.txt", "done", "result"}},
			},
			phase2:   true,
			sessions: 1,
			hooks:    []string{"post Write note: debussy (plan budget): Budget:"},
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				contains(t, "phase 2 hooks", readFile(t, hooksPath(f.script, "2", 1)), []string{"post Write note: debussy (plan budget): Budget:"})
			},
		},
		{
			name: "plan budget: phase 1 completes, phase 2 exhausts the plan's",
			set:  func(c *config.Config) { c.Budget.Plan.Tokens = 150_000 },
			script: script{
				"1": {{"usage 59000", "usage 1000", "done", "result"}}, // 61K
				// 111K of the plan's 150K: a note; 153K: the stop.
				"2": {{"usage 50000", "usage 1000", "write x.txt", "usage 40000", "write y.txt", "write z.txt", "done", "result"}},
			},
			phase2:   true,
			wantErr:  ErrBudgetExhausted,
			sessions: 1,
			check: func(t *testing.T, f *fixture, run *state.Run, err error) {
				if !strings.Contains(err.Error(), "phase 2: budget exhausted: plan tokens") || !strings.Contains(err.Error(), "budget.plan.tokens") {
					t.Errorf("error %v", err)
				}
				if run.Phase("1").Status != state.StatusCompleted || run.Phase("2").Status != state.StatusFailed {
					t.Errorf("statuses %s, %s", run.Phase("1").Status, run.Phase("2").Status)
				}
				if run.Economics == nil || !run.Economics.Exhausted || run.Economics.Limits.Tokens != 150_000 {
					t.Errorf("run economics %+v", run.Economics)
				}
				contains(t, "phase 2 hooks", readFile(t, hooksPath(f.script, "2", 1)), []string{
					"post Write note: debussy (plan budget): Budget: 39K tokens left", "post Write stop: budget exhausted: plan tokens"})
				if _, err := os.Stat(filepath.Join(f.root, "z.txt")); err == nil {
					t.Error("phase 2 went on after the plan's budget ran out")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.script
			if s == nil {
				s = script{"1": {budgetScript}, "2": {{"done", "result"}}}
			}
			f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
			// The context never triggers a restart here.
			f.cfg.ContextWindow = 1_000_000
			f.cfg.StopGrace = config.Duration(3 * time.Second)
			if tt.set != nil {
				tt.set(&f.cfg)
			}
			err := f.run(context.Background())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("run: %v, want %v\n%s", err, tt.wantErr, f.log)
			}
			run := f.lastRun()
			if got := run.Phase("1").Sessions; got != tt.sessions {
				t.Errorf("sessions = %d, want %d", got, tt.sessions)
			}
			contains(t, "hooks", f.hooks(1), tt.hooks)
			for _, e := range tt.exists {
				name, absent := strings.CutPrefix(e, "!")
				_, serr := os.Stat(filepath.Join(f.root, name))
				if absent != (serr != nil) {
					t.Errorf("%s: exists %v, want %v", name, serr == nil, !absent)
				}
			}
			_, serr := os.Stat(promptPath(f.script, "2", 1))
			if started := serr == nil; started != tt.phase2 {
				t.Errorf("phase 2 started %v, want %v (status %s)", started, tt.phase2, run.Phase("2").Status)
			}
			if got := f.eventNames(); !subsequence(got, tt.events) {
				t.Errorf("events %v\ndo not contain in order %v", got, tt.events)
			}
			if tt.check != nil {
				tt.check(t, f, run, err)
			}
		})
	}
}

// An adaptive phase is evaluated at each quarter of its budget; at 100 %
// with its one task undone the completion probability is 0, so it
// restarts with the lessons so far in a fresh budget window.
func TestBudgetAdaptive(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {
		// 26K (25 %), 52K (50 %), 76K (75 %), 100K (100 %: restart)
		{"usage 26000", "write a.txt", "usage 24000", "write b.txt", "write c.txt"},
		{"usage 10000", "done", "result"},
	}})
	f.cfg.ContextWindow = 1_000_000
	f.cfg.StopGrace = config.Duration(3 * time.Second)
	f.cfg.Budget.Phase.Tokens = 100_000
	f.cfg.Budget.Enforcement = config.EnforceAdaptive
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	p := f.lastRun().Phase("1")
	e := p.Economics
	if p.Sessions != 2 || p.Restarts != 1 || e == nil {
		t.Fatalf("sessions %d, restarts %d, economics %+v\n%s", p.Sessions, p.Restarts, e, f.log)
	}
	if len(e.Quarters) != 4 {
		t.Fatalf("quarters %+v, want 4", e.Quarters)
	}
	for i, q := range e.Quarters {
		want := budget.Continue
		if i == 3 {
			want = budget.Restart
		}
		if q.Decision != want || q.TasksTotal != 1 || q.TasksDone != 0 || q.UsedPct < float64(25*(i+1)) || q.At.IsZero() {
			t.Errorf("quarter %d: %+v, want decision %s", i+1, q, want)
		}
	}
	contains(t, "session 1 hooks", f.hooks(1), []string{"post Write stop: adaptive budget: 10", "!deny"})
	contains(t, "session 2 prompt", f.prompt("1", 2), []string{"daptive budget: 100 % of the phase budget used with 0 of 1 tasks done", "Lessons so far"})
	if _, err := os.Stat(filepath.Join(f.root, "c.txt")); err == nil {
		t.Error("the session went on after the restart was decided")
	}
	if got := f.eventNames(); !subsequence(got, []string{"budget_quarter", "budget_quarter", "budget_quarter", "budget_quarter",
		"hook_stop", "session_ended", "commit", "checkpoint", "budget_window", "session_spawned"}) {
		t.Errorf("events %v", got)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// commitSubjects are the repository's commit subjects, newest first.
func (f *fixture) commitSubjects() []string {
	f.t.Helper()
	var out []string
	for _, c := range f.commits() {
		subject, _, _ := strings.Cut(c.Message, "\n")
		out = append(out, subject)
	}
	return out
}

// dirty reports uncommitted changes outside .debussy/.
func (f *fixture) dirty() bool {
	f.t.Helper()
	ch, err := f.repo.DirtyTracked(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return len(ch) > 0
}

// A duration budget fires without events: the running tool says nothing
// for as long as it runs, the timer stops the session (interrupting the
// tool after stop_grace) and the phase ends exhausted.
func TestBudgetDurationTimer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"usage 1000", "block"}}, "2": {{"done", "result"}}}, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.ContextWindow = 1_000_000
	f.cfg.StopGrace = config.Duration(100 * time.Millisecond)
	f.cfg.Budget.Phase.Duration = config.Duration(2 * time.Second)
	err := f.run(context.Background())
	if !errors.Is(err, ErrBudgetExhausted) || !strings.Contains(err.Error(), "phase time") || !strings.Contains(err.Error(), "budget.phase.duration") {
		t.Fatalf("run: %v, want the phase's time budget exhausted\n%s", err, f.log)
	}
	p := f.lastRun().Phase("1")
	if e := p.Economics; e == nil || !e.Exhausted || e.Dimension != "duration" {
		t.Errorf("economics %+v", e)
	}
	if _, serr := os.Stat(promptPath(f.script, "2", 1)); serr == nil {
		t.Error("phase 2 started after phase 1's budget ran out")
	}
	// The levels were crossed by the clock, then the tool was interrupted.
	// Under load the clock may pass several levels between two checks:
	// at least the first level and the stop, in order.
	if got := f.eventNames(); !subsequence(got, []string{"budget_level", "stop_decided", "tool_drained", "session_ended"}) {
		t.Errorf("events %v", got)
	}
}

// A spent budget is put to Options.Extend: a yes raises it by its amount
// and the phase goes on in a new session from a checkpoint; a no, or
// max_extensions reached, ends it as before.
func TestBudgetExtension(t *testing.T) {
	t.Parallel()
	// Session 1 climbs past 100K and is stopped; session 2 spends 100K
	// more (203K of the extended 200K) unless it finishes first.
	finishes := []string{"usage 1000", "write e.txt", "done", "result"}
	overruns := []string{"usage 99000", "usage 1000", "write e.txt", "write f.txt", "done", "result"}
	tests := []struct {
		name     string
		second   []string
		answer   bool
		max      int
		wantErr  error
		asked    int
		sessions int
		granted  []bool // the budget_extension events' granted, in order
	}{
		{name: "yes: the phase goes on and completes", second: finishes, answer: true, max: 1, asked: 1, sessions: 2, granted: []bool{true}},
		{name: "no: exhausted as without a terminal", second: finishes, answer: false, max: 1, wantErr: ErrBudgetExhausted, asked: 1, sessions: 1, granted: []bool{false}},
		{name: "max_extensions 0: never asked", second: finishes, answer: true, max: 0, wantErr: ErrBudgetExhausted, asked: 0, sessions: 1},
		{name: "one extension, then exhausted for good", second: overruns, answer: true, max: 1, wantErr: ErrBudgetExhausted, asked: 1, sessions: 2, granted: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {budgetScript, tt.second}})
			f.cfg.ContextWindow = 1_000_000
			f.cfg.StopGrace = config.Duration(3 * time.Second)
			f.cfg.Budget.Phase.Tokens = 100_000
			f.cfg.Budget.MaxExtensions = tt.max
			var (
				mu   sync.Mutex
				reqs []ExtendRequest
			)
			opts := f.options()
			opts.Extend = func(_ context.Context, req ExtendRequest) bool {
				mu.Lock()
				defer mu.Unlock()
				reqs = append(reqs, req)
				return tt.answer
			}
			err := Run(context.Background(), opts)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("run: %v, want %v\n%s", err, tt.wantErr, f.log)
			}
			if len(reqs) != tt.asked {
				t.Fatalf("asked %d times, want %d: %+v", len(reqs), tt.asked, reqs)
			}
			if tt.asked > 0 {
				r := reqs[0]
				if r.Phase != "1" || r.Scope != "phase" || !strings.HasPrefix(r.Spent, "tokens 10") || !strings.HasSuffix(r.Spent, "of 100K") ||
					r.By != "tokens 100K" || r.N != 1 || r.Max != tt.max {
					t.Errorf("request %+v", r)
				}
			}
			p := f.lastRun().Phase("1")
			if p.Sessions != tt.sessions {
				t.Errorf("sessions = %d, want %d", p.Sessions, tt.sessions)
			}
			var granted []bool
			for _, ev := range f.eventRecords() {
				if ev["event"] == "budget_extension" {
					granted = append(granted, ev["granted"] == true)
				}
			}
			if fmt.Sprint(granted) != fmt.Sprint(tt.granted) {
				t.Errorf("budget_extension granted %v, want %v", granted, tt.granted)
			}
			e := p.Economics
			if ext := len(tt.granted) > 0 && tt.granted[0]; ext {
				if e.Extensions != 1 || e.Limits.Tokens != 200_000 {
					t.Errorf("economics after an extension: %+v", e)
				}
				contains(t, "session 2 prompt", f.prompt("1", 2), []string{"(resumed)", "phase budget ran out (tokens 10", "the user extended it"})
			} else if e.Extensions != 0 || e.Limits.Tokens != 100_000 {
				t.Errorf("economics without an extension: %+v", e)
			}
			if tt.wantErr == nil && p.Status != state.StatusCompleted {
				t.Errorf("status %s, want completed", p.Status)
			}
		})
	}
}

// eventRecords are the last run's events, whole.
func (f *fixture) eventRecords() []map[string]any {
	f.t.Helper()
	data := readFile(f.t, f.store.EventsPath(f.lastRun().ID))
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			f.t.Fatalf("event %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// A resumed phase's budget counts what its earlier run spent: a strict
// budget that ran out stays spent (no session starts) until it is raised.
func TestBudgetCountsEarlierRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{
		"1": {budgetScript, {"write e.txt", "done", "result"}},
		"2": {{"done", "result"}},
	}, phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	f.cfg.ContextWindow = 1_000_000 // no context restart
	f.cfg.StopGrace = config.Duration(3 * time.Second)
	f.cfg.Budget.Phase.Tokens = 100_000
	if err := f.run(context.Background()); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("run 1: %v, want the budget exhausted\n%s", err, f.log)
	}
	spent := f.lastRun().Phase("1").Tokens

	err := f.run(context.Background())
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("rerun with the same budget: %v, want the budget still exhausted\n%s", err, f.log)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 2)); err == nil {
		t.Error("the rerun started a session on a spent budget")
	}
	// The rerun spent nothing: its record says so, and the phase's figure
	// across runs is the earlier run's.
	if p := f.lastRun().Phase("1"); p.Tokens != 0 || p.PhaseTokens() != spent || p.Economics == nil || p.Economics.UsedPct < 100 {
		t.Errorf("rerun's phase 1: tokens %d (want 0), across runs %d (want the earlier %d), economics %+v", p.Tokens, p.PhaseTokens(), spent, p.Economics)
	}

	f.cfg.Budget.Phase.Tokens = 300_000
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun with a raised budget: %v\n%s", err, f.log)
	}
	if p := f.lastRun().Phase("1"); p.Status != state.StatusCompleted || p.Economics.Tokens <= spent {
		t.Errorf("phase 1 after raising: status %s, budget counted %d tokens (earlier run %d)", p.Status, p.Economics.Tokens, spent)
	}
}
