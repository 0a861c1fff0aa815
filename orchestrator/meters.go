package orchestrator

import (
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/session"
)

// phaseMeters are a phase's budgets as its session spends them
// (session.Meters): its own Meter and the plan's, which the phases share,
// each call under the economics' lock and without I/O.
type phaseMeters struct {
	r  *orun
	p  *phaseRun
	pe *phaseEcon
}

func (m phaseMeters) Observe(ev event.Event) budget.Progress {
	e := m.r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	m.pe.meter.Observe(ev)
	return m.pe.meter.Progress()
}

func (m phaseMeters) Check(now time.Time) (session.Standing, bool) {
	e := m.r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.pe.meter.Limits().None() && e.plan.Limits().None() {
		return session.Standing{}, false
	}
	return session.Standing{
		Phase: m.pe.meter.Check(now.Sub(m.p.rec.StartedAt)), Plan: m.r.planMeter().Check(now.Sub(m.r.run.StartedAt)),
		PhaseLimits: m.pe.meter.Limits(), PlanLimits: e.plan.Limits(),
	}, true
}

func (m phaseMeters) Quarter(now time.Time, done, total int) (budget.Quarter, bool) {
	e := m.r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	return m.pe.meter.Quarter(now, now.Sub(m.p.rec.StartedAt), done, total)
}

func (m phaseMeters) NextLevel(now time.Time) (time.Duration, bool) {
	e := m.r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	var next time.Duration
	for _, b := range m.r.budgets(m.pe, m.p) {
		if left, ok := b.meter.NextDurationLevel(now.Sub(b.since)); ok && (next == 0 || left < next) {
			next = left
		}
	}
	return next, next > 0
}

// Live is the phase's spend with the running session's API calls, what the
// agent is doing, and the fuller of the phase's and the plan's budgets.
func (m phaseMeters) Live(now time.Time) session.Live {
	e, pe := m.r.econ(), m.pe
	e.mu.Lock()
	defer e.mu.Unlock()
	t := pe.meter.Totals()
	l := session.Live{Tokens: pe.carriedTokens + t.Processed(), CostUSD: pe.carriedCost + t.CostUSD, Activity: string(pe.meter.Progress())}
	for _, b := range m.r.budgets(pe, m.p) {
		if b.meter.Limits().None() {
			continue
		}
		used, dim := b.meter.Standing(now.Sub(b.since))
		if l.Budget == nil || used*100 > l.Budget.UsedPct {
			l.Budget = &session.BudgetProgress{Scope: b.scope, UsedPct: budget.RoundPct(used * 100), Dimension: string(dim),
				Level: budget.LevelOf(used).String()}
		}
	}
	return l
}

// lessons is what an adaptive restart's checkpoint says the last window
// taught, beside the files, calls and notes every checkpoint carries.
func lessons(reason string) string {
	return reason + ". Lessons so far: at the last session's rate the phase would not finish within its budget. " +
		"The files changed, failed commands and progress notes below are what it tried; do not repeat its exploration, " +
		"finish the remaining tasks by the most direct route, and record each with `debussy progress`."
}

// openWindow gives an adaptive restart a fresh budget window.
func (r *orun) openWindow(p *phaseRun) {
	pe, e := r.phaseEcon(p), r.econ()
	elapsed := r.now().Sub(p.rec.StartedAt)
	e.mu.Lock()
	used, _ := pe.meter.Limits().Used(pe.meter.Spend(elapsed))
	pe.meter.OpenWindow(elapsed)
	e.mu.Unlock()
	pe.b.Quarter = 0
	pe.b.Reset()
	r.event("budget_window", map[string]any{"phase": p.ph.ID, "used_pct": budget.RoundPct(used * 100)})
}
