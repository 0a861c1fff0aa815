package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/internal/procgroup"
	"github.com/debussy-dev/debussy/plans"
)

// gateResult is one gate's run: the evidence a remediation prompt carries.
type gateResult struct {
	Gate     plans.Gate
	ExitCode int
	Output   string // tail, bounded
	Duration time.Duration
	TimedOut bool
	Err      error // could not run at all
}

func (g gateResult) passed() bool { return g.Err == nil && !g.TimedOut && g.ExitCode == 0 }

// missing names the program a gate could not run: the shell's exit 127
// (not found) or 126 (not executable). No agent can install it, so such a
// gate is not a failing one and gets no remediation session. The shell
// names the program ("sh: 1: ruff: not found"); else it is the command's
// first word.
func (g gateResult) missing() string {
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

// missingError is why a phase whose gate could not run failed: the
// program, and how to install or configure it.
func missingError(phase string, g gateResult) error {
	what := "not installed or not on PATH"
	if g.ExitCode == 126 {
		what = "not executable"
	}
	return setupFailure(fmt.Sprintf("phase %s %v: gate %s (`%s`) cannot run: %s is %s (exit %d); install %s, or set gate_commands: {%s: \"…\"} in .debussy.yaml (it replaces the plan's command) — no agent session can fix this",
		phase, ErrPhaseFailed, g.Gate.Name, g.Gate.Command, g.missing(), what, g.ExitCode, g.missing(), strconv.Quote(g.Gate.Name)))
}

// setupFailure is a phase that failed on the setup, not on the agent's
// work: it reads "phase 2 failed: …" and exits 2 like ErrSetup.
type setupFailure string

func (e setupFailure) Error() string   { return string(e) }
func (e setupFailure) Unwrap() []error { return []error{ErrPhaseFailed, ErrSetup} }

// gateOutputLimit bounds what is kept of a gate's output: the tail is
// where test failures are reported.
const gateOutputLimit = 16 << 10

// runGates runs the phase's gates one by one in the repository root, with
// env (gitcommit's ChildEnv), and stops at the first failure. ok is true
// when all passed.
func (r *orun) runGates(ctx context.Context, root string, env []string, ph *plans.Phase) (results []gateResult, ok bool) {
	if len(ph.Gates) == 0 {
		r.log.Info("no gates: the agent's done signal decides", "phase", ph.ID)
		return nil, true
	}
	for _, g := range ph.Gates {
		if g.Unchecked {
			// Nothing can run it: it is neither passed nor failed, and the
			// summary lists it as UNCHECKED.
			r.log.Warn("gate unchecked: no command, not run", "phase", ph.ID, "gate", g.Name, "requirement", g.Requirement)
			r.event("gate", map[string]any{"phase": ph.ID, "gate": g.Name, "unchecked": true})
			continue
		}
		r.log.Info("gate running", "phase", ph.ID, "gate", g.Name, "command", g.Command)
		res := runGate(ctx, root, env, g, time.Duration(r.cfg.GateTimeout))
		results = append(results, res)
		r.event("gate", map[string]any{"phase": ph.ID, "gate": g.Name, "command": g.Command, "exit_code": res.ExitCode,
			"timed_out": res.TimedOut, "duration_ms": res.Duration.Milliseconds(), "output_tail": tail(res.Output, 2048)})
		if !res.passed() {
			r.log.Warn("gate failed", "phase", ph.ID, "gate", g.Name, "problem", gateSummary(results))
			return results, false
		}
		r.log.Info("gate passed", "phase", ph.ID, "gate", g.Name, "took", res.Duration.Round(time.Millisecond))
	}
	return results, true
}

// uncheckedGates names the phase's gates that have no command.
func uncheckedGates(ph *plans.Phase) []string {
	var names []string
	for _, g := range ph.Gates {
		if g.Unchecked {
			names = append(names, g.Name)
		}
	}
	return names
}

// runGate runs one gate command with `sh -c` in its own process group, so a
// timeout kills everything the command started, and the shell's exit kills
// what it left running. env nil is debussy's environment.
func runGate(ctx context.Context, dir string, env []string, g plans.Gate, timeout time.Duration) gateResult {
	res := gateResult{Gate: g}
	cmd := exec.Command("sh", "-c", g.Command)
	cmd.Dir, cmd.Env = dir, env
	out := &tailBuffer{max: gateOutputLimit}
	cmd.Stdout, cmd.Stderr = out, out
	// A job that left the group (setsid) and holds the output pipe: once the
	// shell has exited, stop waiting for it.
	cmd.WaitDelay = time.Second
	start := time.Now()
	p, err := procgroup.Start(cmd)
	if err != nil {
		res.Err = fmt.Errorf("start gate %s: %w", g.Name, err)
		return res
	}
	done := make(chan procgroup.Exit, 1)
	go func() { done <- p.Wait() }()
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var ex procgroup.Exit
	select {
	case ex = <-done:
	case <-timer:
		res.TimedOut = true
		_ = p.Kill()
		ex = <-done
	case <-ctx.Done():
		_ = p.Kill()
		ex = <-done
	}
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

// gateSummary is the one-line reason the last gate failed.
func gateSummary(results []gateResult) string {
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
	last := oneLine(lastLines(g.Output, 1))
	if last == "" {
		last = "(no output)"
	}
	return fmt.Sprintf("gate %s (`%s`) exit %d: %s", g.Gate.Name, g.Gate.Command, g.ExitCode, last)
}

// gateEvidence is what the remediation session is told: the failing gate,
// its command, exit code and the tail of its output.
func gateEvidence(results []gateResult) string {
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
	out := lastLines(g.Output, 60)
	if strings.TrimSpace(out) == "" {
		out = "(no output)"
	}
	fmt.Fprintf(&b, "Output (last lines):\n```\n%s\n```\n", strings.TrimRight(out, "\n"))
	for _, p := range results[:len(results)-1] {
		fmt.Fprintf(&b, "(gate %q passed)\n", p.Gate.Name)
	}
	return b.String()
}

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
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
