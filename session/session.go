// Package session owns one claude session end to end, on one goroutine:
// it starts the runner (the transport), folds each stream event into the
// estimator (which measures), the budget Meters and the policy (which
// decides everything in-session), answers the CLI's hook calls from memory,
// runs the handoff's and the duration budgets' timers, and reads the few
// facts on disk its decisions need (watcher). What it decides reaches its
// owner as typed Effects on an unbounded queue; how it ended, as one typed
// Result.
//
// It imports neither the ledger (state) nor a logger: a hook's answer
// cannot wait on the ledger, events.jsonl, a log handler or another
// phase, by the import graph rather than by convention. The owner (the
// orchestrator) records, logs and saves what the Effects say, on its own
// goroutine.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
)

// Config is one session's inputs, all resolved by the owner.
type Config struct {
	Phase  string // the phase's id, in every record and log line
	Number int    // the session's number within the phase, from 1
	// Spec starts claude. OnMark is the session's: the stop timeline
	// becomes Records.
	Spec      runner.Spec
	Policy    policy.Config
	Carried   []string // notes an earlier session decided but never delivered
	Estimator estimator.Config
	// HandoffGraceTime bounds the wait for a requested handoff.
	HandoffGraceTime time.Duration
	Facts            Facts
	// Meters are the budgets; nil runs without any. Budget is the phase's
	// bookkeeping across sessions (required with Meters).
	Meters Meters
	Budget *BudgetState
	// Answers are the run's get_context_usage answers: the session reuses
	// one for its model (Spec.KnownContext) and keeps its own.
	Answers *Answers
	// Root is the work tree; PhaseFile, PlanFile and PhaseContent tell a
	// firm budget which reads are the phase's own.
	Root, PhaseFile, PlanFile, PhaseContent string
	// PointsChecked: the phase already warned about compaction points.
	PointsChecked bool
	// Live asks for the Meters' figures with every Observed (a live view).
	Live bool
	// Hard is a second Ctrl-C: the session is killed at once.
	Hard <-chan struct{}
	// Boundary names the sandbox's refusal a tool's result shows ("write",
	// "read", "network"; "" for none) from the call and its result; nil
	// when the run is not bounded.
	Boundary func(tool string, input json.RawMessage, result string) string
	// FailFast is the cause of a cancellation by another phase's failure
	// (--fail-fast), which the interrupt's record names.
	FailFast error
	Now      func() time.Time
}

// Result is how a session ended: the runner's outcome with its failure
// class (Outcome.Failure), the policy's verdict, and what the next checkpoint needs.
type Result struct {
	Outcome runner.Outcome
	// Trigger is why debussy stopped the session, "" when it did not;
	// Reason says it in words.
	Trigger     estimator.Trigger
	Reason      string
	Done        bool     // the agent ran `debussy done`
	Handoff     string   // the agent's handoff file, when a stop's handoff was written
	NoHandoff   string   // why a handoff that was due is missing
	Avoid       []string // repeated calls the next session must avoid
	Undelivered []string // notes decided but never heard: the next session's first
	Interrupted bool     // Ctrl-C (or --fail-fast) stopped it
	Snapshot    estimator.Snapshot
	Zone        estimator.Zone
	State       policy.State
	StopAt      time.Time // when the stop was decided; zero without one
	// Window is what the session learned of the context window, for the
	// next session; 0 when nothing.
	Window        int64
	PointsChecked bool
	// Refused are the tool calls debussy itself refused (tool_denied: the
	// handoff stage, or the budget), by tool_use id: "handoff" or
	// "budget". The stream shows such a refusal as a failed tool; the
	// checkpoint lists it as debussy's (checkpoint.Input.Refused).
	Refused map[string]string
}

