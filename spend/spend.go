// Package spend is a run's one spend account: a budget Meter per phase, fed
// its sessions' events (each API call counted once), and the plan's, whose
// spend is the phases' sum — with --parallel several sessions run at once,
// and one Meter cannot follow two processes. The budgets read it while the
// sessions run (Phase is a session.Meters); the ledger's economics
// records, which status, the report and the summary read, are written from
// it (Phase.Record), so every figure the user sees is one account's.
package spend

import (
	"slices"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// Account is a run's spend against its budgets.
type Account struct {
	// mu guards every Meter and the phases' map: the sessions count and
	// check on their own goroutines. Held only around Meter calls, never
	// across I/O.
	mu                      sync.Mutex
	mode                    budget.Mode
	adaptive                budget.AdaptiveConfig
	prices                  budget.Prices
	phaseLimits, planLimits budget.Limits // as configured: what an extension adds
	plan                    *budget.Meter
	phases                  map[string]*Phase
	// ids are phases' keys, sorted: the plan's sum in a fixed order
	// without sorting on every stream event.
	ids            []string
	planExtensions int
	runStart       time.Time
}

// Limits converts the configuration's limits.
func Limits(l config.Limits) budget.Limits {
	return budget.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, Duration: time.Duration(l.Duration)}
}

// StateLimits converts limits to the ledger's.
func StateLimits(l budget.Limits) state.Limits {
	return state.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, DurationMs: l.Duration.Milliseconds()}
}

// New opens the account of a run that started at runStart.
func New(b config.Budget, runStart time.Time) *Account {
	a := &Account{
		mode:        budget.Mode(b.Enforcement),
		adaptive:    budget.AdaptiveConfig{RestartThreshold: b.RestartThreshold, MinCompletionProbability: b.MinCompletionProbability},
		prices:      Prices(b),
		phaseLimits: Limits(b.Phase), planLimits: Limits(b.Plan),
		phases:   map[string]*Phase{},
		runStart: runStart,
	}
	if a.mode == "" {
		a.mode = budget.Strict
	}
	// Adaptive quarters are of a phase's budget; the plan's only stops.
	a.plan = budget.NewMeter(a.planLimits, a.mode, budget.AdaptiveConfig{RestartThreshold: 2}, a.prices)
	return a
}

// Prices is the price table a run uses: debussy's defaults with the
// config's budget.prices over them. The report and tune price with it too,
// so every figure of one run is priced alike.
func Prices(b config.Budget) budget.Prices {
	over := budget.Prices{}
	for name, p := range b.Prices {
		over[name] = budget.Price{Input: p.Input, Output: p.Output, CacheWrite: p.CacheWrite, CacheRead: p.CacheRead}
	}
	return budget.DefaultPrices().Merge(over)
}

// Mode is the budgets' enforcement.
func (a *Account) Mode() budget.Mode { return a.mode }

// planMeter returns the plan's Meter with its spend brought up to date:
// the sum of this run's phase Meters, in a fixed order. a.mu held.
func (a *Account) planMeter() *budget.Meter {
	var sum budget.Totals
	for _, id := range a.ids {
		sum = sum.Add(a.phases[id].meter.Totals())
	}
	a.plan.SetTotals(sum)
	return a.plan
}

