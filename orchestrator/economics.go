package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	econ "github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// ErrBudgetExhausted ends a run whose phase or plan budget ran out under
// strict enforcement (or adaptive at 100 % without a restart): the work is
// committed, later phases are not started. The phase is recorded failed
// with economics.exhausted set, so a rerun resumes it like any failure.
var ErrBudgetExhausted = errors.New("budget exhausted")

// Triggers of the economics: the budget's stop and the adaptive restart.
const (
	triggerBudget   estimator.Trigger = "budget"
	triggerAdaptive estimator.Trigger = "adaptive"
)

// Budget scopes, in messages and events.
const (
	scopePhase = "phase"
	scopePlan  = "plan"
)

// economics is the run's spend: one Meter per phase, fed its sessions'
// events, and one for the plan whose spend is the phases' sum (planMeter):
// with --parallel several sessions run at once, and one Meter cannot follow
// two processes.
type economics struct {
	mode     econ.Mode
	adaptive econ.AdaptiveConfig
	prices   econ.Prices
	plan     *econ.Meter
	phases   map[string]*phaseEcon
	// ids are phases' keys, sorted: the plan's sum in a fixed order
	// without sorting on every stream event.
	ids []string
	// planExtensions counts the user's extensions of the plan's budget.
	planExtensions int
}

// phaseEcon is one phase's economics in this run.
type phaseEcon struct {
	planNoted econ.Level // the plan budget's highest level told to this phase
	meter     *econ.Meter
	quarter   int             // quarters evaluated in the current window
	written   map[string]bool // absolute paths the phase wrote: reading them is no exploration
	action    econ.Action     // what the latest check decided, for PreToolUse
	left      string          // what remains of the fullest budget, for refusals
	level     econ.Level      // the latest level, phase or plan, whichever is higher
	scope     string          // which budget that level is of
	// exhausted describes the spend at a stop, "phase tokens 105K of 100K".
	exhausted string
	dim       econ.Dimension
	session   econ.Totals // the phase's totals when the running session started
	// carried is what an earlier run of the phase spent that its Meter
	// did not count (no economics record): in the record's totals only.
	carriedTokens int64
	carriedCost   float64
	extensions    int // the user's extensions of the phase's budget in this run
}

func limitsOf(l config.Limits) econ.Limits {
	return econ.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, Duration: time.Duration(l.Duration)}
}

func stateLimits(l econ.Limits) state.Limits {
	return state.Limits{Tokens: l.Tokens, CostUSD: l.CostUSD, DurationMs: l.Duration.Milliseconds()}
}

// econ returns the run's economics, made on first use.
func (r *orun) econ() *economics {
	if r.economics != nil {
		return r.economics
	}
	b := r.cfg.Budget
	e := &economics{
		mode:     econ.Mode(b.Enforcement),
		adaptive: econ.AdaptiveConfig{RestartThreshold: b.RestartThreshold, MinCompletionProbability: b.MinCompletionProbability},
		prices:   econ.DefaultPrices(),
		phases:   map[string]*phaseEcon{},
	}
	if e.mode == "" {
		e.mode = econ.Strict
	}
	over := econ.Prices{}
	for name, p := range b.Prices {
		over[name] = econ.Price{Input: p.Input, Output: p.Output, CacheWrite: p.CacheWrite, CacheRead: p.CacheRead}
	}
	e.prices = e.prices.Merge(over)
	// Adaptive quarters are of a phase's budget; the plan's only stops.
	e.plan = econ.NewMeter(limitsOf(b.Plan), e.mode, econ.AdaptiveConfig{RestartThreshold: 2}, e.prices)
	r.economics = e
	return e
}

// budgetScope is one budget a phase runs under: its Meter and when its
// duration began.
type budgetScope struct {
	scope string
	meter *econ.Meter
	since time.Time
}

// budgets are phase p's budgets: its own, then the plan's (brought up to
// date).
func (r *orun) budgets(p *phaseRun) [2]budgetScope {
	return [2]budgetScope{{scopePhase, r.phaseEcon(p).meter, p.rec.StartedAt}, {scopePlan, r.planMeter(), r.run.StartedAt}}
}

// planMeter returns the plan's Meter with its spend brought up to date:
// the sum of this run's phase Meters, in a fixed order.
func (r *orun) planMeter() *econ.Meter {
	e := r.econ()
	var sum econ.Totals
	for _, id := range e.ids {
		sum = sum.Add(e.phases[id].meter.Totals())
	}
	e.plan.SetTotals(sum)
	return e.plan
}

