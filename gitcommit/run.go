package gitcommit

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/internal/gitrun"
)

// ErrNoGit means git is not installed: Verify cannot ask it, and CommitAll
// stages with go-git instead (see Mode).
var ErrNoGit = errors.New("git is not installed")

// GitError is a git command that failed, with what it said: the one type
// every package that runs git returns (internal/gitrun).
type GitError = gitrun.GitError

// gitRun is one git invocation: in the worktree root, with the
// repository's environment plus env.
type gitRun struct {
	env     []string
	stdin   io.Reader
	noIndex bool // without GIT_INDEX_FILE: a new worktree's checkout has its own
	// user: git runs the user's code (hooks, filters, signing) as the
	// user's own git would: in the environment it would have (userEnv),
	// free to read the terminal (gitrun's UserCode).
	user bool
}

// git runs git with args and returns its stdout. A cancelled ctx is
// returned as ctx's error, whatever git's exit said.
func (r *Repo) git(ctx context.Context, o gitRun, args ...string) ([]byte, error) {
	return r.run(ctx, o, r.gitBin, args...)
}

// run is git's runner for bin (git, or a shell that execs it).
func (r *Repo) run(ctx context.Context, o gitRun, bin string, args ...string) ([]byte, error) {
	env := r.gitEnv()
	if o.user {
		env = r.userEnv()
	}
	env = append(env, o.env...)
	if o.noIndex {
		env = withoutVar(env, "GIT_INDEX_FILE")
	}
	run := gitrun.Runner{Git: bin, Dir: r.root, Env: env}
	return run.Run(ctx, gitrun.Call{Stdin: o.stdin, UserCode: o.user}, args...)
}

// plumbing is the -c a git command that runs none of the user's code is
// given so that it runs none of the user's hooks either: the commit runs
// post-index-change as often as `git add -A && git commit` does.
var noHooks = []string{"-c", "core.hooksPath=" + os.DevNull}

// gitEnv is the environment git's plumbing runs with: the one debussy was
// opened with, and the repository named as it was resolved, so that git
// and go-git see the same one. No prompt: plumbing asks nobody anything.
func (r *Repo) gitEnv() []string {
	env := append(withoutRepoEnv(r.environ()), "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	if r.getenv("GIT_COMMON_DIR") != "" {
		env = append(env, "GIT_COMMON_DIR="+r.commonDir)
	}
	if r.getenv("GIT_INDEX_FILE") != "" {
		env = append(env, "GIT_INDEX_FILE="+r.indexFile)
	}
	for _, k := range []string{"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"} {
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	// Pathspecs debussy gives are its own: the user's GIT_*_PATHSPECS
	// must not reread them (git add -A, which runs user code, gets none).
	for _, k := range []string{"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"} {
		env = withoutVar(env, k)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// userEnv is the environment of a git that runs the user's code (`git add
// -A` and its filters, `git commit` and its hooks): the one the user's own
// git would have, run in the worktree root. The repository is named only
// when the user named it (GIT_DIR, GIT_WORK_TREE) or git would not find it
// from the root by itself, so a filter or hook sees no variable the user's
// git would not have given it.
func (r *Repo) userEnv() []string {
	env := withoutRepoEnv(r.environ())
	_, found, _, err := discover(r.root)
	if r.getenv("GIT_DIR") != "" || r.getenv("GIT_WORK_TREE") != "" || err != nil || !sameDir(found, r.gitDir) {
		env = append(env, "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	}
	if r.getenv("GIT_COMMON_DIR") != "" {
		env = append(env, "GIT_COMMON_DIR="+r.commonDir)
	}
	if r.getenv("GIT_INDEX_FILE") != "" {
		env = append(env, "GIT_INDEX_FILE="+r.indexFile)
	}
	env = append(env, r.objectEnvVars()...)
	for _, k := range []string{"GIT_IMPLICIT_WORK_TREE", "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE"} {
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// passedEnv are the variables WithGetenv's function is asked for when git
// runs: the ones git reads for identity, config and location.
var passedEnv = []string{
	"HOME", "XDG_CONFIG_HOME", "EMAIL", "TZ", "PATH",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
	"GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
	"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS",
	"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
}

// environ is the environment variables are looked up in: WithEnv's, the
// process's, or (WithGetenv) the process's with what getenv says for the
// variables git reads.
func (r *Repo) environ() []string {
	switch {
	case r.env != nil:
		return r.env
	case r.osEnv:
		return os.Environ()
	}
	env := os.Environ()
	for _, k := range append(slices.Clone(passedEnv), repoEnv...) {
		env = withoutVar(env, k)
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// withoutVar is env without name.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

// getenvOf looks variables up in env, the last one winning.
func getenvOf(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}
