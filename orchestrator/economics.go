package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// ErrBudgetExhausted ends a run whose phase or plan budget ran out under
// strict enforcement (or adaptive at 100 % without a restart): the work is
// committed, later phases are not started. The phase is recorded failed
// with economics.exhausted set, so a rerun resumes it like any failure.
var ErrBudgetExhausted = errors.New("budget exhausted")

// Budget scopes, in messages and events.
const (
	scopePhase = session.ScopePhase
	scopePlan  = session.ScopePlan
)

// economics is the run's spend: one Meter per phase, fed its sessions'
// events, and one for the plan whose spend is the phases' sum (planMeter):
// with --parallel several sessions run at once, and one Meter cannot follow
// two processes.
type economics struct {
	// mu guards every Meter and the phases' map: the sessions' readers
	// (session.Meters, meters.go) count and check without the run's lock. Held only
	// around Meter calls, never across I/O.
	mu       sync.Mutex
	mode     budget.Mode
	adaptive budget.AdaptiveConfig
	prices   budget.Prices
	plan     *budget.Meter
	phases   map[string]*phaseEcon
	// ids are phases' keys, sorted: the plan's sum in a fixed order
	// without sorting on every stream event.
	ids []string
	// planExtensions counts the user's extensions of the plan's budget.
	planExtensions int
}

// phaseEcon is one phase's economics in this run.
type phaseEcon struct {
	meter *budget.Meter
	// b is the budget's bookkeeping across the phase's sessions: written
	// by the running session, read here between sessions.
	b       session.BudgetState
	session budget.Totals // the phase's totals when the running session started
	// carried is what an earlier run of the phase spent that its Meter
	// did not count (no economics record): in the record's totals only.
	carriedTokens int64
	carriedCost   float64
	// priorTokens and priorCost are the earlier runs' spend the Meter
	// starts from (a resumed phase's budget counts it): not this run's.
	priorTokens int64
	priorCost   float64
	extensions  int // the user's extensions of the phase's budget in this run
}

func limitsOf(l config.Limits) budget.Limits {
	return budget.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, Duration: time.Duration(l.Duration)}
}

func stateLimits(l budget.Limits) state.Limits {
	return state.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, DurationMs: l.Duration.Milliseconds()}
}

// econ returns the run's economics, made on first use.
func (r *orun) econ() *economics {
	if r.economics != nil {
		return r.economics
	}
	b := r.cfg.Budget
	e := &economics{
		mode:     budget.Mode(b.Enforcement),
		adaptive: budget.AdaptiveConfig{RestartThreshold: b.RestartThreshold, MinCompletionProbability: b.MinCompletionProbability},
		prices:   budget.DefaultPrices(),
		phases:   map[string]*phaseEcon{},
	}
	if e.mode == "" {
		e.mode = budget.Strict
	}
	over := budget.Prices{}
	for name, p := range b.Prices {
		over[name] = budget.Price{Input: p.Input, Output: p.Output, CacheWrite: p.CacheWrite, CacheRead: p.CacheRead}
	}
	e.prices = e.prices.Merge(over)
	// Adaptive quarters are of a phase's budget; the plan's only stops.
	e.plan = budget.NewMeter(limitsOf(b.Plan), e.mode, budget.AdaptiveConfig{RestartThreshold: 2}, e.prices)
	r.economics = e
	return e
}

// budgetScope is one budget a phase runs under: its Meter and when its
// duration began.
type budgetScope struct {
	scope string
	meter *budget.Meter
	since time.Time
}

// budgets are phase p's budgets: its own, then the plan's (brought up to
// date). e.mu held.
func (r *orun) budgets(pe *phaseEcon, p *phaseRun) [2]budgetScope {
	return [2]budgetScope{{scopePhase, pe.meter, p.rec.StartedAt}, {scopePlan, r.planMeter(), r.run.StartedAt}}
}

