package orchestrator

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/report"
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

func endGateTrace(span telemetry.Span, res gate.Result) {
	failed := ""
	if !res.Passed() {
		failed = "gate failed"
	}
	telemetry.End(span, failed, attribute.Int("debussy.exit_code", res.ExitCode), attribute.Bool("debussy.timed_out", res.TimedOut),
		attribute.Int64("debussy.duration_ms", res.Duration.Milliseconds()))
}
