package gitcommit

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadCommit tells a commit as `git show --name-status --no-renames` does:
// its subject, its trailers, and the paths it changed against its first
// parent — all of them for a root commit.
func TestReadCommit(t *testing.T) {
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
	root := mustCommitAll(t, dir, "first")
	writeFiles(t, dir, map[string]string{"a.txt": "A\n", "d.txt": "d\n"})
	if err := os.Remove(filepath.Join(dir, "b", "c.txt")); err != nil {
		t.Fatal(err)
	}
	msg := Message{Subject: "debussy: phase 2 — checkpoint", Run: "r1", Phase: "2", Event: "restart", Session: 3}
	c := mustCommitAll(t, dir, msg.String())
	r := mustOpen(t, dir)

	got, err := r.ReadCommit(Short(c.Hash))
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != c.Hash || got.Subject != msg.Subject || got.Trailer("debussy-session") != "3" || got.Trailer("Debussy-Run") != "r1" {
		t.Errorf("ReadCommit = %+v", got)
	}
	want := runGit(t, dir, "show", "--format=", "--name-status", "--no-renames", c.Hash)
	if formatChanges(got.Changes) != normalizeNameStatus(want) {
		t.Errorf("changes\n%s\nwant (git show)\n%s", formatChanges(got.Changes), want)
	}
	first, err := r.ReadCommit(root.Hash)
	if err != nil || formatChanges(first.Changes) != "A\ta.txt\nA\tb/c.txt" || first.Trailer("Debussy-Run") != "" {
		t.Errorf("root commit: %+v, %v", first, err)
	}
	if _, err := r.ReadCommit("0123456789abcdef0123456789abcdef01234567"); err == nil {
		t.Error("a missing commit read without error")
	}
}
