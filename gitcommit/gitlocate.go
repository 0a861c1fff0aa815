package gitcommit

import (
	"context"
	"strings"
	"time"
)

// git's verdict on where the repository is. The verdict stages with the
// repository named as debussy resolved it, so a resolution git makes
// otherwise (a relative core.worktree under a symlinked GIT_DIR was one)
// would go unseen: where git is installed, Open asks it, from the same
// directory and with the same variables, and takes its answer.

// gitLocation is `git rev-parse --absolute-git-dir --git-common-dir
// --show-toplevel` run from dir as the user would run git there; ok is
// false without git, or when git finds no worktree (it then refuses what
// debussy refuses too).
func (r *Repo) gitLocation(dir string) (root, gitDir, commonDir string, ok bool) {
	bin := r.verdictGit()
	if bin == "" {
		return "", "", "", false
	}
	// The locating variables as debussy sees them (OpenLinked hides the
	// main worktree's).
	env := withoutRepoEnv(r.environ())
	for _, k := range repoEnv {
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v := &verifier{ctx: ctx, bin: bin, root: dir, env: env}
	out, err := v.git(nil, "rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel")
	if err != nil {
		return "", "", "", false
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[2] == "" {
		return "", "", "", false
	}
	return lines[2], lines[0], absFrom(dir, lines[1]), true
}

// followGit takes git's location of the repository where it differs from
// debussy's resolution, and says so.
func (r *Repo) followGit(dir string) {
	root, gitDir, commonDir, ok := r.gitLocation(dir)
	if !ok || sameDir(root, r.root) && sameDir(gitDir, r.gitDir) && sameDir(commonDir, r.commonDir) {
		return
	}
	r.log.Error("git finds the repository elsewhere than debussy did: git's answer is used; please report it",
		"git_worktree", root, "git_dir", gitDir, "debussy_worktree", r.root, "debussy_git_dir", r.gitDir)
	r.root, r.gitDir, r.commonDir = root, gitDir, commonDir
}
