// Package gitrun is debussy's one way to run git: in a directory, with an
// environment, under the caller's context, never prompting unless asked
// to, and with one error type for a git that failed (GitError).
//
// Two kinds of run:
//   - plumbing (the default): git leads its own process group, which is
//     killed when ctx ends and again once git exits, so nothing it started
//     (ssh, a credential helper) outlives the call;
//   - user code (Call.UserCode): git runs the user's hooks, filters or
//     signing programs, which may read the terminal (a hook that asks, a
//     pinentry, ssh-keygen's passphrase). As `git commit` typed in a shell,
//     git then runs in debussy's own process group when debussy is its
//     terminal's foreground job (a separate group would be stopped with
//     SIGTTIN at its first read), else in its own group. Its output goes to
//     files, so a hook's background child that keeps them open does not
//     hold the call up; what such a child leaves running after git exits is
//     left alone, as git leaves it. When ctx ends, git and everything below
//     it get SIGTERM (git removes its lock files), then SIGKILL.
package gitrun

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

	"github.com/debussy-dev/debussy/internal/procgroup"
)

// GitError is a git command that exited with a non-zero status: what ran,
// the status, and what git said on stderr.
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: exit status %d", strings.Join(e.Args, " "), e.ExitCode)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Runner runs git; its zero value runs "git" from PATH in the current
// directory with the process's environment.
type Runner struct {
	Git string   // the git binary; "" is "git", looked up in PATH
	Dir string   // where git runs
	Env []string // git's environment; nil is the process's
	// NoPrompt makes git fail rather than ask for credentials
	// (GIT_TERMINAL_PROMPT=0, an askpass that answers nothing): for
	// fetches and pushes, which must never wait on a prompt nobody sees.
	NoPrompt bool
}

// Call is what one invocation adds to its Runner.
type Call struct {
	Env   []string // added to the runner's environment (later wins)
	Stdin io.Reader
	// UserCode says git runs the user's hooks, filters or signing
	// programs: see the package comment.
	UserCode bool
}

// killDelay is how long a run ended by ctx gets between SIGTERM and
// SIGKILL, and how long a plumbing run's pipes may stay open after git
// exits (a child that left the group).
const killDelay = 2 * time.Second

// Run runs git with args and returns its stdout. A non-zero exit is a
// *GitError (stdout is returned too); a run ctx ended returns ctx's cause,
// whatever git's status said.
func (r Runner) Run(ctx context.Context, c Call, args ...string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("git %s: %w", first(args), context.Cause(ctx))
	}
	bin := r.Git
	if bin == "" {
		bin = "git"
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ(c.Env)
	cmd.Stdin = c.Stdin
	var stdout, stderr []byte
	var err error
	if c.UserCode {
		stdout, stderr, err = runUserCode(ctx, cmd)
	} else {
		stdout, stderr, err = runPlumbing(ctx, cmd)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", first(args), context.Cause(ctx))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && c.UserCode && interrupted(ee) {
		// The terminal's Ctrl-C reached git, in debussy's own process
		// group, before it reached debussy's context.
		return nil, fmt.Errorf("git %s: interrupted: %w", first(args), context.Canceled)
	}
	switch {
	case err == nil:
		return stdout, nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return stdout, &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: string(stderr)}
	case errors.As(err, &ee):
		return stdout, &GitError{Args: args, ExitCode: -1, Stderr: strings.TrimSpace(string(stderr) + "\n" + ee.String())}
	default:
		return nil, fmt.Errorf("run git %s: %w", first(args), err)
	}
}

func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// environ is the runner's environment with add appended.
func (r Runner) environ(add []string) []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	if r.NoPrompt {
		env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true")
	}
	return append(env, add...)
}

// runPlumbing runs cmd leading its own process group (internal/procgroup).
func runPlumbing(ctx context.Context, cmd *exec.Cmd) (stdout, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// A child that left the group and holds a pipe: stop waiting once git
	// has ended.
	cmd.WaitDelay = killDelay
	ex, err := procgroup.Run(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	if errors.Is(ex.Err, exec.ErrWaitDelay) {
		ex.Err = nil
	}
	return out.Bytes(), errOut.Bytes(), ex.Err
}

// runUserCode runs cmd as the package comment describes for user code.
func runUserCode(ctx context.Context, cmd *exec.Cmd) (stdout, stderr []byte, err error) {
	outFile, err := os.CreateTemp("", "debussy-git-out-")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(outFile.Name())
	defer outFile.Close()
	errFile, err := os.CreateTemp("", "debussy-git-err-")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(errFile.Name())
	defer errFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, errFile
	ownGroup := !foreground()
	if ownGroup {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = stop(cmd.Process.Pid, ownGroup, done)
	}
	stdout, rerr := readFrom(outFile)
	stderr, rerr2 := readFrom(errFile)
	if err == nil {
		err = errors.Join(rerr, rerr2)
	}
	return stdout, stderr, err
}

// stop ends a user-code run: SIGTERM to git and what runs below it, then,
// if git has not exited within killDelay, SIGKILL; it returns Wait's error.
func stop(pid int, ownGroup bool, done <-chan error) error {
	// In debussy's own group: git and its descendants as found now (once
	// git is gone its children are no longer found below it).
	tree := []int{pid}
	if !ownGroup {
		tree = append(descendants(pid), pid)
	}
	signal := func(sig syscall.Signal) {
		if ownGroup {
			_ = syscall.Kill(-pid, sig)
			return
		}
		for _, p := range tree {
			_ = syscall.Kill(p, sig)
		}
	}
	signal(syscall.SIGTERM)
	select {
	case err := <-done:
		signal(syscall.SIGKILL) // a hook's child that ignored SIGTERM
		return err
	case <-time.After(killDelay):
	}
	if !ownGroup {
		tree = append(descendants(pid), tree...)
	}
	signal(syscall.SIGKILL)
	return <-done
}

func readFrom(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// interrupted says git died of SIGINT (or git's own re-raise of it).
func interrupted(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT || ee.ExitCode() == 130
}
