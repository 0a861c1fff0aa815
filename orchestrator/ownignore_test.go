package orchestrator

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/state"
)

// The quick start in a repository that tracks .gitignore: `debussy init`
// appends debussy's ignore line, and the run (and its dry run) accept that
// change — its first commit takes it in. Any other change to .gitignore is
// still refused as uncommitted.
func TestRunAcceptsOwnIgnoreLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		head     string // .gitignore committed ("" : none)
		work     string // .gitignore in the work tree
		accepted bool
	}{
		{"init's lines appended", "node_modules/\n", "node_modules/\n" + state.IgnoreLines, true},
		{"after a last line with no newline", "node_modules/", "node_modules/\n" + state.IgnoreLines, true},
		{"the bare line", "*.log\n", "*.log\n/.debussy\n", true},
		{"with CRLF line endings", "*.log\r\n", "*.log\r\n.debussy/\r\n", true},
		{"a new .gitignore is untracked (yours, left out)", "", state.IgnoreLines, true},
		{"another line too", "node_modules/\n", "node_modules/\n" + state.IgnoreLines + "dist/\n", false},
		{"a comment only", "node_modules/\n", "node_modules/\n# debussy\n", false},
		{"a line changed", "node_modules/\n", "vendor/\n" + state.IgnoreLines, false},
		{"glued to the last line", "node_modules/", "node_modules/.debussy/\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {{"write one.txt", "done", "result"}}})
			if tt.head != "" {
				f.write(".gitignore", tt.head)
				if _, err := f.repo.CommitAll(context.Background(), "track .gitignore\n"); err != nil {
					t.Fatal(err)
				}
			}
			f.write(".gitignore", tt.work)

			_, perr := Check(f.options())
			err := f.run(context.Background())
			if !tt.accepted {
				if !errors.Is(perr, ErrDirty) || !errors.Is(err, ErrDirty) {
					t.Fatalf("dry run: %v; run: %v; want both refused as dirty", perr, err)
				}
				return
			}
			if perr != nil || err != nil {
				t.Fatalf("dry run: %v; run: %v\n%s", perr, err, f.log)
			}
			if tt.head == "" {
				return
			}
			c, err := f.repo.ReadCommit(f.lastRun().Phase("1").Commits[0])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(c.Changes, func(ch gitcommit.Change) bool { return ch.Path == ".gitignore" }) {
				t.Errorf("the first commit %q does not take the .gitignore line in: %+v", c.Subject, c.Changes)
			}
		})
	}
}
