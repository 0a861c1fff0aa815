package orchestrator

import (
	"context"
	"sync"
	"testing"
)

// TestProgress: the live view hears every session of a phase, its context
// as it grows, each session's end, and the restart between them.
func TestProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "usage 60000"}, {"write b.txt", "done", "result"}}})
	var (
		mu  sync.Mutex
		got []Progress
	)
	opts := f.options()
	opts.Progress = func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	ended := map[int]bool{}
	var maxTokens int64
	for _, p := range got {
		if p.Phase != "1" || p.Title != "Phase 1: Step 1" || p.Started.IsZero() {
			t.Fatalf("progress %+v: want phase 1 with its title and start", p)
		}
		if p.Ended {
			if ended[p.Session] {
				t.Errorf("session %d ended twice", p.Session)
			}
			ended[p.Session] = true
			continue
		}
		if ended[p.Session] {
			t.Errorf("session %d reported after its end", p.Session)
		}
		if p.Session == 1 {
			maxTokens = max(maxTokens, p.Snapshot.Tokens)
		}
		if p.Session == 2 && p.Restarts != 1 {
			t.Errorf("session 2 reports %d restarts, want 1", p.Restarts)
		}
	}
	if !ended[1] || !ended[2] {
		t.Errorf("ended sessions = %v, want 1 and 2", ended)
	}
	if maxTokens < 60000 {
		t.Errorf("session 1's context peaked at %d tokens, want the scripted 60000", maxTokens)
	}
}

// TestProgressLive: before the session ends, the live view has the
// running session's tokens and cost, what the agent is doing and where the
// phase stands in its budget.
func TestProgressLive(t *testing.T) {
	t.Parallel()
	// Each step is one API call at the context of the last usage: 52K at
	// the write, 80K (the note) after it.
	f := newFixture(t, script{"1": {{"read README.md", "usage 50000", "usage 1000", "write a.txt", "usage 28000", "usage 1000", "done", "result"}}})
	f.cfg.ContextWindow = 1_000_000
	f.cfg.Budget.Phase.Tokens = 100_000
	f.cfg.Budget.Enforcement = "advisory"
	var (
		mu  sync.Mutex
		got []Progress
	)
	opts := f.options()
	opts.Progress = func(p Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	var explored, acted, noted bool
	for _, p := range got {
		if p.Ended {
			continue
		}
		if p.Budget == nil || p.Budget.Scope != "phase" || p.Budget.Dimension != "tokens" {
			t.Fatalf("progress %+v: want the phase's token budget", p)
		}
		explored = explored || p.Activity == "exploring"
		acted = acted || p.Activity == "acting"
		if p.Budget.Level == "note" {
			noted = true
			if p.Tokens < 80_000 || p.CostUSD <= 0 || p.Budget.UsedPct < 80 {
				t.Errorf("at the note: tokens %d, cost %.4f, used %.1f %%: want the running session's spend", p.Tokens, p.CostUSD, p.Budget.UsedPct)
			}
		}
	}
	if !explored || !acted || !noted {
		t.Errorf("exploring %v, acting %v, note level %v: want all seen live", explored, acted, noted)
	}
}
