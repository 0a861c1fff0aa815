package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// Another git process holding .git/index.lock when a phase ends: a
// short hold is waited out and the phase commits; one that outlasts
// lockWait fails the phase saying so (never "completed" with its work
// left uncommitted, which the next phase's commit would sweep up and a
// clone would redo), the work stays in the tree and the rerun commits it as
// the agent's, not as a file the user had when the rerun started.
func TestCommitWaitsForGitLock(t *testing.T) {
	// Not parallel: lockWait is the package's.
	defer func(d time.Duration) { lockWait = d }(lockWait)
	tests := []struct {
		name string
		hold time.Duration // 0: until the run ends
		wait time.Duration
	}{
		{name: "released", hold: 500 * time.Millisecond, wait: 20 * time.Second},
		{name: "held", wait: 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lockWait = tt.wait
			f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}, "2": {{"done", "result"}}},
				phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
			lock := filepath.Join(f.root, ".git", "index.lock")
			opts := f.options()
			onTool(&opts, "a.txt", func() {
				if err := os.WriteFile(lock, nil, 0o644); err != nil {
					t.Error(err)
				}
			})
			if tt.hold > 0 {
				// The other git process finishes while debussy waits.
				inner := opts.Logger.Handler()
				opts.Logger = slog.New(hookHandler{inner, func(r slog.Record) {
					if strings.HasPrefix(r.Message, "a git process holds the repository's lock") {
						time.AfterFunc(tt.hold, func() { _ = os.Remove(lock) })
					}
				}})
			}
			err := Run(context.Background(), opts)
			if tt.hold > 0 {
				if err != nil {
					t.Fatalf("run: %v\n%s", err, f.log)
				}
				if !slices.Contains(f.tracked(), "a.txt") || !strings.Contains(f.log.String(), "waiting for it to finish") {
					t.Errorf("the commit did not wait for the lock:\n%s", f.log)
				}
				return
			}
			if !errors.Is(err, ErrPhaseFailed) || !strings.Contains(err.Error(), "could not be committed") || !strings.Contains(err.Error(), "index.lock") {
				t.Fatalf("run: %v, want phase 1 failed because its work could not be committed\n%s", err, f.log)
			}
			if p := f.lastRun().Phase("1"); p.Status != state.StatusFailed {
				t.Errorf("phase 1 is %s, want failed", p.Status)
			}
			if p := f.lastRun().Phase("2"); p.Status != state.StatusPending {
				t.Errorf("phase 2 is %s, want pending (not run on uncommitted work)", p.Status)
			}
			if slices.Contains(f.tracked(), "a.txt") {
				t.Error("a.txt committed although the index was locked")
			}
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			f.write("mine.txt", "written by the user after the run\n") // the user's: not written while a run ran
			if err := f.run(context.Background()); err != nil {
				t.Fatalf("rerun: %v\n%s", err, f.log)
			}
			if slices.Contains(f.tracked(), "mine.txt") {
				t.Error("the rerun committed the user's mine.txt")
			}
			if !slices.Contains(f.tracked(), "a.txt") {
				t.Errorf("the rerun did not commit a.txt:\n%s", f.log)
			}
		})
	}
}

// A file the user writes while a run runs, and leaves untracked, stays
// theirs: only a run whose phase could not commit its work hands its
// leftovers to the next run.
func TestUserFileWrittenDuringARunStaysOut(t *testing.T) {
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}, "2": {{"write b.txt", "done", "result"}}},
		phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	opts := f.options()
	opts.Only = "1"
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	first := f.lastRun()
	f.write("mine.txt", "the user's notes\n")
	during := first.StartedAt.Add(first.EndedAt.Sub(first.StartedAt) / 2)
	if err := os.Chtimes(filepath.Join(f.root, "mine.txt"), during, during); err != nil {
		t.Fatal(err)
	}
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("second run: %v\n%s", err, f.log)
	}
	if !slices.Contains(f.tracked(), "b.txt") {
		t.Fatalf("phase 2 did not run:\n%s", f.log)
	}
	if slices.Contains(f.tracked(), "mine.txt") {
		t.Error("the second run committed mine.txt, written by the user while the first ran")
	}
}

// A --parallel phase's merge into the user's branch waits out a git
// process holding the main checkout's index.lock, as every commit does,
// instead of failing the phase as a conflict.
func TestParallelMergeWaitsForGitLock(t *testing.T) {
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}, "2": {{"write b.txt", "done", "result"}}},
		phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	lock := filepath.Join(f.root, ".git", "index.lock")
	opts := f.options()
	onTool(&opts, "a.txt", func() {
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Error(err)
		}
	})
	inner := opts.Logger.Handler()
	opts.Logger = slog.New(hookHandler{inner, func(r slog.Record) {
		if strings.HasPrefix(r.Message, "a git process holds the repository's lock") {
			time.AfterFunc(300*time.Millisecond, func() { _ = os.Remove(lock) })
		}
	}})
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	if tracked := f.tracked(); !slices.Contains(tracked, "a.txt") || !slices.Contains(tracked, "b.txt") {
		t.Errorf("both phases' work should be merged, tracked: %v\n%s", tracked, f.log)
	}
}
