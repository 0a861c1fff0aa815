package orchestrator

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/plans"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// trailers maps the Debussy-* trailers of a commit message, read the git way.
func trailers(msg string) map[string]string {
	out := map[string]string{}
	for _, t := range gitcommit.ParseTrailers(msg) {
		out[t.Key] = t.Value
	}
	return out
}

// Every phase end is a commit whose trailers say how it ended, even when
// the tree is clean; the reason is one redacted line.
func TestOutcomeCommits(t *testing.T) {
	tests := []struct {
		name       string
		script     script
		phases     []phaseSpec
		cfg        func(*config.Config)
		want       map[string]string // trailers of the last commit
		reason     []string          // in Debussy-Reason
		notInMsg   string
		emptyFinal bool // the last commit changes no file
	}{
		{
			name:   "completed on a clean tree is an empty commit",
			script: script{"1": {{"done", "result"}}},
			want: map[string]string{"Debussy-Event": "completed", "Debussy-Phase": "1", "Debussy-Plan": "plan/MASTER_PLAN.md",
				"Debussy-Sessions": "1", "Debussy-Restarts": "0"},
			emptyFinal: true,
		},
		{
			name:     "blocked carries the agent's reason, redacted",
			script:   script{"1": {{"write a.txt", "done blocked needs API_KEY=hunter2hunter2 to reach staging", "result"}}},
			want:     map[string]string{"Debussy-Event": "blocked", "Debussy-Sessions": "1", "Debussy-Restarts": "0"},
			reason:   []string{"phase 1 was blocked", "API_KEY=[redacted]", "to reach staging"},
			notInMsg: "hunter2",
		},
		{
			name:   "max restarts exceeded counts sessions and restarts",
			script: script{"1": {{"write a.txt", "usage 60000"}, {"write b.txt", "usage 60000"}}},
			cfg:    func(c *config.Config) { c.MaxRestarts = 1 },
			want:   map[string]string{"Debussy-Event": "failed", "Debussy-Sessions": "2", "Debussy-Restarts": "1"},
			reason: []string{"max restarts (1) exceeded"},
		},
		{
			// The gate's command and output hold values of shapes no rule
			// knows, under neutral names: none reaches the pushed message.
			name:   "a failing gate is named by ordinal, name and exit code, not command or output",
			script: script{"1": {{"write a.txt", "done", "result"}}},
			phases: []phaseSpec{{id: "1", gates: []plans.Gate{{Name: "ok", Command: "true"},
				{Name: "check", Command: "echo build=Zq81mXv0LpWr; echo ticket=Hq3Tn8Rw2Ys && exit 3"}}}},
			cfg:      func(c *config.Config) { c.MaxRetries = 0 },
			want:     map[string]string{"Debussy-Event": "failed"},
			reason:   []string{`gate 2 "check" failed (exit 3)`},
			notInMsg: "Zq81mXv0LpWr|Hq3Tn8Rw2Ys|echo",
		},
		{
			name:       "failed without work to commit is recorded too",
			script:     script{"1": {{"result"}}},
			want:       map[string]string{"Debussy-Event": "failed", "Debussy-Sessions": "2"},
			reason:     []string{"without `debussy done`"},
			emptyFinal: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.script, tt.phases...)
			if tt.cfg != nil {
				tt.cfg(&f.cfg)
			}
			_ = f.run(context.Background())
			commits := f.commits()
			if len(commits) == 0 {
				t.Fatalf("no commit\n%s", f.log)
			}
			last := commits[len(commits)-1]
			got := trailers(last.Message)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q\n%s", k, got[k], v, last.Message)
				}
			}
			for _, want := range tt.reason {
				if !strings.Contains(got["Debussy-Reason"], want) {
					t.Errorf("Debussy-Reason %q lacks %q", got["Debussy-Reason"], want)
				}
			}
			for _, leak := range strings.Split(tt.notInMsg, "|") {
				for _, c := range commits {
					if leak != "" && strings.Contains(c.Message, leak) {
						t.Errorf("a commit message leaks %q:\n%s", leak, c.Message)
					}
				}
			}
			if tt.emptyFinal {
				parent, err := last.Parent(0)
				if err != nil {
					t.Fatal(err)
				}
				if parent.TreeHash != last.TreeHash {
					t.Error("the final commit changed the tree")
				}
			}
		})
	}
}

// A clone without .debussy/ skips what git says is completed, and --only
// runs one phase whose dependencies git says are done.
func TestGitLedgerSelection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{
		"1": {{"write one.txt", "done", "result"}},
		"2": {{"done blocked no access", "result"}, {"write two.txt", "done", "result"}},
		"3": {{"write three.txt", "done", "result"}},
	}, phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}}, phaseSpec{id: "3", deps: []string{"1"}})
	opts := f.options()
	opts.Only = "2"
	if err := Run(context.Background(), opts); err == nil || !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "unfinished phase 1") {
		t.Fatalf("--only 2 before phase 1: %v", err)
	}
	if err := f.run(context.Background()); !errors.Is(err, ErrBlocked) {
		t.Fatalf("first run: %v\n%s", err, f.log)
	}
	// As in a fresh clone: no .debussy/.
	if err := os.RemoveAll(f.store.Dir); err != nil {
		t.Fatal(err)
	}
	f.log.Reset()
	opts = f.options()
	opts.Only = "2"
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("--only 2: %v\n%s", err, f.log)
	}
	if !strings.Contains(f.log.String(), "(per git)") {
		t.Errorf("phase 1 not skipped per git:\n%s", f.log)
	}
	f.prompt("2", 2)
	if _, err := os.Stat(promptPath(f.script, "1", 2)); err == nil {
		t.Error("phase 1 ran again")
	}
	if _, err := os.Stat(promptPath(f.script, "3", 1)); err == nil {
		t.Error("--only 2 ran phase 3")
	}
	run := f.lastRun()
	if got := []state.Status{run.Phase("1").Status, run.Phase("2").Status, run.Phase("3").Status}; got[0] != state.StatusSkipped ||
		got[1] != state.StatusCompleted || got[2] != state.StatusPending {
		t.Errorf("statuses %q", got)
	}
}