// phaseEcon returns phase p's economics in this run.
func (r *orun) phaseEcon(p *phaseRun) *phaseEcon {
	e := r.econ()
	if pe, ok := e.phases[p.ph.ID]; ok {
		return pe
	}
	pe := &phaseEcon{
		meter:   econ.NewMeter(limitsOf(r.cfg.Budget.Phase), e.mode, e.adaptive, e.prices),
		written: map[string]bool{},
	}
	pe.carriedTokens, pe.carriedCost = p.rec.Tokens, p.rec.CostUSD
	if prev := p.prevSpend; prev != nil {
		// A resumed phase's budget counts what its earlier runs spent, as
		// the exhausted message says: a spent budget stays spent until it
		// is raised, and a CI job retrying the run cannot spend it again.
		pe.meter.SetTotals(econ.Totals{Tokens: prev.TokensByKind, CostUSD: prev.CostUSD,
			ReportedCostUSD: prev.ReportedCostUSD, Turns: prev.APITurns})
		pe.carriedTokens = max(p.rec.Tokens-prev.Tokens, 0)
		pe.carriedCost = max(p.rec.CostUSD-prev.CostUSD, 0)
	}
	e.phases[p.ph.ID] = pe
	i, _ := slices.BinarySearch(e.ids, p.ph.ID)
	e.ids = slices.Insert(e.ids, i, p.ph.ID)
	return pe
}

// startEconomics begins a session's accounting.
func (r *orun) startEconomics(p *phaseRun) {
	pe := r.phaseEcon(p)
	pe.meter.StartSession()
	pe.session = pe.meter.Totals()
}

