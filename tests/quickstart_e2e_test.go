package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The quick start in a repository that tracks .gitignore: `debussy init`
// adds debussy's line to it, and the next step, `debussy run`, goes ahead
// (it refused "uncommitted changes to tracked files: .gitignore"); the
// phase's commit takes the line in and the tree ends clean.
func TestQuickStartTrackedGitignore(t *testing.T) {
	claudetest.OncePerSuite(t, "init then run in a repository that tracks .gitignore")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "alpha\n")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}}}, "")
	h.write(".gitignore", "node_modules/\n")
	h.git("commit", "-q", "-am", "the project's own .gitignore")

	if r := h.run("init"); r.Code != 0 || !strings.Contains(r.Stdout, "added .debussy/") {
		t.Fatalf("init: %s", r)
	}
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("run after init: %s", r)
	}
	if files := h.git("show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, ".gitignore") || !strings.Contains(files, "a.txt") {
		t.Errorf("the phase's commit does not take in .gitignore and the work: %q", files)
	}
	if st := h.git("status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(st) != "" {
		t.Errorf("tracked files left changed: %q", st)
	}
}
