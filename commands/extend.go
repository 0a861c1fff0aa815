package commands

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/public"
)

// extendTimeout is how long the question waits for an answer; silence is no.
const extendTimeout = 60 * time.Second

// extender is the run's Options.Extend: a question on the terminal when a
// budget runs out. nil (never extend) unless stdin and stderr are both
// terminals and CI is unset: no one would answer in CI, in a pipe or under
// nohup, and a question nobody sees must not hold a run for a minute.
func (e *Env) extender(view *liveView) func(context.Context, orchestrator.ExtendRequest) bool {
	if !public.IsTerminal(e.Stdin) || !public.IsTerminal(e.Stderr) || public.InCI(e.Getenv) {
		return nil
	}
	q := &extendQuestion{in: e.Stdin, out: e.Stderr, timeout: extendTimeout, after: time.After, view: view}
	return q.ask
}

// extendQuestion asks whether to extend a spent budget, one question at a
// time (parallel phases may ask together).
type extendQuestion struct {
	mu      sync.Mutex
	in      io.Reader
	out     io.Writer
	timeout time.Duration
	after   func(time.Duration) <-chan time.Time
	view    *liveView

	once  sync.Once
	lines chan string // stdin's lines; closed at its end
}

// readLines feeds q.lines from stdin, from the first question on: a read
// cannot be abandoned, so one reader serves every question.
func (q *extendQuestion) readLines() {
	q.lines = make(chan string)
	go func() {
		defer close(q.lines)
		r := bufio.NewReader(q.in)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				q.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
}

// ask puts req to the user and reports a yes. No answer within the
// timeout, an empty line, the end of stdin or Ctrl-C is no.
func (q *extendQuestion) ask(ctx context.Context, req orchestrator.ExtendRequest) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.once.Do(q.readLines)
	// A line typed before the question is not its answer.
	for drained := false; !drained; {
		select {
		case _, ok := <-q.lines:
			drained = !ok
		default:
			drained = true
		}
	}
	q.view.hold()
	defer q.view.release()
	fmt.Fprintf(q.out, "\ndebussy: phase %s: the %s budget is spent (%s); extension %d of at most %d (budget.max_extensions).\n",
		req.Phase, req.Scope, req.Spent, req.N, req.Max)
	fmt.Fprintf(q.out, "Extend the %s budget by %s (100 %%)? [y/N] (no in %s) ", req.Scope, req.By, q.timeout)
	timeout := q.after(q.timeout)
	select {
	case line, ok := <-q.lines:
		if !ok {
			fmt.Fprintln(q.out, "no (no input)")
			return false
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		}
		return false
	case <-timeout:
		fmt.Fprintf(q.out, "no (no answer within %s)\n", q.timeout)
	case <-ctx.Done():
		fmt.Fprintln(q.out, "no (interrupted)")
	}
	return false
}
