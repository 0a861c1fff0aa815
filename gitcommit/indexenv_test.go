package gitcommit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// GIT_INDEX_FILE names the index CommitAll reads, stages into and writes,
// relative to the worktree root as in git: the repository's own index is
// left alone, and the commit is the one git makes with the same variable.
func TestCommitAllHonoursGitIndexFile(t *testing.T) {
	isolate(t)
	var trees []string
	for _, who := range []string{"git", "debussy"} {
		dir := newRepo(t)
		writeFiles(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitignore": "*.idx*\n"})
		runGit(t, dir, "add", "-A")
		runGit(t, dir, "commit", "-q", "-m", "first")
		must(t, os.Remove(filepath.Join(dir, "b.txt")))
		// The alternate index starts as a copy, the way a tool prepares one.
		own := filepath.Join(dir, ".git", "index")
		before, err := os.ReadFile(own)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, "alt.idx"), before, 0o644))
		writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "new.txt": "n\n"})
		t.Setenv("GIT_INDEX_FILE", "alt.idx")
		if who == "git" {
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "second")
		} else {
			mustCommitAll(t, dir, "second")
		}
		if after, err := os.ReadFile(own); err != nil || !bytes.Equal(before, after) {
			t.Errorf("%s wrote .git/index (err %v)", who, err)
		}
		if st := runGit(t, dir, "status", "--porcelain"); st != "" {
			t.Errorf("%s: git status with the alternate index:\n%s", who, st)
		}
		os.Unsetenv("GIT_INDEX_FILE")
		trees = append(trees, runGit(t, dir, "rev-parse", "HEAD^{tree}"))
	}
	if trees[0] != trees[1] {
		t.Errorf("trees differ: git %s, debussy %s", trees[0], trees[1])
	}
}
