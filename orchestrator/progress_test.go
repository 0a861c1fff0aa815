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
