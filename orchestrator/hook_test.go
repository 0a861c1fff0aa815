package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// installPreCommit gives the fixture's repository a pre-commit hook that
// refuses every commit until fixed.txt exists, the way a user's linter or
// secret scanner refuses a commit.
func (f *fixture) installPreCommit() {
	f.t.Helper()
	hook := filepath.Join(f.root, ".git", "hooks", "pre-commit")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		f.t.Fatal(err)
	}
	script := "#!/bin/sh\ntest -f fixed.txt && exit 0\necho 'HOOK-SAYS-NO: add fixed.txt' >&2\nexit 1\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// A hook that refuses debussy's commit loses nothing: the work stays in the
// tree, and the next session hears the hook's output — as a remediation
// when the refused commit was the phase's last, in the checkpoint prompt
// when it was a restart's.
func TestHookRejection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		script     script
		wantPrompt []string
		wantLog    string
	}{
		{
			name:       "at completion it is a remediation",
			script:     script{"1": {{"write a.txt", "done", "result"}, {"write fixed.txt", "done", "result"}}},
			wantPrompt: []string{"Remediation 1/1", "rejected by the repository's pre-commit hook (exit status 1)", "HOOK-SAYS-NO: add fixed.txt"},
			wantLog:    "pre-commit hook rejected the commit",
		},
		{
			name:       "at a restart it is in the checkpoint prompt",
			script:     script{"1": {{"write a.txt", "usage 60000"}, {"write fixed.txt", "done", "result"}}},
			wantPrompt: []string{"# The last commit was rejected", "HOOK-SAYS-NO: add fixed.txt", "# Checkpoint"},
			wantLog:    "restarting the session from a checkpoint",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.script)
			f.installPreCommit()
			if err := f.run(context.Background()); err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			p := f.prompt("1", 2)
			for _, want := range tt.wantPrompt {
				if !strings.Contains(p, want) {
					t.Errorf("second prompt lacks %q:\n%s", want, p)
				}
			}
			if n := strings.Count(p, "HOOK-SAYS-NO"); n != 1 {
				t.Errorf("second prompt has the hook's output %d times, want once", n)
			}
			log := f.log.String()
			for _, want := range []string{"commit rejected by a hook", tt.wantLog} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
			if got := f.lastRun().Phase("1").Status; got != state.StatusCompleted {
				t.Errorf("phase status = %s, want completed", got)
			}
			// The refused commits never happened; the one that passed
			// the hook holds all the work, the first session's included.
			if got := f.events(); !slices.Equal(got, []string{"completed"}) {
				t.Errorf("commit events = %v, want [completed]", got)
			}
			files := f.tracked()
			for _, want := range []string{"a.txt", "fixed.txt"} {
				if !slices.Contains(files, want) {
					t.Errorf("HEAD lacks %s: %v", want, files)
				}
			}
		})
	}
}
