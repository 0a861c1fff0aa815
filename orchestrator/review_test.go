package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
)

// econRun is an orun with just what a phase needs of it (its record on
// its own goroutine, the spend account, the sessions' launcher), for
// tests that build a phase by hand.
func econRun(t *testing.T, cfg config.Config) *orun {
	t.Helper()
	store := state.New(filepath.Join(t.TempDir(), state.DirName))
	now := time.Now()
	r := &orun{cfg: cfg, id: "r", log: slog.New(slog.DiscardHandler), now: func() time.Time { return now },
		ledger: &state.Ledger{}, run: &state.Run{ID: "r"}, spend: spend.New(cfg.Budget, now)}
	r.Store = store
	r.rec = recorder.Start(recorder.Options{Store: store, Ledger: r.ledger, Run: r.run, Now: r.now})
	t.Cleanup(func() { _ = r.rec.Close() })
	r.launch = &launcher{cfg: cfg, store: store, run: r.id, answers: &r.answers, reached: &r.reached, log: r.log}
	return r
}

// Under a strict budget's wrap-up (above 95 %) the agent is told to write
// its handoff while every other tool is refused. It must be told where
// (else its write lands elsewhere and is refused too), and what it wrote
// must reach the session that goes on: after an extension, or the rerun
// that resumes the exhausted phase.
func TestBudgetWrapUpHandoff(t *testing.T) {
	first := []string{
		"usage 70000", "usage 1000", "write a.txt", // 72K: the 70 % note
		"usage 19000", "usage 1000", // 92K: firm
		"usage 3000",              // 95K and the output: wrap up
		"usage 1000",              // 96K
		"progress wrapping up",    // 97K: its PostToolUse carries the wrap-up note
		"handoff WRAPUP-MARKER-7", // 98K: the handoff, where the note said
		"usage 3000",              // 101K: exhausted
		"write c.txt",             // its PostToolUse stops the session
		"done", "result",
	}
	finish := []string{"write e.txt", "done", "result"}
	tests := []struct {
		name   string
		extend bool
	}{
		{"extended: the next session starts from the handoff", true},
		{"exhausted: the rerun resumes from the handoff", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {first, finish}})
			f.cfg.ContextWindow = 1_000_000
			f.cfg.StopGrace = config.Duration(3 * time.Second)
			f.cfg.Budget.Phase.Tokens = 100_000
			f.cfg.Budget.MaxExtensions = 1
			opts := f.options()
			if tt.extend {
				opts.Extend = func(context.Context, ExtendRequest) bool { return true }
			}
			err := Run(context.Background(), opts)
			hooks := f.hooks(1)
			for _, line := range strings.Split(hooks, "\n") {
				if strings.HasPrefix(line, "pre Write deny") {
					t.Fatalf("a Write was refused during the wrap-up (the handoff?): %s\n%s", line, hooks)
				}
			}
			if !tt.extend {
				if !errors.Is(err, ErrBudgetExhausted) {
					t.Fatalf("run: %v\n%s", err, f.log)
				}
				opts.Config.Budget.Phase.Tokens = 1_000_000
				err = Run(context.Background(), opts)
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			if p := f.prompt("1", 2); !strings.Contains(p, "WRAPUP-MARKER-7") {
				t.Fatalf("session 2's prompt lacks the handoff:\n%s\nhooks:\n%s", p, hooks)
			}
		})
	}
}