// planMeter returns the plan's Meter with its spend brought up to date:
// the sum of this run's phase Meters, in a fixed order. e.mu held.
func (r *orun) planMeter() *budget.Meter {
	e := r.econ()
	var sum budget.Totals
	for _, id := range e.ids {
		sum = sum.Add(e.phases[id].meter.Totals())
	}
	e.plan.SetTotals(sum)
	return e.plan
}

// phaseEcon returns phase p's economics in this run.
func (r *orun) phaseEcon(p *phaseRun) *phaseEcon {
	e := r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	if pe, ok := e.phases[p.ph.ID]; ok {
		return pe
	}
	pe := &phaseEcon{
		meter: budget.NewMeter(limitsOf(r.cfg.Budget.Phase), e.mode, e.adaptive, e.prices),
		b: session.BudgetState{Mode: e.mode, MinCompletionProbability: e.adaptive.MinCompletionProbability,
			Written: map[string]bool{}},
	}
	pe.carriedTokens, pe.carriedCost = p.rec.Tokens, p.rec.CostUSD
	if prev := p.prevSpend; prev != nil {
		// A resumed phase's budget counts what its earlier runs spent, as
		// the exhausted message says: a spent budget stays spent until it
		// is raised, and a CI job retrying the run cannot spend it again.
		pe.meter.SetTotals(budget.Totals{Tokens: prev.TokensByKind, CostUSD: prev.CostUSD,
			ReportedCostUSD: prev.ReportedCostUSD, Turns: prev.APITurns})
		// The Meter starts at the earlier runs' spend; the record is this
		// run's alone.
		pe.priorTokens, pe.priorCost = prev.Tokens, prev.CostUSD
	}
	e.phases[p.ph.ID] = pe
	i, _ := slices.BinarySearch(e.ids, p.ph.ID)
	e.ids = slices.Insert(e.ids, i, p.ph.ID)
	return pe
}

// startEconomics begins a session's accounting.
func (r *orun) startEconomics(p *phaseRun) {
	pe, e := r.phaseEcon(p), r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	pe.meter.StartSession()
	pe.session = pe.meter.Totals()
}

// endEconomics folds the session that ended into the phase's and the
// run's records and returns what the session alone spent, for its event.
func (r *orun) endEconomics(p *phaseRun) budget.Totals {
	pe, e := r.phaseEcon(p), r.econ()
	e.mu.Lock()
	pe.meter.EndSession()
	t := pe.meter.Totals()
	e.mu.Unlock()
	r.recordEconomics(p)
	s := pe.session.Tokens
	return budget.Totals{
		Tokens: budget.Tokens{Input: t.Tokens.Input - s.Input, Output: t.Tokens.Output - s.Output,
			CacheWrite: t.Tokens.CacheWrite - s.CacheWrite, CacheRead: t.Tokens.CacheRead - s.CacheRead},
		CostUSD:         t.CostUSD - pe.session.CostUSD,
		ReportedCostUSD: t.ReportedCostUSD - pe.session.ReportedCostUSD,
		Turns:           t.Turns - pe.session.Turns,
	}
}