// Phase is one phase's spend in this run.
type Phase struct {
	a   *Account
	rec *state.PhaseRecord // the phase's record: its start, and where Record writes
	// meter is the phase's Meter; a.mu.
	meter *budget.Meter
	// Budget is the budget's bookkeeping across the phase's sessions:
	// written by the running session, read here between sessions.
	Budget  session.BudgetState
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

// Phase returns the account of the phase rec records, opened on first use;
// prev is what the phase's earlier runs spent (a resume), or nil.
func (a *Account) Phase(rec *state.PhaseRecord, prev *state.Economics) *Phase {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.phases[rec.ID]; ok {
		return p
	}
	p := &Phase{
		a: a, rec: rec,
		meter: budget.NewMeter(a.phaseLimits, a.mode, a.adaptive, a.prices),
		Budget: session.BudgetState{Mode: a.mode, MinCompletionProbability: a.adaptive.MinCompletionProbability,
			Written: map[string]bool{}},
		carriedTokens: rec.Tokens, carriedCost: rec.CostUSD,
	}
	if prev != nil {
		// A resumed phase's budget counts what its earlier runs spent, as
		// the exhausted message says: a spent budget stays spent until it
		// is raised, and a CI job retrying the run cannot spend it again.
		p.meter.SetTotals(budget.Totals{Tokens: prev.TokensByKind, CostUSD: prev.CostUSD,
			ReportedCostUSD: prev.ReportedCostUSD, Turns: prev.APITurns})
		// The Meter starts at the earlier runs' spend; the record is this
		// run's alone.
		p.priorTokens, p.priorCost = prev.Tokens, prev.CostUSD
	}
	a.phases[rec.ID] = p
	i, _ := slices.BinarySearch(a.ids, rec.ID)
	a.ids = slices.Insert(a.ids, i, rec.ID)
	return p
}

// scope is one budget a phase runs under: its Meter and when its duration
// began.
type scope struct {
	name  string
	meter *budget.Meter
	since time.Time
}

// budgets are the phase's budgets: its own, then the plan's (brought up to
// date). a.mu held.
func (p *Phase) budgets() [2]scope {
	return [2]scope{{policy.ScopePhase, p.meter, p.rec.StartedAt}, {policy.ScopePlan, p.a.planMeter(), p.a.runStart}}
}

// Observe counts a stream event (session.Meters).
func (p *Phase) Observe(ev event.Event) budget.Progress {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	p.meter.Observe(ev)
	return p.meter.Progress()
}

// Check is where the phase's and the plan's budgets stand (session.Meters).
func (p *Phase) Check(now time.Time) (session.Standing, bool) {
	a := p.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.meter.Limits().None() && a.plan.Limits().None() {
		return session.Standing{}, false
	}
	return session.Standing{
		Phase: p.meter.Check(now.Sub(p.rec.StartedAt)), Plan: a.planMeter().Check(now.Sub(a.runStart)),
		PhaseLimits: p.meter.Limits(), PlanLimits: a.plan.Limits(),
	}, true
}

// Quarter evaluates an adaptive quarter (session.Meters).
func (p *Phase) Quarter(now time.Time, done, total int) (budget.Quarter, bool) {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	return p.meter.Quarter(now, now.Sub(p.rec.StartedAt), done, total)
}

// NextLevel is how long until a duration budget's next level
// (session.Meters).
func (p *Phase) NextLevel(now time.Time) (time.Duration, bool) {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	var next time.Duration
	for _, b := range p.budgets() {
		if left, ok := b.meter.NextDurationLevel(now.Sub(b.since)); ok && (next == 0 || left < next) {
			next = left
		}
	}
	return next, next > 0
}

// Live is the phase's spend with the running session's API calls, what the
// agent is doing, and the fuller of the phase's and the plan's budgets
// (session.Meters).
func (p *Phase) Live(now time.Time) session.Live {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	t := p.meter.Totals()
	l := session.Live{Tokens: p.carriedTokens + t.Processed(), CostUSD: p.carriedCost + t.CostUSD, Activity: string(p.meter.Progress())}
	for _, b := range p.budgets() {
		if b.meter.Limits().None() {
			continue
		}
		used, dim := b.meter.Standing(now.Sub(b.since))
		if l.Budget == nil || used*100 > l.Budget.UsedPct {
			l.Budget = &session.BudgetProgress{Scope: b.name, UsedPct: budget.RoundPct(used * 100), Dimension: string(dim),
				Level: budget.LevelOf(used).String()}
		}
	}
	return l
}

// Totals are what the phase's Meter counted: this run's API calls, and
// the earlier runs' of a resumed phase.
func (p *Phase) Totals() budget.Totals {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	return p.meter.Totals()
}

// StartSession begins a session's accounting.
func (p *Phase) StartSession() {
	p.a.mu.Lock()
	defer p.a.mu.Unlock()
	p.meter.StartSession()
	p.session = p.meter.Totals()
}

// EndSession closes the session's accounting and returns what it alone
// spent, for its event; Record then writes the records.
func (p *Phase) EndSession() budget.Totals {
	p.a.mu.Lock()
	p.meter.EndSession()
	t := p.meter.Totals()
	p.a.mu.Unlock()
	s := p.session.Tokens
	return budget.Totals{
		Tokens: budget.Tokens{Input: t.Tokens.Input - s.Input, Output: t.Tokens.Output - s.Output,
			CacheWrite: t.Tokens.CacheWrite - s.CacheWrite, CacheRead: t.Tokens.CacheRead - s.CacheRead},
		CostUSD:         t.CostUSD - p.session.CostUSD,
		ReportedCostUSD: t.ReportedCostUSD - p.session.ReportedCostUSD,
		Turns:           t.Turns - p.session.Turns,
	}
}