// Session is one running claude session.
type Session struct {
	cfg   Config
	rs    *runner.Session
	q     *queue
	pol   *policy.Policy
	est   *estimator.Estimator
	facts *watcher
	// running is the main thread's tool in flight, for the live view.
	running runningTool
	known   *event.KnownContext
	now     func() time.Time

	// The loop's own: read and written on its goroutine only.
	snap          estimator.Snapshot
	turn          int
	activity      string
	cli           cliFacts
	pointsChecked bool
	refused       map[string]string // Result.Refused
	grace         *time.Timer
	econTimer     *time.Timer
	stopAt        time.Time
	over          bool // the stream ended: a stop decided now has nothing to stop

	interrupted atomic.Bool
	loopDone    chan struct{}
	waited      chan struct{}
	exited      chan struct{} // watchInterrupt returned
	waitOnce    sync.Once
	result      Result
}

// Start starts claude and the session's goroutine. The owner drains the
// Effects (Ready, Take) until Take says the session is over, then calls
// Wait.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Meters != nil && cfg.Budget == nil {
		return nil, errors.New("start session: Meters without a BudgetState")
	}
	s := &Session{cfg: cfg, q: newQueue(), now: cfg.Now, loopDone: make(chan struct{}), waited: make(chan struct{}),
		exited: make(chan struct{}),
		known:  cfg.Spec.KnownContext, pointsChecked: cfg.PointsChecked}
	s.cli.lastBand = -1
	s.cfg.Spec.OnMark = s.mark
	s.pol = policy.New(cfg.Policy, cfg.Carried)
	s.est = estimator.New(cfg.Estimator)
	// Only an adaptive budget counts the phase's checked tasks.
	s.facts = newWatcher(cfg.Facts, cfg.Number, cfg.Meters != nil && cfg.Budget.Mode == budget.Adaptive)
	rs, err := runner.Start(ctx, s.cfg.Spec)
	if err != nil {
		s.facts.close()
		return nil, err
	}
	s.rs = rs
	s.watchInterrupt(ctx)
	s.armEconTimer()
	go s.loop()
	return s, nil
}

// Ready receives when Effects are queued or the session is over.
func (s *Session) Ready() <-chan struct{} { return s.q.ready }

// Take returns the Effects queued so far, in order, and whether the
// session's stream is over (nothing more will be queued but the
// interrupt's own records).
func (s *Session) Take() ([]Effect, bool) { return s.q.take() }

// Wait waits for claude and its process group to be gone and returns how
// the session ended. It needs no Take first: the session never waits on
// its owner. Effects queued by then are still there to Take.
func (s *Session) Wait() Result {
	<-s.loopDone
	out := s.rs.Wait()
	s.waitOnce.Do(func() { close(s.waited) })
	<-s.exited
	r := s.result
	r.Outcome = out
	r.Interrupted = s.interrupted.Load()
	return r
}

// loop is the session's goroutine: stream events in order, the handoff's
// and the duration budgets' timers.
func (s *Session) loop() {
	defer close(s.loopDone)
	defer s.q.close()
	defer s.finish()
	events := s.rs.Events()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			s.see(ev)
		case <-s.graceC():
			s.pol.GraceExpired(s.cfg.HandoffGraceTime.String())
			s.perform()
		case <-s.econC():
			// No event for a while (a long tool): the duration budgets
			// are checked all the same, and a stop waits for that tool's
			// PostToolUse or interrupts it after stop_grace.
			s.checkBudgets()
			s.perform()
			s.armEconTimer()
			s.q.push(Tick{Snap: s.snap})
		}
	}
}

// finish keeps the policy's verdict for the Result.
func (s *Session) finish() {
	if s.grace != nil {
		s.grace.Stop()
	}
	if s.econTimer != nil {
		s.econTimer.Stop()
	}
	// The stream is over: the signals once more, for a command no hook
	// saw to its end (a handoff left for this session restarts from it,
	// never "ended without `debussy done`").
	s.over = true
	done := s.facts.signalled()
	s.pol.SignalStatus(s.facts.signalStatus())
	s.pol.Signals(done, s.facts.handedOff())
	s.facts.close()
	s.perform()
	o := s.pol.Outcome()
	r := Result{Trigger: o.Trigger, Reason: o.Reason, Done: o.Done, NoHandoff: o.NoHandoff, Avoid: o.Avoid,
		Undelivered: o.Undelivered, Snapshot: s.snap, Zone: s.pol.Zone(), State: s.pol.State(),
		Window: learnedWindow(s.snap), PointsChecked: s.pointsChecked, Refused: s.refused}
	if o.Trigger != "" {
		r.Handoff, r.StopAt = o.Handoff, s.stopAt
	}
	s.result = r
}

