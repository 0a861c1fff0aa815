package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// --parallel 2 with the real CLI: phase 1 changes the first and the last
// line of shared.txt, phase 2 the middle one, one unchanged line apart. git
// merges that; debussy's own line merge (without git) would call it a
// conflict, since phase 1's change surrounds phase 2's. With git installed
// the run merges both, and the merge commits hold exactly the trees `git
// merge-tree` makes of their parents.
func TestParallelNearbyEditsMergeByGitE2E(t *testing.T) {
	claudetest.OncePerSuite(t, "parallel phases' nearby edits merged by git")
	script := twoParallelPhases(t,
		"sed -i -e '1s/.*/alpha = 2/' -e '5s/.*/echo = 2/' shared.txt",
		"sed -i '3s/.*/charlie = 2/' shared.txt")
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "One"}, {ID: "2", Title: "Two"}}, "")
	h.write("shared.txt", "alpha = 1\nbravo = 1\ncharlie = 1\ndelta = 1\necho = 1\n")
	h.git("add", "shared.txt")
	h.git("commit", "-q", "-m", "shared")

	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 0 {
		t.Fatalf("run: %s", r)
	}
	if got, want := h.git("show", "HEAD:shared.txt"), "alpha = 2\nbravo = 1\ncharlie = 2\ndelta = 1\necho = 2"; got != want {
		t.Errorf("shared.txt = %q, want %q", got, want)
	}
	merges := strings.Fields(h.git("rev-list", "--merges", "HEAD"))
	if len(merges) != 2 {
		t.Fatalf("%d merge commits, want 2", len(merges))
	}
	for _, m := range merges {
		want := h.git("merge-tree", "--write-tree", m+"^1", m+"^2")
		if got := h.git("rev-parse", m+"^{tree}"); got != want {
			t.Errorf("merge %s holds tree %s, git merge-tree makes %s", m, got, want)
		}
	}
	if st := h.git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("tracked tree not clean: %q", st)
	}
	h.noOrphans()
}

// twoParallelPhases is the script of phases 1 and 2 run at the same time:
// each meets the other in a tool, then runs its command and signals done.
func twoParallelPhases(t *testing.T, cmd1, cmd2 string) fakeapi.Script {
	marks := marksDir(t)
	phase := func(id, other, cmd string) fakeapi.Conversation {
		return fakeapi.Conversation{Name: "p" + id, Match: phaseMatch(id), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(rendezvous(marks, "p"+id, "p"+other))),
			turn(21000, fakeapi.Bash(cmd+" && debussy done --phase "+id)),
			turn(22000, fakeapi.Text("Phase "+id+" done.")),
		}}
	}
	return fakeapi.Script{Conversations: []fakeapi.Conversation{phase("1", "2", cmd1), phase("2", "1", cmd2)}}
}
