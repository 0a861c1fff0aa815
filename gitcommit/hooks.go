package gitcommit

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

// hooksDirOf is where git looks for hooks: core.hooksPath (relative to the
// worktree root; set empty, the root itself, as git reads it) or the
// common git dir's hooks/.
func (r *Repo) hooksDirOf(cfg gitConfig) string {
	if cfg.has("core.hooksPath") {
		return r.expandPath(cfg.get("core.hooksPath"), r.root)
	}
	return filepath.Join(r.commonDir, "hooks")
}

// hookPath returns the hook git would run for name, and only an
// executable file (git skips a non-executable one with a hint).
func (r *Repo) hookPath(cfg gitConfig, name string) (string, bool) {
	if cfg.has("core.hooksPath") && cfg.get("core.hooksPath") == "" && r.gitBin == "" {
		return "", false // without git: read as "no hooks"
	}
	dir := r.hooksDirOf(cfg)
	if !hasHook(dir, name) {
		return "", false
	}
	return filepath.Join(dir, name), true
}