// recordEconomics writes the phase's and the run's economics into the
// ledger's records (the caller saves). The phase's tokens and cost are the
// Meter's, counted per API call across the phase's sessions, plus what an
// earlier run of the phase spent (a resume).
func (r *orun) recordEconomics(p *phaseRun) {
	e := r.econ()
	pe := r.phaseEcon(p)
	e.mu.Lock()
	defer e.mu.Unlock()
	t := pe.meter.Totals()
	lim := pe.meter.Limits()
	ec := p.rec.Economics
	if ec == nil {
		ec = &state.Economics{}
		p.rec.Economics = ec
	}
	ec.TokensByKind = t.Tokens
	ec.Tokens = t.Processed()
	ec.CostUSD = t.CostUSD
	ec.ReportedCostUSD = t.ReportedCostUSD
	ec.APITurns = t.Turns
	ec.UnknownModels = t.UnknownModels
	if !p.rec.StartedAt.IsZero() {
		ec.WallMs = r.now().Sub(p.rec.StartedAt).Milliseconds()
	}
	ec.Limits = stateLimits(lim)
	if !lim.None() {
		ec.Enforcement = string(e.mode)
		used, dim := lim.Used(pe.meter.Spend(time.Duration(ec.WallMs) * time.Millisecond))
		ec.UsedPct, ec.Dimension = budget.RoundPct(used*100), string(dim)
		ec.Level = budget.LevelOf(used).String()
	}
	ec.Quarters = pe.meter.Quarters()
	if pr := pe.meter.Progress(); pr != "" {
		ec.Progress = string(pr)
	}
	p.rec.Tokens = pe.carriedTokens + max(ec.Tokens-pe.priorTokens, 0)
	p.rec.CostUSD = pe.carriedCost + max(ec.CostUSD-pe.priorCost, 0)

	run := r.run.SumPhases()
	run.WallMs = r.now().Sub(r.run.StartedAt).Milliseconds()
	if plan := r.planMeter(); !plan.Limits().None() { // extensions included
		pl := plan.Limits()
		run.Limits = stateLimits(pl)
		run.Enforcement = string(e.mode)
		used, dim := pl.Used(plan.Spend(time.Duration(run.WallMs) * time.Millisecond))
		run.UsedPct, run.Dimension = budget.RoundPct(used*100), string(dim)
		run.Level = budget.LevelOf(used).String()
	}
	if r.run.Economics != nil {
		run.Exhausted = r.run.Economics.Exhausted
	}
	run.Extensions = e.planExtensions
	r.run.Economics = &run
}

// budgetSpent reports a strict budget already spent before a session
// starts (a remediation or retry after the stop): the phase ends at once.
func (r *orun) budgetSpent(p *phaseRun) (string, bool) {
	if r.econ().mode != budget.Strict {
		return "", false
	}
	now := r.now()
	pe, e := r.phaseEcon(p), r.econ()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range r.budgets(pe, p) {
		lim := m.meter.Limits()
		s := m.meter.Spend(now.Sub(m.since))
		if used, dim := lim.Used(s); !lim.None() && used >= 1 {
			return m.scope + " " + lim.Describe(s, dim), true
		}
	}
	return "", false
}

// ExtendRequest is a budget that ran out, put to the user (Options.Extend).
type ExtendRequest struct {
	Phase, Title string
	Scope        string // whose budget: "phase" or "plan"
	Spent        string // what was spent of which dimension: "tokens 101.2K of 100K"
	By           string // what an extension adds, the configured budget: "tokens 100K"
	N, Max       int    // this would be extension N of at most Max of this budget
}

