package gitcommit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// repoEnv are the variables that tell git which repository, index and
// objects to use (the locating part of `git rev-parse --local-env-vars`).
var repoEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_IMPLICIT_WORK_TREE", "GIT_PREFIX", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE",
}

// ChildEnv is base (nil: os.Environ()) for a process working in this
// worktree, such as an agent's session or a gate. The repository is
// resolved already, and a GIT_DIR or GIT_INDEX_FILE meant for debussy's own
// directory would send the child's git to another repository or index: in
// a linked phase worktree, to the main one. So the locating variables are
// removed when git finds this repository from the root by itself, and
// otherwise (a git dir only GIT_DIR names) set to its absolute git dir and
// worktree; an index other than the git dir's is passed on, absolute.
func (r *Repo) ChildEnv(base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := withoutRepoEnv(base)
	if r.indexFile != filepath.Join(r.gitDir, "index") {
		// The index debussy commits from (GIT_INDEX_FILE in the main
		// worktree; a linked one never inherits it, see OpenLinked).
		env = append(env, "GIT_INDEX_FILE="+r.indexFile)
	}
	if _, gitDir, _, err := discover(r.root); err == nil && sameDir(gitDir, r.gitDir) {
		return env
	}
	return append(env, "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
}

// withoutRepoEnv is env without the variables that locate a repository
// (repoEnv), for a git that is told its repository another way.
func withoutRepoEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(repoEnv, k)
	})
}

func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb) || filepath.Clean(a) == filepath.Clean(b)
}
