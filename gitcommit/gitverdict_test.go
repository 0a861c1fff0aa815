package gitcommit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A divergence planted in debussy's staging (an edit dropped, a new file
// left out, an ignored one added) never reaches the branch: git's verdict
// replaces it, the paths are reported, and Verify agrees.
func TestGitVerdictReplacesPlantedDivergence(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", ".gitignore": "*.log\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "init")
	oldA := runGit(t, dir, "rev-parse", "HEAD:a.txt")
	writeFiles(t, dir, map[string]string{"a.txt": "two\n", "b.txt": "new\n", "x.log": "noise\n"})

	plantStaging = func(es []*index.Entry) []*index.Entry {
		es = slices.DeleteFunc(es, func(e *index.Entry) bool { return e.Name == "b.txt" })
		for _, e := range es {
			if e.Name == "a.txt" {
				e.Hash = plumbing.NewHash(oldA)
			}
		}
		return append(es, &index.Entry{Name: "x.log", Mode: 0o100644, Hash: plumbing.NewHash(runGit(t, dir, "hash-object", "-w", "x.log"))})
	}
	t.Cleanup(func() { plantStaging = nil })

	twin := copyTree(t, dir)
	runGit(t, twin, "add", "-A")
	runGit(t, twin, "commit", "-q", "-m", "git")

	r := mustOpen(t, dir)
	c, err := r.CommitAll("debussy")
	if err != nil {
		t.Fatalf("CommitAll: %v", err)
	}
	if got, want := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("branch tree %s, git's %s:\n%s", got, want, runGit(t, dir, "ls-tree", "-r", "HEAD"))
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the commit:\n%s", st)
	}
	var paths []string
	for _, pd := range c.GitReplaced {
		paths = append(paths, pd.Path)
	}
	if want := []string{"a.txt", "b.txt", "x.log"}; !slices.Equal(paths, want) {
		t.Errorf("GitReplaced = %v, want %v", c.GitReplaced, want)
	}
	repro, err := r.WriteRepro(t.TempDir(), c.Hash, c.GitReplaced)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(repro); !strings.Contains(string(b), "b.txt: committed absent") {
		t.Errorf("reproduction %s:\n%s", repro, b)
	}
	d, err := Verify(context.Background(), dir, c.Hash, VerifyOptions{})
	if err != nil || len(d.Paths) > 0 || !d.AtCommit {
		t.Errorf("Verify = %+v, %v; want agreement at commit", d, err)
	}
}

// A `git add -A` that fails (a new file outside a sparse-checkout
// definition) means git would not commit: neither does debussy.
func TestGitVerdictRefusesWhereGitAddFails(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a/x": "1\n", "b/y": "1\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "init")
	runGit(t, dir, "sparse-checkout", "set", "--no-cone", "/a/")
	writeFiles(t, dir, map[string]string{"a/x": "2\n", "c/z": "new\n"})
	head := runGit(t, dir, "rev-parse", "HEAD")
	_, err := mustOpen(t, dir).CommitAll("debussy")
	if !errors.Is(err, ErrGitRefused) || !strings.Contains(err.Error(), "sparse-checkout") {
		t.Fatalf("CommitAll = %v, want git's refusal", err)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("HEAD moved to %s", now)
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "z")); err != nil {
		t.Error(err)
	}
}