// extendBudget asks the user (Options.Extend) whether to extend the budget
// that ran out, spent being its scope and spend ("phase tokens 101K of
// 100K"), and extends it when they say yes: by its configured amount, each
// limit it sets, recorded in the ledger and the events. It reports whether
// the phase may go on.
func (r *orun) extendBudget(ctx context.Context, p *phaseRun, spent string) bool {
	if r.Extend == nil || ctx.Err() != nil {
		return false
	}
	scope, what, _ := strings.Cut(spent, " ")
	e, pe := r.econ(), r.phaseEcon(p)
	meter, by, count, since := pe.meter, limitsOf(r.cfg.Budget.Phase), &pe.extensions, p.rec.StartedAt
	if scope == scopePlan {
		meter, by, count, since = e.plan, limitsOf(r.cfg.Budget.Plan), &e.planExtensions, r.run.StartedAt
	}
	limits := func() budget.Limits {
		e.mu.Lock()
		defer e.mu.Unlock()
		return meter.Limits()
	}
	// The plan's budget is shared by parallel phases: another phase's
	// question may have raised it since this phase ran out, or while
	// this one was asked. One yes is one extension; the others go on.
	spentNow := func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		if scope == scopePlan {
			r.planMeter() // brought up to date
		}
		used, _ := meter.Standing(r.now().Sub(since))
		return used >= 1
	}
	goOn := func() bool {
		pe.b.Reset()
		r.recordEconomics(p)
		return true
	}
	if !spentNow() {
		return goOn()
	}
	asked := limits()
	limit := r.cfg.Budget.MaxExtensions
	if *count >= limit || by.None() {
		if limit > 0 {
			r.log.Info("budget not extended: max_extensions reached", "phase", p.ph.ID, "scope", scope, "max_extensions", limit)
		}
		return false
	}
	req := ExtendRequest{Phase: p.ph.ID, Title: p.ph.Title, Scope: scope, Spent: what, By: report.LimitText(stateLimits(by)),
		N: *count + 1, Max: limit}
	var yes bool
	r.unlocked(func() { yes = r.Extend(ctx, req) }) // a person answers: let other phases run
	yes = yes && ctx.Err() == nil
	if limits() != asked { // extended meanwhile by another phase's question
		r.log.Info("budget already extended while the user was asked", "phase", p.ph.ID, "scope", scope)
		if ctx.Err() != nil || spentNow() {
			return false
		}
		return goOn()
	}
	r.event("budget_extension", map[string]any{"phase": p.ph.ID, "scope": scope, "spent": what, "by": req.By,
		"granted": yes, "extension": req.N, "max_extensions": limit})
	if !yes {
		return false
	}
	*count++
	e.mu.Lock()
	meter.Extend(by)
	e.mu.Unlock()
	goOn()
	if scope == scopePhase {
		p.rec.Economics.Extensions = *count
	}
	r.log.Warn("budget extended by the user", "phase", p.ph.ID, "scope", scope, "by", req.By, "spent", what,
		"extension", req.N, "max_extensions", limit)
	_ = r.save() // the next session's start saves again
	return true
}

// extendedWhy is the checkpoint's reason after an extension.
func extendedWhy(spent string) string {
	scope, what, _ := strings.Cut(spent, " ")
	return fmt.Sprintf("the %s budget ran out (%s) and the user extended it. Go on with the remaining tasks by the most direct route; "+
		"record what is done with `debussy progress`", scope, what)
}

// exhaustedError is the run's last word when a budget ran out: which
// budget, what was spent, and how to raise it.
func (r *orun) exhaustedError(p *phaseRun, spent string) error {
	r.phaseEcon(p).b.Exhausted = spent
	if p.rec.Economics == nil {
		r.recordEconomics(p)
	}
	p.rec.Economics.Exhausted = true
	if r.run.Economics != nil && strings.HasPrefix(spent, scopePlan+" ") {
		r.run.Economics.Exhausted = true
	}
	return fmt.Errorf("phase %s: %w: %s; work committed, later phases not started. %s",
		p.ph.ID, ErrBudgetExhausted, spent, raiseHint(spent))
}

// raiseHint says how to raise the budget that ran out.
func raiseHint(spent string) string {
	scope, rest, _ := strings.Cut(spent, " ")
	dim, _, _ := strings.Cut(rest, " ")
	key, flag := "", ""
	switch dim {
	case "tokens":
		key, flag = "tokens", "--budget-tokens"
	case "cost":
		key, flag = "cost_usd", "--budget-cost"
	case "time":
		key = "duration"
	}
	cfgKey := fmt.Sprintf("budget.%s.%s", scope, key)
	switch {
	case scope == scopePhase && flag != "":
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (or pass %s, env %s) and run again: the phase resumes from a checkpoint.",
			cfgKey, flag, config.EnvVar(cfgKey))
	default:
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (env %s) and run again: the phase resumes from a checkpoint.",
			cfgKey, config.EnvVar(cfgKey))
	}
}
