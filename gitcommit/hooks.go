package gitcommit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
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

// hookEnv is what `git commit` adds to a hook's environment, including
// GIT_EXEC_PATH and that directory first on PATH (git's setup_path), so a
// hook calling git-sh-setup or another git-core program finds it.
func (r *Repo) hookEnv(author object.Signature) []string {
	return append(r.baseHookEnv(),
		"GIT_INDEX_FILE="+r.relToRoot(r.indexFile),
		"GIT_EDITOR=:",
		"GIT_PREFIX=",
		"GIT_AUTHOR_NAME="+author.Name,
		"GIT_AUTHOR_EMAIL="+author.Email,
		"GIT_AUTHOR_DATE="+fmt.Sprintf("@%d %s", author.When.Unix(), author.When.Format("-0700")),
	)
}

// baseHookEnv is the environment every hook gets: debussy's (WithEnv's),
// with git's exec path. A locating variable that was set (GIT_DIR and the
// like) is made absolute, as git exports it to hooks after it moved to the
// worktree root: a relative GIT_DIR given from a subdirectory sent the
// hook's git nowhere.
func (r *Repo) baseHookEnv() []string {
	env := r.env
	if env == nil {
		env = os.Environ()
	}
	env = withoutRepoEnv(env) // those getenv does not see (OpenLinked) stay out
	abs := map[string]string{"GIT_DIR": r.gitDir, "GIT_WORK_TREE": r.root, "GIT_COMMON_DIR": r.commonDir, "GIT_OBJECT_DIRECTORY": r.objectsDir,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": strings.Join(r.altObjects, string(os.PathListSeparator)), "GIT_INDEX_FILE": r.indexFile}
	for _, k := range repoEnv {
		if v := r.getenv(k); v != "" {
			if a, ok := abs[k]; ok {
				v = a
			}
			env = append(env, k+"="+v)
		}
	}
	if p := gitExecPath(); p != "" && r.getenv("GIT_EXEC_PATH") == "" {
		env = append(env, "GIT_EXEC_PATH="+p, "PATH="+p+string(os.PathListSeparator)+r.getenv("PATH"))
	}
	return env
}

// postIndexChange runs the post-index-change hook, as git does after each
// write of the index: its arguments say whether the worktree and the
// skip-worktree bits were updated, "0" and "0" for a commit. git ignores
// its exit status.
func (r *Repo) postIndexChange(cfg gitConfig) {
	if _, err := r.runHook(cfg, "post-index-change", r.baseHookEnv(), "0", "0"); err != nil {
		r.log.Warn("post-index-change hook failed", "err", err)
	}
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

// runHook runs hook name if present, as git does: cwd the worktree root,
// stdin empty, stdout and stderr together. ran is false if there is no such
// hook. A non-zero exit is a *HookError.
func (r *Repo) runHook(cfg gitConfig, name string, env []string, args ...string) (ran bool, err error) {
	path, ok := r.hookPath(cfg, name)
	if !ok {
		return false, nil
	}
	out := &headTail{max: maxHookOutput}
	run := func(argv ...string) error {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = r.root
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = out, out
		// A hook that leaves a background child holding its output must
		// not hang the commit once the hook itself has exited.
		cmd.WaitDelay = 5 * time.Second
		return cmd.Run()
	}
	r.log.Debug("run hook", "hook", name, "path", path)
	err = run(append([]string{path}, args...)...)
	if errors.Is(err, syscall.ENOEXEC) {
		// A script without "#!": git's run-command hands it to sh, as
		// a shell would.
		err = run(append([]string{"sh", path}, args...)...)
	}
	if err == nil {
		if s := strings.TrimSpace(out.String()); s != "" {
			r.log.Debug("hook output", "hook", name, "output", s)
		}
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

// messageHooks runs prepare-commit-msg and commit-msg as `git commit -m`
// does: the message goes to COMMIT_EDITMSG, the hooks may edit it, and what
// they leave is the message. An empty result aborts the commit, as in git.
func (r *Repo) messageHooks(cfg gitConfig, env []string, msg string) (string, error) {
	_, prepare := r.hookPath(cfg, "prepare-commit-msg")
	_, check := r.hookPath(cfg, "commit-msg")
	if !prepare && !check {
		return msg, nil
	}
	path := filepath.Join(r.gitDir, "COMMIT_EDITMSG")
	if err := os.WriteFile(path, []byte(msg), 0o666); err != nil {
		return "", fmt.Errorf("write commit message: %w", err)
	}
	rel := r.relToRoot(path)
	if _, err := r.runHook(cfg, "prepare-commit-msg", env, rel, "message"); err != nil {
		return "", err
	}
	if _, err := r.runHook(cfg, "commit-msg", env, rel); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read commit message: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", &HookError{Hook: "commit-msg", ExitCode: 0,
			Output: "the hooks left an empty commit message; git aborts such a commit"}
	}
	out := string(b)
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out, nil
}

// indexTree re-reads the index after the pre-commit hook, which may have
// staged more (git re-reads it too), and builds its tree.
func (r *Repo) indexTree() (plumbing.Hash, map[plumbing.Hash]*builtTree, []*index.Entry, error) {
	idx, err := r.readIndex()
	if err != nil {
		return plumbing.ZeroHash, nil, nil, err
	}
	entries := make([]*index.Entry, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if e.Stage != 0 {
			return plumbing.ZeroHash, nil, nil, fmt.Errorf("the pre-commit hook left %s unmerged in the index", e.Name)
		}
		if e.IntentToAdd {
			continue // `git add -N`: not in the tree until added
		}
		entries = append(entries, e)
	}
	sortEntries(entries)
	tree, trees := buildTree(entries)
	return tree, trees, entries, nil
}
