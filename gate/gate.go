// Package gate runs a phase's gates — the shell commands whose exit code
// decides whether the phase is done — and words their results: a one-line
// reason for the log and the summary, and the evidence a remediation
// session is given. It records nothing; the caller logs and keeps results.
package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/internal/procgroup"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/plans"
)

// Result is one gate's run: the evidence a remediation prompt carries.
type Result struct {
	Gate     plans.Gate
	ExitCode int
	Output   string // tail, bounded, redacted
	Duration time.Duration
	TimedOut bool
	Err      error // could not run at all
}

// Passed reports whether the gate ran to a zero exit in time.
func (g Result) Passed() bool { return g.Err == nil && !g.TimedOut && g.ExitCode == 0 }

// Missing names the program a gate could not run: the shell's exit 127
// (not found) or 126 (not executable). No agent can install it, so such a
// gate is not a failing one and gets no remediation session. The shell
// names the program ("sh: 1: ruff: not found"); else it is the command's
// first word. "" for any other result.
func (g Result) Missing() string {
	if g.Err != nil || g.TimedOut || (g.ExitCode != 126 && g.ExitCode != 127) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(g.Output, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, suffix := range []string{": command not found", ": not found", ": Permission denied", ": cannot execute"} {
			if rest, ok := strings.CutSuffix(strings.TrimSpace(lines[i]), suffix); ok {
				if i := strings.LastIndex(rest, ": "); i >= 0 {
					rest = rest[i+2:]
				}
				if prog := strings.TrimSpace(rest); prog != "" {
					return prog
				}
			}
		}
	}
	return g.Gate.Program()
}

// Unchecked names the phase's gates that have no command: nothing can run
// them, so they are neither passed nor failed.
func Unchecked(ph *plans.Phase) []string {
	var names []string
	for _, g := range ph.Gates {
		if g.Unchecked {
			names = append(names, g.Name)
		}
	}
	return names
}

// outputLimit bounds what is kept of a gate's output: the tail is where
// test failures are reported.
const outputLimit = 16 << 10

// Run runs one gate command with `sh -c` in dir, in its own process group,
// so a timeout (0: none) or ctx's end kills everything the command started,
// and the shell's exit kills what it left running. env nil is debussy's
// environment. The output, stdout and stderr in the order written, keeps
// its last 16 KiB and is redacted.
func Run(ctx context.Context, dir string, env []string, g plans.Gate, timeout time.Duration) Result {
	return RunWrapped(ctx, nil, dir, env, g, timeout)
}

// RunWrapped is Run with wrapper's argv before `sh -c` (the sandbox's
// bubblewrap, up to its "--"): the wrapper leads the process group.
func RunWrapped(ctx context.Context, wrapper []string, dir string, env []string, g plans.Gate, timeout time.Duration) Result {
	res := Result{Gate: g}
	argv := append(slices.Clone(wrapper), "sh", "-c", g.Command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out := &tailBuffer{max: outputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	// A job that left the group (setsid) and holds the output pipe: once the
	// shell has exited, stop waiting for it.
	cmd.WaitDelay = time.Second
	start := time.Now()
	run := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ex, err := procgroup.Run(run, cmd)
	if ex.State == nil && ex.Err == nil {
		// Never started: cmd.Start failed, or the run was over already.
		res.Err = fmt.Errorf("start gate %s: %w", g.Name, err)
		return res
	}
	res.TimedOut = err != nil && ctx.Err() == nil
	res.Duration = time.Since(start)
	// Redacted here, once: the output reaches the events, the log, the
	// ledger and the summary as well as the remediation prompt.
	res.Output = checkpoint.Redact(out.String())
	var exit *exec.ExitError
	switch err := ex.Err; {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(syscall.SIGKILL)
		}
	default:
		res.Err = err
	}
	return res
}

// Summary is the one-line reason the last of results failed; "" for none.
func Summary(results []Result) string {
	if len(results) == 0 {
		return ""
	}
	g := results[len(results)-1]
	switch {
	case g.Err != nil:
		return fmt.Sprintf("gate %s (`%s`) could not run: %v", g.Gate.Name, g.Gate.Command, g.Err)
	case g.TimedOut:
		return fmt.Sprintf("gate %s (`%s`) timed out after %s", g.Gate.Name, g.Gate.Command, g.Duration.Round(time.Second))
	}
	last := text.OneLine(text.LastLines(g.Output, 1), 200)
	if last == "" {
		last = "(no output)"
	}
	return fmt.Sprintf("gate %s (`%s`) exit %d: %s", g.Gate.Name, g.Gate.Command, g.ExitCode, last)
}

// Evidence is what the remediation session is told: the failing gate (the
// last of results), its command, exit code and the tail of its output, and
// the gates that passed before it. results must not be empty.
func Evidence(results []Result) string {
	g := results[len(results)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "The gate %q failed.\n\nCommand: %s\n", g.Gate.Name, g.Gate.Command)
	switch {
	case g.Err != nil:
		fmt.Fprintf(&b, "It could not run: %v\n", g.Err)
	case g.TimedOut:
		fmt.Fprintf(&b, "It timed out after %s and was killed.\n", g.Duration.Round(time.Second))
	default:
		fmt.Fprintf(&b, "Exit code: %d\n", g.ExitCode)
	}
	out := text.LastLines(g.Output, 60)
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	fmt.Fprintf(&b, "Output (last lines):\n```\n%s\n```\n", strings.TrimRight(out, "\n"))
	for _, p := range results[:len(results)-1] {
		fmt.Fprintf(&b, "(gate %q passed)\n", p.Gate.Name)
	}
	return b.String()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.dropped += over
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped > 0 {
		// The cut may go through a secret, leaving a piece no pattern
		// recognises: the partial first line goes too.
		buf, dropped := t.buf, t.dropped
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf, dropped = buf[i+1:], dropped+i+1
		}
		return fmt.Sprintf("[… %d bytes before this were dropped]\n%s", dropped, buf)
	}
	return string(t.buf)
}
