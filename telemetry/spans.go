package telemetry

import (
	"context"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// Spans are a run's spans, made from its facts (a subscriber of the run's
// recorder): the run's, a phase's under it, a session's, a gate's and a
// commit's under their phase. Only structured facts and debussy's own
// words become attributes: no prompt, tool output or error text leaves.
// With a tracer that is off every span is a no-op.
type Spans struct {
	t     *Tracer
	runID string

	mu       sync.Mutex // ChildEnv is asked from the phases' goroutines
	run      context.Context
	runSpan  Span
	ended    bool
	phases   map[string]scope
	sessions map[sessionKey]scope
}

type scope struct {
	ctx  context.Context
	span Span
}

type sessionKey struct {
	phase string
	n     int
}

// Spans starts the run's span (it joins the TRACEPARENT debussy was
// started with) for run runID of plan.
func (t *Tracer) Spans(ctx context.Context, runID, plan string) *Spans {
	s := &Spans{t: t, runID: runID, phases: map[string]scope{}, sessions: map[sessionKey]scope{}}
	s.run, s.runSpan = t.Start(ctx, "debussy.run", attribute.String("debussy.run", runID), attribute.String("debussy.plan", plan))
	return s
}

// Tell makes the spans fact ev (at at) starts or ends; run is the run's
// record as the fact left it.
func (s *Spans) Tell(at time.Time, ev record.Event, run *state.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev := ev.(type) {
	case record.PhaseStarted:
		ctx, span := s.start(s.run, "debussy.phase", at, attribute.String("debussy.run", s.runID),
			attribute.String("debussy.phase", ev.Phase), attribute.String("debussy.phase.title", ev.Short))
		s.phases[ev.Phase] = scope{ctx, span}
	case record.PhaseEnded:
		s.endPhase(at, ev.Phase, run.Phase(ev.Phase))
	case record.SessionSpawned:
		attempts := 0
		if rec := run.Phase(ev.Phase); rec != nil {
			attempts = rec.Attempts
		}
		ctx, span := s.start(s.phase(ev.Phase), "debussy.session", at, attribute.String("debussy.run", s.runID),
			attribute.String("debussy.phase", ev.Phase), attribute.Int("debussy.session", ev.Session),
			attribute.Int("debussy.attempt", attempts))
		s.sessions[sessionKey{ev.Phase, ev.Session}] = scope{ctx, span}
	case record.SessionEnded:
		s.endSession(at, ev)
	case record.Gate:
		if ev.Unchecked || ev.DurationMs == nil {
			return
		}
		_, span := s.start(s.phase(ev.Phase), "debussy.gate", at.Add(-time.Duration(*ev.DurationMs)*time.Millisecond),
			attribute.String("debussy.phase", ev.Phase), attribute.String("debussy.gate", ev.Gate))
		failed := ""
		if !ev.Passed {
			failed = "gate failed"
		}
		endAt(span, at, failed, attribute.Int("debussy.exit_code", deref(ev.ExitCode)), attribute.Bool("debussy.timed_out", deref(ev.TimedOut)),
			attribute.Int64("debussy.duration_ms", *ev.DurationMs))
	case record.Commit:
		s.commit(at, ev.Phase, ev.Kind, ev.DurationMs, "", attribute.String("debussy.commit", ev.Commit), attribute.Int("debussy.commit.files", ev.Files))
	case record.CommitNothing:
		s.commit(at, ev.Phase, ev.Kind, ev.DurationMs, "", attribute.Bool("debussy.commit.nothing", true))
	case record.CommitFailed:
		s.commit(at, ev.Phase, ev.Kind, ev.DurationMs, "commit failed")
	case record.CommitRejected:
		if !ev.Empty {
			s.commit(at, ev.Phase, ev.Kind, ev.DurationMs, "commit failed")
		}
	case record.RunEnded:
		s.endRun(at, run)
	}
}

// ChildEnv is what session n of phase gets: TRACEPARENT naming its span,
// and its run, phase and session as resource attributes; nil when tracing
// is off or the session has no span.
func (s *Spans) ChildEnv(phase string, n int) map[string]string {
	if !s.t.On() {
		return nil
	}
	s.mu.Lock()
	sc, ok := s.sessions[sessionKey{phase, n}]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s.t.ChildEnv(sc.ctx, attribute.String("debussy.run", s.runID), attribute.String("debussy.phase", phase),
		attribute.String("debussy.session", strconv.Itoa(n)))
}

// Close ends what is still open: the run's span of a run refused before
// it started, a session's that could not start.
func (s *Spans) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id := range s.phases {
		s.endPhase(now, id, nil)
	}
	if !s.ended {
		s.ended = true
		End(s.runSpan, "refused")
	}
	return nil
}