// see folds one stream event into the estimator, the policy and the
// budgets and, for a hook call, answers it, in stream order, so every
// answer is decided with all the events before it. Then it queues what
// was decided and what is worth telling.
func (s *Session) see(ev event.Event) {
	snap := s.est.Observe(ev)
	s.snap, s.turn = snap, snap.Messages
	s.pol.Observe(ev, snap)
	s.observeBudgets(ev)
	if ev.Kind == event.KindHook && ev.Hook != nil {
		s.answer(ev.Hook)
	}
	if ev.Kind == event.KindToolResult {
		s.facts.changed()
	}
	s.perform()
	s.running.observe(ev, s.now())
	o := Observed{Event: ev, Snap: snap, Running: s.running.now()}
	if s.cfg.Live && s.cfg.Meters != nil {
		live := s.cfg.Meters.Live(s.now())
		o.Live = &live
	}
	s.q.push(o)
	s.observeCLI(ev, snap)
	s.logEvent(ev, snap)
}

// answer replies to one hook call from memory and the facts it needs.
// Every call is answered exactly once.
func (s *Session) answer(h *event.HookCall) {
	h.Answer(s.pol.Hook(h, hookFacts{s}))
}

// hookFacts are the facts on disk a hook's answer needs (policy.Facts),
// read when the policy asks.
type hookFacts struct{ s *Session }

func (f hookFacts) Signalled() bool          { return f.s.facts.signalled() }
func (f hookFacts) SignalStatus() string     { return f.s.facts.signalStatus() }
func (f hookFacts) HandedOff() bool          { return f.s.facts.handedOff() }
func (f hookFacts) HandoffSize() int64       { return f.s.facts.handoffSize() }
func (f hookFacts) PhaseFile(c *policy.Call) { f.s.callPhaseFile(c) }

// graceC fires when the handoff's time is up; nil when no handoff is due.
func (s *Session) graceC() <-chan time.Time {
	if !s.pol.GraceDue() {
		return nil
	}
	if s.grace == nil {
		s.grace = time.NewTimer(s.cfg.HandoffGraceTime)
	}
	return s.grace.C
}

// watchInterrupt reports Ctrl-C while the session runs (the stop itself is
// the runner's, through ctx) and kills the session at once on a second
// one. It runs beside the loop: it reads none of the loop's fields.
func (s *Session) watchInterrupt(ctx context.Context) {
	go func() {
		defer close(s.exited)
		select {
		case <-s.waited:
			return
		case <-ctx.Done():
		}
		s.interrupted.Store(true)
		if s.cfg.FailFast != nil && errors.Is(context.Cause(ctx), s.cfg.FailFast) {
			s.log(policy.LevelWarn, "another phase failed (--fail-fast): stopping the session after the running tool")
			s.record(record.Interrupt{Session: s.stamp(false), FailFast: true})
		} else {
			s.log(policy.LevelWarn, "interrupted: stopping the session after the running tool (Ctrl-C again to kill it now)")
			s.record(record.Interrupt{Session: s.stamp(false)})
		}
		select {
		case <-s.waited:
		case <-s.cfg.Hard:
			s.log(policy.LevelWarn, "second interrupt: killing the session")
			s.rs.Kill()
		}
	}()
}

// mark is the runner's stop timeline (Spec.OnMark), on the runner's
// goroutine: it only queues.
func (s *Session) mark(m runner.Mark) {
	s.q.push(Record{Event: record.Mark{Name: string(m.Name), Session: s.stamp(false), MarkFields: m.Fields}}, s.markLog(m))
}
