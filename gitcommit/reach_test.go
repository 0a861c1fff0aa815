package gitcommit

import "testing"

// After a reset past a commit it is no longer reachable; a merged branch's
// commits are, through the merge's second parent.
func TestReachable(t *testing.T) {
	dir := newRepo(t)
	repo := mustOpen(t, dir)
	if got, err := repo.Reachable("0123456789abcdef0123456789abcdef01234567"); err != nil || got["0123456789abcdef0123456789abcdef01234567"] {
		t.Fatalf("on an unborn branch: %v, %v", got, err)
	}
	writeFiles(t, dir, map[string]string{"a": "1"})
	a := mustCommitAll(t, dir, "a").Hash
	writeFiles(t, dir, map[string]string{"b": "1"})
	b := mustCommitAll(t, dir, "b").Hash
	runGit(t, dir, "checkout", "-q", "-b", "side", a)
	writeFiles(t, dir, map[string]string{"c": "1"})
	c := mustCommitAll(t, dir, "c").Hash
	runGit(t, dir, "checkout", "-q", "main")
	runGit(t, dir, "merge", "-q", "--no-edit", "side")
	writeFiles(t, dir, map[string]string{"d": "1"})
	d := mustCommitAll(t, dir, "d").Hash
	runGit(t, dir, "reset", "-q", "--hard", "HEAD~1")

	got, err := repo.Reachable(a, b, c, d, "not a hash", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{a: true, b: true, c: true, d: false, "not a hash": false, "": false}
	for h, w := range want {
		if got[h] != w {
			t.Errorf("Reachable(%.7s) = %v, want %v", h, got[h], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Reachable answered %d hashes, want %d", len(got), len(want))
	}
}
