package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/internal/procgroup"
)

// Probe is what a short session without a user message found out about the
// CLI (debussy doctor): no API request is made.
type Probe struct {
	Path    string // the binary, resolved on PATH
	Version string // `claude --version`, e.g. "2.1.330 (Claude Code)"

	// The control requests debussy relies on, as the CLI answered them.
	Initialize   ControlAnswer // with hook callbacks
	ContextUsage ControlAnswer // get_context_usage; Context holds the answer
	Interrupt    ControlAnswer
	Context      *ContextUsage

	Exited   bool // claude exited before stdin was closed
	ExitCode int  // -1 when killed
	Stderr   string
}

// ControlAnswer is how the CLI answered one control request.
type ControlAnswer struct {
	Answered bool
	Error    string // the CLI's error answer; "" for success
}

// OK reports a success answer.
func (a ControlAnswer) OK() bool { return a.Answered && a.Error == "" }

const (
	probeInitID      = initRequestID
	probeContextID   = contextUsagePrefix + "probe"
	probeInterruptID = "probe_interrupt"
)

// ProbeCLI runs claude as a session of spec would (binary, model, permission
// mode, extra arguments, environment, directory; spec.Prompt is not used)
// in its own process group, sends initialize with hook callbacks,
// get_context_usage and interrupt without any user message, and closes
// stdin once all three are answered or timeout has passed. The group is
// killed if it outlives that by spec.KillGrace (default 3s). An error is
// returned only when claude cannot be run at all.
func ProbeCLI(ctx context.Context, spec Spec, timeout time.Duration) (Probe, error) {
	var p Probe
	path, err := LookPath(spec.Bin)
	if err != nil {
		return p, err
	}
	p.Path = path
	if spec.KillGrace <= 0 {
		spec.KillGrace = defaultKillGrace
	}
	env := childEnv(spec)
	vctx, cancel := context.WithTimeout(ctx, timeout)
	cmd := exec.CommandContext(vctx, path, "--version")
	cmd.Env, cmd.Dir = env, spec.Dir
	out, verr := cmd.Output()
	cancel()
	if verr != nil && (errors.Is(verr, fs.ErrNotExist) || errors.Is(verr, fs.ErrPermission)) {
		return p, notFound(spec.Bin, verr)
	}
	p.Version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return p, fmt.Errorf("probe claude: create pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return p, fmt.Errorf("probe claude: create pipe: %w", err)
	}
	var stderr lockedBuffer
	run := &exec.Cmd{Path: path, Args: append([]string{spec.Bin}, claudeArgs(spec)...), Dir: spec.Dir, Env: env,
		Stdin: stdinR, Stdout: stdoutW, Stderr: &stderr}
	proc, err := procgroup.Start(run)
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return p, notFound(spec.Bin, err)
		}
		return p, fmt.Errorf("probe claude: %w", err)
	}
	defer stdoutR.Close()

	answers := make(chan Event, 8)
	go func() {
		defer close(answers)
		lr := NewLineReader(stdoutR, nil)
		for {
			line, err := lr.Next()
			if ev, perr := Parse(line); perr == nil && (ev.Kind == KindControlResponse || ev.Kind == KindContextUsage) {
				answers <- ev
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan procgroup.Exit, 1)
	go func() { exited <- proc.Wait() }()

	// Written at once: the CLI reads them in order, and one that exits
	// early (refusing a flag) makes a write fail, which the answers show.
	_, _ = stdinW.Write(bytes.Join([][]byte{initializeRequest(), contextUsageRequest(probeContextID), interruptRequest(probeInterruptID)}, nil))
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var ex *procgroup.Exit
collect:
	for !(p.Initialize.Answered && p.ContextUsage.Answered && p.Interrupt.Answered) {
		select {
		case ev, ok := <-answers:
			if !ok {
				p.Exited = true // stdout closed before stdin: claude ended on its own
				break collect
			}
			p.record(ev)
		case e := <-exited:
			ex = &e
			p.Exited = true
			break collect
		case <-deadline.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	stdinW.Close()
	if ex == nil {
		select {
		case e := <-exited:
			ex = &e
		case <-time.After(spec.KillGrace):
			_ = proc.Kill()
			e := <-exited
			ex = &e
		}
	}
	for ev := range answers { // the rest of stdout, now that claude is gone
		p.record(ev)
	}
	p.ExitCode, _ = exitStatus(ex.State)
	p.Stderr = strings.TrimSpace(stderr.String())
	return p, nil
}

func (p *Probe) record(ev Event) {
	switch {
	case ev.ContextUsage != nil && ev.ContextUsage.RequestID == probeContextID:
		p.ContextUsage = ControlAnswer{Answered: true, Error: ev.ContextUsage.Error}
		p.Context = ev.ContextUsage
	case ev.Control != nil && ev.Control.RequestID == probeInitID:
		p.Initialize = controlAnswer(ev.Control)
	case ev.Control != nil && ev.Control.RequestID == probeInterruptID:
		p.Interrupt = controlAnswer(ev.Control)
	}
}

func controlAnswer(c *ControlResponse) ControlAnswer {
	a := ControlAnswer{Answered: true}
	if c.Subtype != "success" {
		a.Error = cmpOr(c.Error, c.Subtype)
	}
	return a
}

// lockedBuffer collects stderr from exec's copying goroutine, bounded.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := stderrTailBytes - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.ToValidUTF8(string(l.b), "?")
}

var _ io.Writer = (*lockedBuffer)(nil)
