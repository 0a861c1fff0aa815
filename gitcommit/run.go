package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrNoGit means git is not installed: Verify cannot ask it, and CommitAll
// stages with go-git instead (see Mode).
var ErrNoGit = errors.New("git is not installed")

// killDelay bounds the wait for the pipes of a killed command's group.
const killDelay = 2 * time.Second

// command is name run in its own process group, the whole group killed
// when ctx ends: a hook or a filter git started, hung, must not outlive a
// Ctrl-C (Cmd.WaitDelay alone would kill only the leader).
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = killDelay
	return cmd
}

// GitError is a git command that failed, with what it said.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s: exit status %d: %s", strings.Join(e.Args, " "), e.ExitCode, strings.TrimSpace(e.Stderr))
}

// gitRun is one git invocation: in the worktree root, with the
// repository's environment plus env.
type gitRun struct {
	env     []string
	stdin   io.Reader
	noIndex bool // without GIT_INDEX_FILE: a new worktree's checkout has its own
}

// git runs git with args and returns its stdout. A cancelled ctx is
// returned as ctx's error, whatever git's exit said.
func (r *Repo) git(ctx context.Context, o gitRun, args ...string) ([]byte, error) {
	cmd := command(ctx, r.gitBin, args...)
	cmd.Dir = r.root
	cmd.Env = append(r.gitEnv(), o.env...)
	if o.noIndex {
		cmd.Env = withoutVar(cmd.Env, "GIT_INDEX_FILE")
	}
	cmd.Stdin = o.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], context.Cause(ctx))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stdout.Bytes(), &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: stderr.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("run git %s: %w", args[0], err)
	}
	return stdout.Bytes(), nil
}

// gitEnv is the environment git runs with: the one debussy was opened with,
// and the repository named as it was resolved, so that git and go-git see
// the same one.
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