func (s *Spans) start(parent context.Context, name string, at time.Time, attrs ...attribute.KeyValue) (context.Context, Span) {
	if !s.t.On() {
		return parent, trace.SpanFromContext(context.Background())
	}
	return s.t.tracer.Start(parent, name, trace.WithAttributes(attrs...), trace.WithTimestamp(at))
}

// phase is the context of phase id's span (the run's without one).
func (s *Spans) phase(id string) context.Context {
	if sc, ok := s.phases[id]; ok {
		return sc.ctx
	}
	return s.run
}

func (s *Spans) commit(at time.Time, phase, kind string, ms int64, failed string, attrs ...attribute.KeyValue) {
	_, span := s.start(s.phase(phase), "debussy.commit", at.Add(-time.Duration(ms)*time.Millisecond),
		attribute.String("debussy.phase", phase), attribute.String("debussy.commit.event", kind))
	endAt(span, at, failed, attrs...)
}

func (s *Spans) endSession(at time.Time, ev record.SessionEnded) {
	k := sessionKey{ev.Phase, ev.Session}
	sc, ok := s.sessions[k]
	if !ok {
		return
	}
	delete(s.sessions, k)
	attrs := []attribute.KeyValue{attribute.String("debussy.outcome", ev.Outcome),
		attribute.Int("debussy.exit_code", ev.ExitCode), attribute.Int64("debussy.context.peak_tokens", max(ev.PeakTokens, ev.ContextTokens)),
		attribute.Float64("debussy.context.percent", ev.Percent), attribute.Int("debussy.tool_calls", ev.ToolCalls),
		attribute.Float64("debussy.cost_usd", ev.CostUSD), attribute.Int("debussy.api_turns", ev.APITurns),
		attribute.Int64("debussy.tokens", ev.Tokens)}
	if ev.Trigger != "" {
		attrs = append(attrs, attribute.String("debussy.restart_trigger", ev.Trigger))
	}
	if ev.Failure != "" {
		attrs = append(attrs, attribute.String("debussy.failure_class", ev.Failure))
	}
	if ev.Model != "" {
		attrs = append(attrs, attribute.String("debussy.model", ev.Model))
	}
	failed := ""
	if ev.Failure != "" && ev.Failure != "none" {
		failed = ev.Failure
	}
	endAt(sc.span, at, failed, attrs...)
}

// endPhase ends phase id's span with its record's figures (nil: it ended
// with the run), and the span of a session of it that never ended (it
// could not start).
func (s *Spans) endPhase(at time.Time, id string, rec *state.PhaseRecord) {
	for k, sc := range s.sessions {
		if k.phase == id {
			delete(s.sessions, k)
			endAt(sc.span, at, "start failed")
		}
	}
	sc, ok := s.phases[id]
	if !ok {
		return
	}
	delete(s.phases, id)
	if rec == nil {
		endAt(sc.span, at, "interrupted")
		return
	}
	failed := ""
	if rec.Status != state.StatusCompleted {
		failed = string(rec.Status)
	}
	attrs := []attribute.KeyValue{attribute.String("debussy.status", string(rec.Status)),
		attribute.Int("debussy.attempts", rec.Attempts), attribute.Int("debussy.restarts", rec.Restarts),
		attribute.Int("debussy.sessions", rec.Sessions), attribute.Int64("debussy.tokens", rec.Tokens),
		attribute.Float64("debussy.cost_usd", rec.CostUSD), attribute.Int("debussy.usage_limits", rec.UsageLimits)}
	if e := rec.Economics; e != nil && e.Exhausted {
		attrs = append(attrs, attribute.Bool("debussy.budget_exhausted", true))
	}
	endAt(sc.span, at, failed, attrs...)
}

// endRun ends the run's span with the run's record: this run's figures,
// as its summary says them.
func (s *Spans) endRun(at time.Time, run *state.Run) {
	if s.ended {
		return
	}
	s.ended = true
	var tokens int64
	var cost float64
	for _, p := range run.Phases {
		tokens, cost = tokens+p.Tokens, cost+p.CostUSD
	}
	failed := ""
	if run.Status != state.StatusCompleted {
		failed = string(run.Status)
	}
	endAt(s.runSpan, at, failed, attribute.String("debussy.status", string(run.Status)),
		attribute.Int("debussy.exit_code", run.ExitCode), attribute.Int64("debussy.tokens", tokens),
		attribute.Float64("debussy.cost_usd", cost), attribute.Int("debussy.phases", len(run.Phases)))
}

// endAt is End at a fact's time (zero: now).
func endAt(span Span, at time.Time, failed string, attrs ...attribute.KeyValue) {
	var opts []trace.SpanEndOption
	if !at.IsZero() {
		opts = append(opts, trace.WithTimestamp(at))
	}
	if !span.IsRecording() {
		span.End(opts...)
		return
	}
	span.SetAttributes(attrs...)
	if failed != "" {
		span.SetStatus(codes.Error, failed)
	}
	span.End(opts...)
}

func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
