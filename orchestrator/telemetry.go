package orchestrator

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
)

// The run's spans (package telemetry): run → phase → session, gate and
// commit, with the ledger's figures as attributes. Only structured facts
// and debussy's own words: no prompt, tool output or error text leaves.
// With no Tracer, or one that is off, every span is a no-op.

// endRunTrace ends the run's span with the run's record; nil: refused.
func endRunTrace(span telemetry.Span, run *state.Run) {
	if span == nil {
		return
	}
	if run == nil {
		telemetry.End(span, "refused")
		return
	}
	t := report.TotalsOf(run) // this run's, as the summary says it
	failed := ""
	if run.Status != state.StatusCompleted {
		failed = string(run.Status)
	}
	telemetry.End(span, failed, attribute.String("debussy.status", string(run.Status)),
		attribute.Int("debussy.exit_code", run.ExitCode), attribute.Int64("debussy.tokens", t.RunTokens),
		attribute.Float64("debussy.cost_usd", t.RunCostUSD), attribute.Int("debussy.phases", len(run.Phases)))
}

func (p *phaseRun) startPhaseTrace(ctx context.Context) context.Context {
	r := p.r
	ctx, span := r.Tracer.Start(ctx, "debussy.phase", attribute.String("debussy.run", r.id),
		attribute.String("debussy.phase", p.ph.ID), attribute.String("debussy.phase.title", p.ph.ShortTitle()))
	p.trace = ctx
	p.phaseSpan = span
	return ctx
}

func (p *phaseRun) endPhaseTrace() {
	if p.phaseSpan == nil {
		return
	}
	rec := p.rec
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
	telemetry.End(p.phaseSpan, failed, attrs...)
}

// startSessionTrace starts session n's span under the phase's and returns
// its context, which the child's TRACEPARENT names (withTraceEnv).
func (p *phaseRun) startSessionTrace(ctx context.Context, n int) context.Context {
	r := p.r
	if p.trace != nil {
		ctx = p.trace
	}
	ctx, span := r.Tracer.Start(ctx, "debussy.session", attribute.String("debussy.run", r.id),
		attribute.String("debussy.phase", p.ph.ID), attribute.Int("debussy.session", n),
		attribute.Int("debussy.attempt", p.rec.Attempts))
	p.sessionSpan = span
	p.contextPeak = 0
	return ctx
}

func (p *phaseRun) endSessionTrace(res session.Result, startErr error) {
	span := p.sessionSpan
	p.sessionSpan, p.sessionTrace = nil, nil
	if span == nil {
		return
	}
	if startErr != nil {
		telemetry.End(span, "start failed")
		return
	}
	out := res.Outcome
	peak := max(p.contextPeak, res.Snapshot.Tokens)
	attrs := []attribute.KeyValue{attribute.String("debussy.outcome", string(out.Kind)),
		attribute.Int("debussy.exit_code", out.ExitCode), attribute.Int64("debussy.context.peak_tokens", peak),
		attribute.Float64("debussy.context.percent", res.Snapshot.Percent), attribute.Int("debussy.tool_calls", res.Snapshot.ToolCalls)}
	if res.Trigger != "" {
		attrs = append(attrs, attribute.String("debussy.restart_trigger", string(res.Trigger)))
	}
	if c := out.Failure.Class; c != "" {
		attrs = append(attrs, attribute.String("debussy.failure_class", string(c)))
	}
	if res.Snapshot.Model != "" {
		attrs = append(attrs, attribute.String("debussy.model", res.Snapshot.Model))
	}
	if rs := out.Result; rs != nil {
		attrs = append(attrs, attribute.Float64("debussy.cost_usd", rs.CostUSD), attribute.Int("debussy.api_turns", rs.NumTurns),
			attribute.Int64("debussy.tokens", rs.Usage.InputTokens+rs.Usage.OutputTokens+rs.Usage.CacheReadInputTokens+rs.Usage.CacheCreationInputTokens))
	}
	failed := ""
	if out.Failure.Class != "" && string(out.Failure.Class) != "none" {
		failed = string(out.Failure.Class)
	}
	telemetry.End(span, failed, attrs...)
}

// withTraceEnv adds to the child's environment the TRACEPARENT of session
// n's span and its run, phase and session as resource attributes; set
// unchanged when tracing is off.
func (p *phaseRun) withTraceEnv(n int, set map[string]string) map[string]string {
	r := p.r
	if p.sessionTrace == nil || !r.Tracer.On() {
		return set
	}
	for k, v := range r.Tracer.ChildEnv(p.sessionTrace, attribute.String("debussy.run", r.id),
		attribute.String("debussy.phase", p.ph.ID), attribute.String("debussy.session", strconv.Itoa(n))) {
		set[k] = v
	}
	return set
}

func (p *phaseRun) startCommitTrace(event commitEvent) telemetry.Span {
	r := p.r
	ctx := context.Background()
	if p.trace != nil {
		ctx = p.trace
	}
	_, span := r.Tracer.Start(ctx, "debussy.commit", attribute.String("debussy.phase", p.ph.ID),
		attribute.String("debussy.commit.event", string(event)))
	return span
}

func endCommitTrace(span telemetry.Span, c gitcommit.Commit, err error) {
	switch {
	case err == nil:
		telemetry.End(span, "", attribute.String("debussy.commit", c.Hash), attribute.Int("debussy.commit.files", c.Files))
	case isNothing(err):
		telemetry.End(span, "", attribute.Bool("debussy.commit.nothing", true))
	default:
		telemetry.End(span, "commit failed")
	}
}

func isNothing(err error) bool { return errors.Is(err, gitcommit.ErrNothingToCommit) }

func endGateTrace(span telemetry.Span, res gate.Result) {
	failed := ""
	if !res.Passed() {
		failed = "gate failed"
	}
	telemetry.End(span, failed, attribute.Int("debussy.exit_code", res.ExitCode), attribute.Bool("debussy.timed_out", res.TimedOut),
		attribute.Int64("debussy.duration_ms", res.Duration.Milliseconds()))
}
