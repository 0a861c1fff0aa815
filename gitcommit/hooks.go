package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// ErrHookRejected means a pre-commit or commit-msg hook (or the message it
// left) stopped the commit; see HookError.
var ErrHookRejected = errors.New("hook rejected the commit")

// HookError is a commit refused by one of the user's hooks. Nothing was
// committed; the work is still in the worktree and, as after a refused
// `git commit`, staged in the index.
type HookError struct {
	Hook     string // "pre-commit" or "commit-msg"
	Path     string // the hook that ran
	ExitCode int    // its exit status; -1 if it was killed or did not start
	Output   string // its stdout and stderr interleaved, bounded (see maxHookOutput)
}

func (e *HookError) Error() string {
	msg := fmt.Sprintf("the %s hook rejected the commit (exit status %d)", e.Hook, e.ExitCode)
	if out := strings.TrimSpace(e.Output); out != "" {
		msg += ":\n" + out
	}
	return msg
}

func (e *HookError) Unwrap() error { return ErrHookRejected }

// maxHookOutput bounds the output kept from a hook: the first and the last
// half, where linters and secret scanners put what matters.
const maxHookOutput = 64 << 10

// headTail keeps the first and last max/2 bytes written.
type headTail struct {
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.max/2 - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - h.max/2; over > 0 {
		h.dropped += int64(over)
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

func (h *headTail) String() string {
	if h.dropped == 0 {
		return string(h.head) + string(h.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes of output left out …]\n%s", h.head, h.dropped, h.tail)
}

// hookPath returns the hook git would run for name: core.hooksPath
// (relative to the worktree root) or the common git dir's hooks/, and only
// an executable file (git skips a non-executable one with a hint).
func (r *Repo) hookPath(cfg gitConfig, name string) (string, bool) {
	dir := filepath.Join(r.commonDir, "hooks")
	if cfg.has("core.hooksPath") {
		p := cfg.get("core.hooksPath")
		if p == "" {
			return "", false // set empty: git runs no hook at all
		}
		dir = r.expandPath(p, r.root)
	}
	path := filepath.Join(dir, name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if fi.Mode().Perm()&0o111 == 0 {
		r.log.Warn("hook ignored because it is not executable, as git does", "hook", path)
		return "", false
	}
	return path, true
}

// gitExecPath is `git --exec-path`, "" without git; asked once per process.
var gitExecPath = sync.OnceValue(func() string {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// hookEnv is what `git commit` adds to a hook's environment: the index it
// commits (the lock file), GIT_EDITOR=: and the author, and GIT_EXEC_PATH
// first on PATH (git's setup_path), so a hook calling git-sh-setup finds it.
func (r *Repo) hookEnv(author object.Signature, indexPath string) []string {
	env := withoutRepoEnv(r.environ())
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"} {
		if r.getenv(k) != "" {
			for _, kv := range r.gitEnv() {
				if strings.HasPrefix(kv, k+"=") {
					env = append(env, kv)
				}
			}
		}
	}
	if p := gitExecPath(); p != "" && r.getenv("GIT_EXEC_PATH") == "" {
		env = append(env, "GIT_EXEC_PATH="+p, "PATH="+p+string(os.PathListSeparator)+r.getenv("PATH"))
	}
	return append(env,
		"GIT_INDEX_FILE="+r.relToRoot(indexPath),
		"GIT_EDITOR=:",
		"GIT_PREFIX=",
		"GIT_AUTHOR_NAME="+author.Name,
		"GIT_AUTHOR_EMAIL="+author.Email,
		"GIT_AUTHOR_DATE="+fmt.Sprintf("@%d %s", author.When.Unix(), author.When.Format("-0700")),
	)
}

// relToRoot is p relative to the worktree root when inside it, as git
// passes paths to hooks (".git/COMMIT_EDITMSG"); absolute otherwise (a
// linked worktree's git dir).
func (r *Repo) relToRoot(p string) string {
	if rel, err := filepath.Rel(r.root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// hooks runs one commit's hooks.
type hooks struct {
	r   *Repo
	cfg gitConfig
	env []string
}

// run runs hook name if present, as git does: cwd the worktree root, stdin
// empty, stdout and stderr together, in its own process group killed with
// ctx. ran is false if there is no such hook. A non-zero exit is a
// *HookError; an interrupted one is ctx's error.
func (h hooks) run(ctx context.Context, name string, args ...string) (ran bool, err error) {
	path, ok := h.r.hookPath(h.cfg, name)
	if !ok {
		return false, nil
	}
	out := &headTail{max: maxHookOutput}
	run := func(argv ...string) error {
		cmd := command(ctx, argv[0], argv[1:]...)
		cmd.Dir = h.r.root
		cmd.Env = h.env
		cmd.Stdout, cmd.Stderr = out, out
		return cmd.Run()
	}
	h.r.log.Debug("run hook", "hook", name, "path", path)
	err = run(append([]string{path}, args...)...)
	if errors.Is(err, syscall.ENOEXEC) {
		// A script without "#!": git's run-command hands it to sh.
		err = run(append([]string{"sh", path}, args...)...)
	}
	if ctx.Err() != nil {
		return true, fmt.Errorf("%s hook: %w", name, context.Cause(ctx))
	}
	if err == nil {
		return true, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		fmt.Fprintf(out, "\n%v", err)
	}
	return true, &HookError{Hook: name, Path: path, ExitCode: code, Output: out.String()}
}

// postIndexChange runs the post-index-change hook, as git does after each
// write of the index ("0" "0": neither worktree nor skip-worktree bits
// changed). git ignores its exit status.
func (h hooks) postIndexChange(ctx context.Context) {
	if _, err := h.run(ctx, "post-index-change", "0", "0"); err != nil {
		h.r.log.Warn("post-index-change hook failed", "err", err)
	}
}

// message runs prepare-commit-msg and commit-msg as `git commit -m` does:
// the message goes to COMMIT_EDITMSG, the hooks may edit it, and what they
// leave is the message (cleaned up afterwards, cleanupMessage).
func (h hooks) message(ctx context.Context, msg string) (string, error) {
	_, prepare := h.r.hookPath(h.cfg, "prepare-commit-msg")
	_, check := h.r.hookPath(h.cfg, "commit-msg")
	if !prepare && !check {
		return msg, nil
	}
	path := filepath.Join(h.r.gitDir, "COMMIT_EDITMSG")
	if err := os.WriteFile(path, []byte(msg), 0o666); err != nil {
		return "", fmt.Errorf("write commit message: %w", err)
	}
	rel := h.r.relToRoot(path)
	if _, err := h.run(ctx, "prepare-commit-msg", rel, "message"); err != nil {
		return "", err
	}
	if _, err := h.run(ctx, "commit-msg", rel); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read commit message: %w", err)
	}
	return string(b), nil
}

// cleanupMessage cleans the message as `git commit -m` does after its
// hooks (commit.cleanup; without an editor "default" and "scissors" are
// "whitespace"): `git stripspace`, with --strip-comments for "strip" (git
// knows core.commentChar). An empty result aborts the commit, as in git.
func (r *Repo) cleanupMessage(ctx context.Context, cfg gitConfig, msg string) (string, error) {
	mode := strings.ToLower(cfg.get("commit.cleanup"))
	out := msg
	switch {
	case mode == "verbatim":
	case r.gitBin == "" || mode != "strip" && stripSpace(msg) == msg:
		out = stripSpace(msg) // nothing for git's whitespace cleanup to do
	default:
		args := []string{"stripspace"}
		if mode == "strip" {
			args = append(args, "--strip-comments")
		}
		b, err := r.git(ctx, gitRun{stdin: strings.NewReader(msg)}, args...)
		if err != nil {
			return "", fmt.Errorf("clean up the message: %w", err)
		}
		out = string(b)
	}
	if strings.TrimSpace(out) == "" {
		return "", &HookError{Hook: "commit-msg", ExitCode: 0,
			Output: "the hooks left an empty commit message; git aborts such a commit"}
	}
	return out, nil
}

// stripSpace is `git stripspace` without git: trailing spaces cut, runs of
// blank lines made one, none at the start or the end, a final newline.
func stripSpace(msg string) string {
	var b strings.Builder
	blank := false
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, " \t\r\v\f")
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