// Two parallel phases stopped by the shared plan budget both come to ask
// for its extension. One extension is one: the user's yes raises the plan
// once (max_extensions counts it), and a phase whose question comes after
// that raise — or while it is pending — goes on without a second one.
func TestParallelPlanExtension(t *testing.T) {
	s := script{
		// Phase 1 spends 62K, phase 2 then 45K: the plan's 100K is spent
		// on phase 2's call and phase 1 is stopped at its next one, unless
		// the extension came first.
		"1": {{"touch p1", "await p2", "usage 60000", "usage 1000", "write a.txt", "touch a1", "await b1", "usage 1000", "write c.txt", "done", "result"},
			{"done", "result"}},
		"2": {{"touch p2", "await p1", "await a1", "usage 45000", "marktool b1", "write d.txt", "done", "result"},
			{"done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	f.cfg.ContextWindow = 1_000_000
	f.cfg.StopGrace = config.Duration(3 * time.Second)
	f.cfg.Budget.Plan.Tokens = 100_000
	f.cfg.Budget.MaxExtensions = 1
	var (
		mu   sync.Mutex
		asks int
	)
	opts := f.options()
	opts.Extend = func(context.Context, ExtendRequest) bool {
		mu.Lock()
		defer mu.Unlock()
		asks++
		return true
	}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	run := f.lastRun()
	if e := run.Economics; e == nil || e.Extensions != 1 || e.Limits.Tokens != 200_000 {
		t.Fatalf("run economics %+v, want one extension to 200K (asked %d times)", e, asks)
	}
	for _, p := range run.Phases {
		// Phase 1 may not need its second session: the plan may have
		// been extended before its next call was counted.
		if p.Status != state.StatusCompleted {
			t.Errorf("phase %s: %s after %d sessions, want completed", p.ID, p.Status, p.Sessions)
		}
	}
}

// A failing gate's or a refusing hook's output may print a secret (a
// secret scanner quotes what it found). The prompts were redacted; the
// events file, the ledger and the log — often a public CI log — are
// written too and must not carry it either.
func TestOutputRedacted(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ"
	tests := []struct {
		name  string
		gate  string
		hook  bool
		steps []string
	}{
		{name: "a failing gate", gate: "t=ghp_0123456789; echo found ${t}abcdefghijABCDEFGHIJ in config.txt; exit 1", steps: []string{"write a.txt", "done", "result"}},
		{name: "a refusing hook", hook: true, steps: []string{"write a.txt", "done", "result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ps := phaseSpec{id: "1"}
			if tt.gate != "" {
				ps.gates = []plans.Gate{{Name: "scan", Command: tt.gate}}
			}
			f := newFixture(t, script{"1": {tt.steps, tt.steps}}, ps)
			f.cfg.MaxRetries = 0
			if tt.hook {
				hook := filepath.Join(f.root, ".git", "hooks", "pre-commit")
				if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'leak: "+secret+"' >&2\nexit 1\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_ = f.run(context.Background())
			files := map[string]string{"log": f.log.String(), "summary": f.out.String(),
				"events": readFile(t, f.store.EventsPath(f.lastRun().ID)),
				"ledger": readFile(t, filepath.Join(f.store.Dir, "state.json"))}
			for name, text := range files {
				if strings.Contains(text, secret) {
					t.Errorf("the %s carries the secret:\n%s", name, text)
				}
			}
			if !strings.Contains(files["events"], "[redacted]") {
				t.Errorf("the events do not show the output redacted:\n%s", files["events"])
			}
		})
	}
}

// Asked for its handoff while the budget refuses exploration, the agent
// hears one thing: write the handoff now. The budget's "finish the current
// task" contradicted it, and the refusals it made did not count toward
// handoff_grace_calls.
func TestHandoffUnderBudgetRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {
		{"usage 55000", "usage 100", "read README.md", "handoff HANDOFF-MARKER-3", "write late.txt"},
		{"done", "result"},
	}})
	f.cfg.Handoff = true
	f.cfg.Budget.Phase.Tokens = 60_000 // 55K is 92 %: exploration refused
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	hooks := f.hooks(1)
	if !strings.Contains(hooks, "pre Read deny: debussy: context") || strings.Contains(hooks, "pre Read deny: debussy (phase budget)") {
		t.Fatalf("the read was not refused with the handoff request:\n%s", hooks)
	}
	if p := f.prompt("1", 2); !strings.Contains(p, "HANDOFF-MARKER-3") {
		t.Fatalf("session 2's prompt lacks the handoff:\n%s", p)
	}
}