// endEconomics folds the session that ended into the phase's and the
// run's records and returns what the session alone spent, for its event.
func (r *orun) endEconomics(p *phaseRun) econ.Totals {
	pe := r.phaseEcon(p)
	pe.meter.EndSession()
	t := pe.meter.Totals()
	r.recordEconomics(p)
	s := pe.session.Tokens
	return econ.Totals{
		Tokens: econ.Tokens{Input: t.Tokens.Input - s.Input, Output: t.Tokens.Output - s.Output,
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
		ec.UsedPct, ec.Dimension = econ.RoundPct(used*100), string(dim)
		ec.Level = econ.LevelOf(used).String()
	}
	ec.Quarters = pe.meter.Quarters()
	if pr := pe.meter.Progress(); pr != "" {
		ec.Progress = string(pr)
	}
	p.rec.Tokens = pe.carriedTokens + ec.Tokens
	p.rec.CostUSD = pe.carriedCost + ec.CostUSD

	run := r.run.SumPhases()
	run.WallMs = r.now().Sub(r.run.StartedAt).Milliseconds()
	if plan := r.planMeter(); !plan.Limits().None() { // extensions included
		pl := plan.Limits()
		run.Limits = stateLimits(pl)
		run.Enforcement = string(e.mode)
		used, dim := pl.Used(plan.Spend(time.Duration(run.WallMs) * time.Millisecond))
		run.UsedPct, run.Dimension = econ.RoundPct(used*100), string(dim)
		run.Level = econ.LevelOf(used).String()
	}
	if r.run.Economics != nil {
		run.Exhausted = r.run.Economics.Exhausted
	}
	run.Extensions = e.planExtensions
	r.run.Economics = &run
}

// observeEconomics follows the stream for the budgets: it counts the
// event, tells the agent at each new level (the next PostToolUse carries
// the note), evaluates adaptive quarters, and stops the session at 100 %.
func (b *budget) observeEconomics(ev runner.Event) {
	r, p := b.r, b.p
	pe := r.phaseEcon(p)
	pe.meter.Observe(ev)
	if ev.Assistant != nil {
		for _, tu := range ev.Assistant.ToolUses {
			if tu.FilePath != "" && econ.ToolKind(tu.Name, tu.Command) == econ.KindWrite {
				pe.written[b.absPath(tu.FilePath)] = true
			}
		}
	}
	// What the agent is doing, live in `debussy status`: saved when it changes.
	if pr := string(pe.meter.Progress()); pr != "" && (p.rec.Economics == nil || p.rec.Economics.Progress != pr) {
		r.recordEconomics(p)
		_ = r.save() // a failed save is reported at the session's end, which saves again
	}
	b.checkEconomics()
}

// checkEconomics is the budgets' check after an event, or when the
// duration timer fires with no event (a silent long tool).
func (b *budget) checkEconomics() {
	r, p := b.r, b.p
	e, pe := r.econ(), r.phaseEcon(p)
	if pe.meter.Limits().None() && e.plan.Limits().None() {
		return
	}
	now := r.now()
	phaseElapsed, runElapsed := now.Sub(p.rec.StartedAt), now.Sub(r.run.StartedAt)

	ps, pl := pe.meter.Check(phaseElapsed), r.planMeter().Check(runElapsed)
	r.noteUnpriced(p.ph.ID, ps.Unpriced, pl.Unpriced)
	// The quarter before the notes: a restart, even at 100 %, replaces
	// the stop. ps.Used is of the current window.
	if e.mode == econ.Adaptive && !pe.meter.Limits().None() && b.stage != stageStopping {
		if n := econ.QuarterDue(ps.Used, pe.quarter); n > 0 {
			pe.quarter = n
			if b.evaluateQuarter(pe, now, phaseElapsed) {
				return
			}
		}
	}
	st, scope, lim := ps, scopePhase, pe.meter.Limits()
	if pl.Level > ps.Level {
		st, scope, lim = pl, scopePlan, e.plan.Limits()
	}
	pe.action = ps.Action
	if pl.Level > ps.Level {
		pe.action = pl.Action
	}
	pe.left = lim.Remaining(st.Spend, st.Dimension)
	// The plan's Meter is shared by the phases: each level of the plan's
	// budget is told once to every phase, not once to whichever phase
	// crossed it (the others would be refused without a word).
	pl.Note = ""
	if pl.Action.Note && pl.Level > pe.planNoted {
		pe.planNoted = pl.Level
		pl.Note = e.mode.Note(pl.Level, e.plan.Limits().Remaining(pl.Spend, pl.Dimension))
	}
	for _, s := range []struct {
		econ.Status
		prefix string
	}{{ps, "debussy: "}, {pl, "debussy (plan budget): "}} {
		if s.Note == "" {
			continue
		}
		note := s.prefix + s.Note
		if s.Level == econ.LevelWrapUp {
			note += fmt.Sprintf(" Record what is done and what remains with `debussy progress --phase %s \"...\"`.", p.ph.ID)
			if s.Action.WrapUpOnly && b.request == "" { // the handoff stage's request names the path already
				note += b.tellHandoffPath()
			}
		}
		b.note(note)
	}
	// Each change of level is an event; a phase under its notes says nothing.
	if st.Level != pe.level || (scope != pe.scope && st.Level > econ.LevelNone) {
		pe.level, pe.scope, pe.dim = st.Level, scope, st.Dimension
		r.event("budget_level", b.fields(map[string]any{"scope": scope, "level": st.Level.String(), "used_pct": econ.RoundPct(st.Used * 100),
			"dimension": string(st.Dimension), "enforcement": string(e.mode), "left": pe.left}))
		if st.Level > econ.LevelNone {
			r.log.Warn("budget", "phase", p.ph.ID, "scope", scope, "level", st.Level.String(), "used_percent", int(st.Used*100),
				"dimension", st.Dimension, "left", pe.left, "enforcement", e.mode)
		}
		r.recordEconomics(p)
		_ = r.save() // live in status --json; the session's end saves again
	}
	if st.Action.Stop && b.stage != stageStopping {
		pe.exhausted = scope + " " + st.Exhausted
		b.stop(triggerBudget, "budget exhausted: "+pe.exhausted)
	}
}

// econC fires when a duration budget reaches its next level; nil without
// a duration budget or once the session is stopping.
func (b *budget) econC() <-chan time.Time {
	if b.econTimer == nil || b.stage == stageStopping {
		return nil
	}
	return b.econTimer.C
}

// armEconTimer sets the duration timer to the next level of the phase's
// or the plan's duration budget, whichever comes first. Events check the
// budgets too; the timer is for a tool that runs long and says nothing.
func (b *budget) armEconTimer() {
	r := b.r
	now := r.now()
	var next time.Duration
	for _, d := range r.budgets(b.p) {
		if left, ok := d.meter.NextDurationLevel(now.Sub(d.since)); ok && (next == 0 || left < next) {
			next = left
		}
	}
	if next == 0 {
		return
	}
	// A clock that reads a hair early finds no new level and re-arms.
	next = max(next, time.Millisecond)
	if b.econTimer == nil {
		b.econTimer = time.NewTimer(next)
		return
	}
	b.econTimer.Reset(next)
}

// evaluateQuarter records one adaptive evaluation and, when it says so,
// stops the session for a restart. It reports whether it did.
func (b *budget) evaluateQuarter(pe *phaseEcon, now time.Time, elapsed time.Duration) bool {
	r, p := b.r, b.p
	done, total := 0, 0
	if tasks, err := plans.ReadTasks(p.ph.Path); err == nil {
		for _, t := range tasks {
			total++
			if t.Done {
				done++
			}
		}
	}
	q, ok := pe.meter.Quarter(now, elapsed, done, total)
	if !ok {
		return false
	}
	r.event("budget_quarter", b.fields(map[string]any{"used_pct": q.UsedPct, "tasks_done": q.TasksDone, "tasks_total": q.TasksTotal,
		"probability": q.Probability, "decision": string(q.Decision)}))
	r.log.Info("budget quarter", "phase", p.ph.ID, "used_percent", q.UsedPct, "tasks_done", q.TasksDone, "tasks_total", q.TasksTotal,
		"probability", q.Probability, "decision", q.Decision)
	r.recordEconomics(p)
	_ = r.save()
	if q.Decision != econ.Restart || r.cfg.MaxRestarts == 0 {
		return false
	}
	b.stop(triggerAdaptive, fmt.Sprintf("adaptive budget: %.0f %% of the phase budget used with %d of %d tasks done "+
		"(completion probability %.2f < %.2f)", q.UsedPct, q.TasksDone, q.TasksTotal, q.Probability, r.econ().adaptive.MinCompletionProbability))
	return true
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
	pe := r.phaseEcon(p)
	elapsed := r.now().Sub(p.rec.StartedAt)
	used, _ := pe.meter.Limits().Used(pe.meter.Spend(elapsed))
	pe.meter.OpenWindow(elapsed)
	pe.quarter = 0
	pe.level, pe.action = econ.LevelNone, econ.Action{}
	r.event("budget_window", map[string]any{"phase": p.ph.ID, "used_pct": econ.RoundPct(used * 100)})
}

// budgetRefusal is the reason to deny a tool call under the budget's
// current level, "" to let it run. A session already stopping lets its
// tool run: that tool's PostToolUse ends it cleanly.
func (b *budget) budgetRefusal(h *runner.HookCall) string {
	pe := b.r.phaseEcon(b.p)
	a := pe.action
	if b.stage == stageStopping || !(a.RefuseExploratory || a.WrapUpOnly || a.Stop) {
		return ""
	}
	var in struct {
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		Command  string `json:"command"`
	}
	_ = json.Unmarshal(h.ToolInput, &in)
	c := econ.Call{Name: h.ToolName, Command: in.Command, WrapUp: b.allowedDuringHandoff(h)}
	c.PhaseFile = b.phaseFile(pe, in.FilePath, in.Path, in.Command)
	why := econ.Refusal(a, c, pe.left)
	if why == "" {
		return ""
	}
	scope := "phase"
	if pe.scope == scopePlan {
		scope = "plan"
	}
	if a.WrapUpOnly || a.Stop { // "write the handoff": say where
		why += b.tellHandoffPath()
	}
	return fmt.Sprintf("debussy (%s budget): %s", scope, why)
}

// phaseFile reports whether a call reads one of the phase's own files: its
// phase file, the master plan, a file the phase names or has written.
func (b *budget) phaseFile(pe *phaseEcon, paths ...string) bool {
	root := b.p.repo.Root()
	own := []string{b.p.ph.Path, b.r.Plan.Path}
	for _, raw := range paths {
		if raw == "" {
			continue
		}
		if strings.ContainsAny(raw, " \t") { // a command: any own file it names
			for w := range pe.written {
				if strings.Contains(raw, w) || strings.Contains(raw, relTo(root, w)) {
					return true
				}
			}
			for _, f := range own {
				if strings.Contains(raw, relTo(root, f)) {
					return true
				}
			}
			continue
		}
		abs := b.absPath(raw)
		if pe.written[abs] {
			return true
		}
		for _, f := range own {
			if a, err := filepath.Abs(f); err == nil && a == abs {
				return true
			}
		}
		if rel := relTo(root, abs); rel != "" && !strings.HasPrefix(rel, "..") && strings.Contains(b.p.ph.Content, rel) {
			return true
		}
	}
	return false
}

func (b *budget) absPath(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(b.p.repo.Root(), path)
	}
	return filepath.Clean(path)
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// budgetSpent reports a strict budget already spent before a session
// starts (a remediation or retry after the stop): the phase ends at once.
func (r *orun) budgetSpent(p *phaseRun) (string, bool) {
	if r.econ().mode != econ.Strict {
		return "", false
	}
	now := r.now()
	for _, m := range r.budgets(p) {
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
		meter, by, count, since = r.planMeter(), limitsOf(r.cfg.Budget.Plan), &e.planExtensions, r.run.StartedAt
	}
	// The plan's budget is shared by parallel phases: another phase's
	// question may have raised it since this phase ran out, or while
	// this one was asked. One yes is one extension; the others go on.
	spentNow := func() bool {
		used, _ := meter.Standing(r.now().Sub(since))
		return used >= 1
	}
	goOn := func() bool {
		pe.level, pe.action, pe.exhausted = econ.LevelNone, econ.Action{}, ""
		r.recordEconomics(p)
		return true
	}
	if !spentNow() {
		return goOn()
	}
	asked := meter.Limits()
	limit := r.cfg.Budget.MaxExtensions
	if *count >= limit || by.None() {
		if limit > 0 {
			r.log.Info("budget not extended: max_extensions reached", "phase", p.ph.ID, "scope", scope, "max_extensions", limit)
		}
		return false
	}
	req := ExtendRequest{Phase: p.ph.ID, Title: p.ph.Title, Scope: scope, Spent: what, By: limitText(stateLimits(by)),
		N: *count + 1, Max: limit}
	var yes bool
	r.unlocked(func() { yes = r.Extend(ctx, req) }) // a person answers: let other phases run
	yes = yes && ctx.Err() == nil
	if meter.Limits() != asked { // extended meanwhile by another phase's question
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
	meter.Extend(by)
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
	r.phaseEcon(p).exhausted = spent
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
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (or pass %s, env DEBUSSY_%s) and run again: the phase resumes from a checkpoint.",
			cfgKey, flag, envName(cfgKey))
	default:
		return fmt.Sprintf("To go on, raise %s in .debussy.yaml (env DEBUSSY_%s) and run again: the phase resumes from a checkpoint.",
			cfgKey, envName(cfgKey))
	}
}

