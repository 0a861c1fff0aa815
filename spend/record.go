package spend

import (
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/state"
)

// Figures are the phase's economics and this run's tokens and cost, for
// its record (the recorder applies them: recorder.Spend). The phase's
// tokens and cost are the Meter's, counted per API call across the
// phase's sessions, less what earlier runs of a resumed phase spent (the
// record is this run's), plus what an earlier record of this run carried.
// Exhausted and a progress phase not known yet are the record's to keep.
func (p *Phase) Figures(now time.Time) (ec state.Economics, tokens int64, costUSD float64) {
	a := p.a
	a.mu.Lock()
	defer a.mu.Unlock()
	t := p.meter.Totals()
	lim := p.meter.Limits()
	ec.TokensByKind = t.Tokens
	ec.Tokens = t.Processed()
	ec.CostUSD = t.CostUSD
	ec.ReportedCostUSD = t.ReportedCostUSD
	ec.APITurns = t.Turns
	ec.UnknownModels = t.UnknownModels
	if !p.rec.StartedAt.IsZero() {
		ec.WallMs = now.Sub(p.rec.StartedAt).Milliseconds()
	}
	ec.Limits = StateLimits(lim)
	if !lim.None() {
		ec.Enforcement = string(a.mode)
		used, dim := lim.Used(p.meter.Spend(time.Duration(ec.WallMs) * time.Millisecond))
		ec.UsedPct, ec.Dimension = budget.RoundPct(used*100), string(dim)
		ec.Level = budget.LevelOf(used).String()
	}
	ec.Quarters = p.meter.Quarters()
	ec.Progress = string(p.meter.Progress())
	ec.Extensions = p.extensions
	return ec, p.carriedTokens + max(ec.Tokens-p.priorTokens, 0), p.carriedCost + max(ec.CostUSD-p.priorCost, 0)
}

// RecordRun writes the run's economics from its phases' records (as they
// were last recorded) and the plan's budget.
func (a *Account) RecordRun(run *state.Run, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := run.SumPhases()
	sum.WallMs = now.Sub(run.StartedAt).Milliseconds()
	if plan := a.planMeter(); !plan.Limits().None() { // extensions included
		pl := plan.Limits()
		sum.Limits = StateLimits(pl)
		sum.Enforcement = string(a.mode)
		used, dim := pl.Used(plan.Spend(time.Duration(sum.WallMs) * time.Millisecond))
		sum.UsedPct, sum.Dimension = budget.RoundPct(used*100), string(dim)
		sum.Level = budget.LevelOf(used).String()
	}
	if run.Economics != nil {
		sum.Exhausted = run.Economics.Exhausted
	}
	sum.Extensions = a.planExtensions
	run.Economics = &sum
}

// Spent reports a strict budget already spent before a session starts (a
// remediation or retry after the stop), described "phase tokens 105K of
// 100K": the phase ends at once.
func (p *Phase) Spent(now time.Time) (string, bool) {
	a := p.a
	if a.mode != budget.Strict {
		return "", false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range p.budgets() {
		lim := b.meter.Limits()
		s := b.meter.Spend(now.Sub(b.since))
		if used, dim := lim.Used(s); !lim.None() && used >= 1 {
			return b.name + " " + lim.Describe(s, dim), true
		}
	}
	return "", false
}

// OpenWindow gives an adaptive restart a fresh budget window and returns
// the percent of the budget used before it.
func (p *Phase) OpenWindow(now time.Time) float64 {
	elapsed := now.Sub(p.rec.StartedAt)
	p.a.mu.Lock()
	used, _ := p.meter.Limits().Used(p.meter.Spend(elapsed))
	p.meter.OpenWindow(elapsed)
	p.a.mu.Unlock()
	p.Budget.Quarter = 0
	p.Budget.Reset()
	return budget.RoundPct(used * 100)
}

// Extension is a budget that ran out, which the user may extend: the
// phase's or the plan's (shared by the phases).
type Extension struct {
	p    *Phase
	plan bool
}

// Extension is the phase's budget of scope ("phase" or "plan").
func (p *Phase) Extension(scope string) Extension {
	return Extension{p: p, plan: scope == "plan"}
}

func (x Extension) meter() *budget.Meter {
	if x.plan {
		return x.p.a.plan
	}
	return x.p.meter
}

// Spent reports whether the budget is spent now: under --parallel another
// phase's question may have raised it meanwhile.
func (x Extension) Spent(now time.Time) bool {
	a := x.p.a
	a.mu.Lock()
	defer a.mu.Unlock()
	since := x.p.rec.StartedAt
	if x.plan {
		a.planMeter() // brought up to date
		since = a.runStart
	}
	used, _ := x.meter().Standing(now.Sub(since))
	return used >= 1
}

// Limits are the budget's limits now, extensions included.
func (x Extension) Limits() budget.Limits {
	x.p.a.mu.Lock()
	defer x.p.a.mu.Unlock()
	return x.meter().Limits()
}

// By is what one extension adds: the configured budget.
func (x Extension) By() budget.Limits {
	if x.plan {
		return x.p.a.planLimits
	}
	return x.p.a.phaseLimits
}

// Count is how many times the user extended the budget in this run.
func (x Extension) Count() int {
	x.p.a.mu.Lock()
	defer x.p.a.mu.Unlock()
	if x.plan {
		return x.p.a.planExtensions
	}
	return x.p.extensions
}

// GrantIf extends the budget by By only if its limits are still asked,
// those the user was asked about: of two phases asked at once (--parallel),
// one yes extends it once. It reports whether it extended.
func (x Extension) GrantIf(asked budget.Limits) bool {
	a := x.p.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if x.meter().Limits() != asked {
		return false
	}
	x.meter().Extend(x.By())
	if x.plan {
		a.planExtensions++
	} else {
		x.p.extensions++
	}
	return true
}
