// Package notify tells people elsewhere what a run did: a webhook, ntfy, a
// Slack incoming webhook or a command of their own, for the run's end, a
// blocked phase and a usage limit.
//
// Sending never blocks or fails the run: every event goes out on its own
// goroutine, each delivery is bounded by its target's timeout (retries with
// backoff included), and Flush waits for what is still pending at most a
// bounded time. What is sent is an Event: structured facts and the agent's
// one-line reason, redacted — never tool output, gate output or files.
package notify

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/secrets"
)

// Event names, as sent and as listed in a notify entry's events.
const (
	Completed       = "completed"
	Failed          = "failed"
	Blocked         = "blocked"
	UsageLimit      = "usage_limit"
	BudgetExhausted = "budget_exhausted"
	Interrupted     = "interrupted"
)

// Event is what a notification says. Every text field is debussy's own or
// the agent's one-line reason, redacted by Send.
type Event struct {
	Event string    `json:"event"`
	At    time.Time `json:"at"`
	Run   string    `json:"run"`
	Plan  string    `json:"plan"`
	Phase string    `json:"phase,omitempty"`
	Title string    `json:"title,omitempty"` // the phase's short title
	// Status is the run's status at its end, the phase's otherwise.
	Status string `json:"status,omitempty"`
	// Question is why a phase is blocked (the agent's reason); Answer the
	// exact command that answers it.
	Question string `json:"question,omitempty"`
	Answer   string `json:"answer_command,omitempty"`
	// Reason is one line on what happened (debussy's words, or the agent's).
	Reason string `json:"reason,omitempty"`
	// A usage limit: which, when it resets, and whether the run waits for
	// it (until then) or ended with ExitCode 75.
	Limit   string    `json:"limit,omitempty"`
	Resets  time.Time `json:"resets,omitzero"`
	Waiting bool      `json:"waiting,omitempty"`
	Until   time.Time `json:"until,omitzero"`
	// ExitCode is the exit code of a run that ended (nil while it runs).
	ExitCode *int `json:"exit_code,omitempty"`
	// Message is the event in one sentence, for people.
	Message string `json:"message"`
	// Summary is the run's summary as of the event: its markdown (as in
	// the GitHub step summary) and its phases.
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is the run's state when the event was sent.
type Summary struct {
	Markdown string       `json:"markdown"`
	Phases   []PhaseState `json:"phases"`
	Tokens   int64        `json:"tokens"`
	CostUSD  float64      `json:"cost_usd"`
}

// PhaseState is one phase in a Summary.
type PhaseState struct {
	ID       string   `json:"id"`
	Title    string   `json:"title,omitempty"`
	Status   string   `json:"status"`
	Sessions int      `json:"sessions"`
	Restarts int      `json:"restarts"`
	Attempts int      `json:"attempts"`
	Tokens   int64    `json:"tokens"`
	CostUSD  float64  `json:"cost_usd"`
	Commits  []string `json:"commits,omitempty"`
}

// redacted is ev with every free text passed through the redactor and the
// reasons kept to one line.
func (ev Event) redacted() Event {
	one := func(s string) string { return secrets.Redact(text.OneLine(s, 500)) }
	ev.Title, ev.Question, ev.Reason = one(ev.Title), one(ev.Question), one(ev.Reason)
	ev.Answer, ev.Message, ev.Plan = secrets.Redact(ev.Answer), secrets.Redact(ev.Message), secrets.Redact(ev.Plan)
	if ev.Summary != nil {
		s := *ev.Summary
		s.Markdown = secrets.Redact(s.Markdown)
		s.Phases = slices.Clone(s.Phases)
		for i := range s.Phases {
			s.Phases[i].Title = one(s.Phases[i].Title)
		}
		ev.Summary = &s
	}
	return ev
}

// Failure is a delivery that did not arrive.
type Failure struct {
	Kind   string // the target's kind
	Target string // where it went: the URL's host or the program, never a secret path
	Event  string
	Err    error
}

// Options configure a Dispatcher.
type Options struct {
	Logger *slog.Logger
	// OnFailure is told of every delivery that gave up (beside the
	// warning logged); it may be called from any goroutine.
	OnFailure func(Failure)
	// FlushWait bounds how long Flush waits for pending deliveries; 0 is
	// 10 s.
	FlushWait time.Duration
	// Backoff is the wait before retry n (1-based); nil doubles from 250 ms.
	Backoff func(n int) time.Duration
}

// DefaultTimeout bounds one event's delivery to one target, retries
// included, when the entry names none.
const DefaultTimeout = 5 * time.Second

// maxAttempts is how many times one delivery is tried.
const maxAttempts = 3

// Dispatcher sends events to its targets beside the work. Its methods are
// safe for concurrent use; a nil *Dispatcher sends nothing.
type Dispatcher struct {
	targets []target
	opts    Options
	log     *slog.Logger
	// ctx ends every delivery still running when Flush gives up waiting.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// target is one configured receiver.
type target struct {
	cfg    config.Notify
	sender sender
}

// sender delivers one event once; an error marked permanent is not retried.
type sender interface {
	send(ctx context.Context, ev Event) error
}

// New returns a dispatcher for the entries (validated by config); nil when
// there are none, which sends nothing and costs nothing.
func New(entries []config.Notify, opts Options) *Dispatcher {
	if len(entries) == 0 {
		return nil
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FlushWait <= 0 {
		opts.FlushWait = 10 * time.Second
	}
	if opts.Backoff == nil {
		opts.Backoff = func(n int) time.Duration { return 250 * time.Millisecond << (n - 1) }
	}
	d := &Dispatcher{opts: opts, log: opts.Logger}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	for _, e := range entries {
		d.targets = append(d.targets, target{cfg: e, sender: newSender(e)})
	}
	return d
}

func newSender(e config.Notify) sender {
	switch e.Kind {
	case config.NotifyNtfy:
		return &ntfy{url: e.URL}
	case config.NotifySlack:
		return &slack{url: e.URL}
	case config.NotifyCommand:
		return &command{argv: e.Command}
	}
	return &webhook{url: e.URL}
}

// Send delivers ev to every target that takes its event, each on its own
// goroutine; it returns at once. Free text in ev is redacted first.
func (d *Dispatcher) Send(ev Event) {
	if d == nil {
		return
	}
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	ev = ev.redacted()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	for _, t := range d.targets {
		if len(t.cfg.Events) > 0 && !slices.Contains(t.cfg.Events, ev.Event) {
			continue
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.deliver(t, ev)
		}()
	}
}

// deliver tries one target until it answers, its timeout passes or
// maxAttempts tries failed; a failure is logged and reported, never
// returned.
func (d *Dispatcher) deliver(t target, ev Event) {
	timeout := time.Duration(t.cfg.Timeout)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(d.ctx, timeout)
	defer cancel()
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if err = t.sender.send(ctx, ev); err == nil {
			return
		}
		if isPermanent(err) || attempt == maxAttempts {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.opts.Backoff(attempt)):
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (gave up after %s)", err, timeout)
	}
	f := Failure{Kind: t.cfg.Kind, Target: where(t.cfg), Event: ev.Event, Err: err}
	d.log.Warn("notification not delivered", "kind", f.Kind, "to", f.Target, "event", f.Event, "err", secrets.Redact(err.Error()))
	if d.opts.OnFailure != nil {
		d.opts.OnFailure(f)
	}
}

// Flush waits for the deliveries still pending, at most FlushWait; those
// still running then are abandoned (and reported as failed). Events sent
// after Flush are dropped. It reports whether everything finished in time.
func (d *Dispatcher) Flush() bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d.opts.FlushWait)
	defer t.Stop()
	select {
	case <-done:
		d.cancel()
		return true
	case <-t.C:
	}
	d.cancel()
	// Cancelled deliveries return at once; their failures are reported
	// before Flush returns, while the caller's event log is still open.
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return false
}

// where names a target in logs without what may be a secret: a webhook
// URL's path often is one (Slack's is), so only the host is named.
func where(n config.Notify) string {
	if n.Kind == config.NotifyCommand {
		if len(n.Command) > 0 {
			return n.Command[0]
		}
		return ""
	}
	u, err := url.Parse(n.URL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