func envName(key string) string {
	return strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// SpendLine says in one line what a phase or run spent and where that
// stands in its budget: "spent 101.2K tokens, $0.31, 17 API turns; budget
// tokens 100K: 101 % used, exhausted (strict)". "" without a record.
func SpendLine(e *state.Economics) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "spent %s tokens, $%.2f, %d API turns", estimator.FormatTokens(e.Tokens), e.CostUSD, e.APITurns)
	if e.WallMs > 0 {
		fmt.Fprintf(&b, ", %s", (time.Duration(e.WallMs) * time.Millisecond).Round(time.Second))
	}
	if e.Limits != (state.Limits{}) {
		fmt.Fprintf(&b, "; budget %s: %.0f %% used", limitText(e.Limits), e.UsedPct)
		if e.Level != "" && e.Level != econ.LevelNone.String() {
			fmt.Fprintf(&b, ", level %s", e.Level)
		}
		if e.Enforcement != "" {
			fmt.Fprintf(&b, " (%s)", e.Enforcement)
		}
		if e.Extensions > 0 {
			fmt.Fprintf(&b, ", extended %d×", e.Extensions)
		}
		if e.Exhausted {
			b.WriteString(", exhausted")
		}
	}
	if n := len(e.Quarters); n > 0 {
		q := e.Quarters[n-1]
		fmt.Fprintf(&b, "; %d quarter evaluations, last at %.0f %%: %d of %d tasks, probability %.2f, %s",
			n, q.UsedPct, q.TasksDone, q.TasksTotal, q.Probability, q.Decision)
	}
	if len(e.UnknownModels) > 0 {
		fmt.Fprintf(&b, "; priced as Sonnet (unknown): %s", strings.Join(e.UnknownModels, ", "))
	}
	return b.String()
}

func limitText(l state.Limits) string {
	var parts []string
	if l.Tokens > 0 {
		parts = append(parts, "tokens "+estimator.FormatTokens(l.Tokens))
	}
	if l.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("cost $%.2f", l.CostUSD))
	}
	if l.DurationMs > 0 {
		parts = append(parts, "time "+(time.Duration(l.DurationMs)*time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}
