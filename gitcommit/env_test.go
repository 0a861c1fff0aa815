package gitcommit

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A child in the worktree (a session, a gate) finds the repository debussy
// resolved: in a linked worktree the GIT_DIR and GIT_INDEX_FILE debussy was
// started with are dropped, so the child's git works on the worktree's own
// index and branch; a git dir only GIT_DIR names is passed on absolute.
func TestChildEnv(t *testing.T) {
	isolate(t)
	main := newRepo(t)
	writeFiles(t, main, map[string]string{"a.txt": "a\n"})
	mustCommitAll(t, main, "first")
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, main, "worktree", "add", "-q", "-b", "phase", wt)
	r := mustOpen(t, wt)
	base := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "GIT_DIR=" + filepath.Join(main, ".git"),
		"GIT_WORK_TREE=" + main, "GIT_INDEX_FILE=/elsewhere/index", "GIT_CONFIG_NOSYSTEM=1"}
	env := r.ChildEnv(base)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(repoEnv, k) {
			t.Errorf("ChildEnv kept %s", kv)
		}
	}
	if !slices.Contains(env, "GIT_CONFIG_NOSYSTEM=1") {
		t.Errorf("ChildEnv dropped other variables: %v", env)
	}
	cmd := exec.Command("git", "rev-parse", "--abbrev-ref", "HEAD")
	cmd.Dir, cmd.Env = wt, env
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "phase" {
		t.Errorf("git in the worktree with ChildEnv: %q, %v; want branch phase", out, err)
	}

	// The main worktree opened with GIT_INDEX_FILE: the child uses that
	// index too, named absolute.
	t.Setenv("GIT_INDEX_FILE", "alt-index")
	env = mustOpen(t, main).ChildEnv(base)
	os.Unsetenv("GIT_INDEX_FILE")
	if !slices.Contains(env, "GIT_INDEX_FILE="+filepath.Join(main, "alt-index")) || slices.Contains(env, "GIT_INDEX_FILE=/elsewhere/index") {
		t.Errorf("ChildEnv with GIT_INDEX_FILE: %v", env)
	}

	// A repository git finds only through GIT_DIR: passed on, absolute.
	sep := t.TempDir()
	gitDir := filepath.Join(t.TempDir(), "repo.git")
	runGit(t, sep, "init", "-q", "--separate-git-dir", gitDir)
	runGit(t, sep, "config", "core.worktree", sep)
	must(t, os.Remove(filepath.Join(sep, ".git")))
	t.Setenv("GIT_DIR", gitDir)
	r = mustOpen(t, sep)
	env = r.ChildEnv(base)
	if !slices.Contains(env, "GIT_DIR="+gitDir) || !slices.Contains(env, "GIT_WORK_TREE="+sep) {
		t.Errorf("ChildEnv for a GIT_DIR-only repository: %v", env)
	}
}
