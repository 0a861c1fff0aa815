package tests

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Git as the ledger across machines: phase 1 completes here (--only 1);
// a fresh clone without .debussy/ reads its outcome from the commit
// trailers — status shows it completed at its commit, the matrix lists
// exactly the phases it unblocked, --only refuses a phase whose
// dependencies are not done, and a run there does not run phase 1 again.
func TestGitLedgerAcrossClones(t *testing.T) {
	claudetest.OncePerSuite(t, "the ledger in git trailers across clones")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat a.txt > b.txt && debussy done --phase 2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}},
		{ID: "2", Title: "Beta", Deps: []string{"1"}, Gates: []string{"copied: `grep -q alpha b.txt`"}},
		{ID: "3", Title: "Gamma", Deps: []string{"1"}},
		{ID: "4", Title: "Delta", Deps: []string{"2", "3"}},
	}, "")
	if r := h.run("run", "plan/MASTER_PLAN.md", "--only", "1"); r.Code != 0 {
		t.Fatalf("--only 1: %s", r)
	}
	completed := h.git("rev-parse", "HEAD")
	if ev := h.git("log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)"); ev != "completed" {
		t.Fatalf("HEAD's Debussy-Event %q", ev)
	}

	// Another machine: a fresh clone, no .debussy/.
	clone := filepath.Join(t.TempDir(), "clone")
	claudetest.Git(t, t.TempDir(), "clone", "-q", h.Repo, clone)
	claudetest.Git(t, clone, "config", "user.name", "Other Machine")
	claudetest.Git(t, clone, "config", "user.email", "other@debussy.invalid")
	c := *h
	c.Repo = clone
	if c.exists(".debussy") {
		t.Fatal("the clone has .debussy/")
	}

	st := c.status()
	phases, _ := st["phases"].([]any)
	if st["source"] != "git" || len(phases) != 4 {
		t.Fatalf("status --json in the clone: %v", st)
	}
	p1 := phases[0].(map[string]any)
	if commits, _ := p1["commits"].([]any); p1["id"] != "1" || p1["status"] != "completed" || len(commits) != 1 || commits[0] != completed {
		t.Errorf("phase 1 in the clone: %v, want completed at %s", p1, completed)
	}
	if p2 := phases[1].(map[string]any); p2["status"] != "pending" {
		t.Errorf("phase 2 in the clone: %v", p2)
	}

	if r := c.run("matrix", "plan/MASTER_PLAN.md"); r.Code != 0 ||
		r.Stdout != `{"include":[{"phase":"2","title":"Beta"},{"phase":"3","title":"Gamma"}]}`+"\n" {
		t.Errorf("matrix after phase 1: %s", r)
	}
	r := c.run("run", "plan/MASTER_PLAN.md", "--only", "4")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--only 4 depends on unfinished phases 2, 3") {
		t.Errorf("--only 4 with 2 and 3 not done: %s", r)
	}
	if r := c.run("run", "plan/MASTER_PLAN.md", "--only", "9"); r.Code != 2 || !strings.Contains(r.Stderr, "its phases are 1, 2, 3, 4") {
		t.Errorf("--only 9: %s", r)
	}

	r = c.run("run", "plan/MASTER_PLAN.md", "--only", "2")
	if r.Code != 0 {
		t.Fatalf("--only 2 in the clone: %s", r)
	}
	if !strings.Contains(r.Stderr, "completed at "+completed[:7]+" (per git)") {
		t.Errorf("phase 1 not skipped per git:\n%s", r.Stderr)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("phase 1 ran %d sessions in all, want 1 (not again in the clone)", n)
	}
	if r := c.run("matrix", "plan/MASTER_PLAN.md"); r.Stdout != `{"include":[{"phase":"3","title":"Gamma"}]}`+"\n" {
		t.Errorf("matrix after phase 2: %s", r)
	}
	if st := c.git("status", "--porcelain"); st != "" {
		t.Errorf("clone not clean: %q", st)
	}
}
