package orchestrator

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
)

// The budgets' part of a session: levels and notes, adaptive quarters,
// refusals and the duration timer. The levels come from package budget;
// what the agent hears and when the session stops is the policy's.
//
// Locking: the decisions run on the session's reader with d.mu held (or
// on the phase's loop holding it, for the duration timer) and take e.mu,
// the run's lock on Meters, only around Meter calls. What they record,
// log and save waits in d.later for the phase's loop, which holds the
// run's lock: a hook is never answered after I/O or another phase.

// observeEconomics follows the stream for the budgets (d.mu held): it
// counts the event, tells the agent at each new level (the next
// PostToolUse carries the note), evaluates adaptive quarters, and stops
// the session at 100 %.
func (d *driver) observeEconomics(ev runner.Event) {
	r, p, pe, e := d.r, d.p, d.pe, d.r.econ()
	if ev.Assistant != nil {
		for _, tu := range ev.Assistant.ToolUses {
			if tu.FilePath != "" && budget.ToolKind(tu.Name, tu.Command) == budget.KindWrite {
				pe.written[d.absPath(tu.FilePath)] = true
			}
		}
	}
	e.mu.Lock()
	pe.meter.Observe(ev)
	pr := string(pe.meter.Progress())
	e.mu.Unlock()
	// What the agent is doing, live in `debussy status`: saved when it changes.
	if pr != "" && pr != d.activity {
		d.activity = pr
		d.later(func() {
			r.recordEconomics(p)
			_ = r.save() // a failed save is reported at the session's end, which saves again
		})
	}
	d.checkEconomics()
}

// checkEconomics is the budgets' check after an event, or when the
// duration timer fires with no event (a silent long tool); d.mu held.
func (d *driver) checkEconomics() {
	r, p, pe, e := d.r, d.p, d.pe, d.r.econ()
	now := r.now()
	phaseElapsed, runElapsed := now.Sub(p.rec.StartedAt), now.Sub(r.run.StartedAt)
	e.mu.Lock()
	if pe.meter.Limits().None() && e.plan.Limits().None() {
		e.mu.Unlock()
		return
	}
	ps, pl := pe.meter.Check(phaseElapsed), r.planMeter().Check(runElapsed)
	phaseLim, planLim := pe.meter.Limits(), e.plan.Limits()
	e.mu.Unlock()
	r.noteUnpriced(p.ph.ID, ps.Unpriced, pl.Unpriced)
	// The quarter before the notes: a restart, even at 100 %, replaces
	// the stop. ps.Used is of the current window.
	if e.mode == budget.Adaptive && !phaseLim.None() && d.pol.StopReason() == "" {
		if n := budget.QuarterDue(ps.Used, pe.quarter); n > 0 {
			pe.quarter = n
			if d.evaluateQuarter(pe, now, phaseElapsed) {
				return
			}
		}
	}
	st, scope, lim := ps, scopePhase, phaseLim
	if pl.Level > ps.Level {
		st, scope, lim = pl, scopePlan, planLim
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
		pl.Note = e.mode.Note(pl.Level, planLim.Remaining(pl.Spend, pl.Dimension))
	}
	for _, s := range []struct {
		budget.Status
		prefix string
	}{{ps, "debussy: "}, {pl, "debussy (plan budget): "}} {
		if s.Note == "" {
			continue
		}
		note := s.prefix + s.Note
		if s.Level == budget.LevelWrapUp {
			note += fmt.Sprintf(" Record what is done and what remains with `debussy progress --phase %s \"...\"`.", p.ph.ID)
			if s.Action.WrapUpOnly {
				note += d.pol.HandoffHint(checkpoint.HandoffTemplate())
			}
		}
		d.pol.Note(note)
	}
	// Each change of level is an event; a phase under its notes says nothing.
	if st.Level != pe.level || (scope != pe.scope && st.Level > budget.LevelNone) {
		pe.level, pe.scope, pe.dim = st.Level, scope, st.Dimension
		left, mode := pe.left, e.mode
		d.perform() // what the policy decided before, first
		r.event("budget_level", d.fields(map[string]any{"scope": scope, "level": st.Level.String(), "used_pct": budget.RoundPct(st.Used * 100),
			"dimension": string(st.Dimension), "enforcement": string(mode), "left": left}))
		if st.Level > budget.LevelNone {
			r.log.Warn("budget", "phase", p.ph.ID, "scope", scope, "level", st.Level.String(), "used_percent", int(st.Used*100),
				"dimension", st.Dimension, "left", left, "enforcement", mode)
		}
		d.later(func() {
			r.recordEconomics(p)
			_ = r.save() // live in status --json; the session's end saves again
		})
	}
	if st.Action.Stop && d.pol.StopReason() == "" {
		pe.exhausted = scope + " " + st.Exhausted
		d.pol.StopFor(policy.TriggerBudget, "budget exhausted: "+pe.exhausted)
	}
}

// econC fires when a duration budget reaches its next level; nil without
// a duration budget or once the session is stopping.
func (d *driver) econC() <-chan time.Time {
	if d.econTimer == nil || d.stopping() {
		return nil
	}
	return d.econTimer.C
}

// armEconTimer sets the duration timer to the next level of the phase's
// or the plan's duration budget, whichever comes first. Events check the
// budgets too; the timer is for a tool that runs long and says nothing.
func (d *driver) armEconTimer() {
	r, e := d.r, d.r.econ()
	now := r.now()
	var next time.Duration
	e.mu.Lock()
	for _, b := range r.budgets(d.pe, d.p) {
		if left, ok := b.meter.NextDurationLevel(now.Sub(b.since)); ok && (next == 0 || left < next) {
			next = left
		}
	}
	e.mu.Unlock()
	if next == 0 {
		return
	}
	// A clock that reads a hair early finds no new level and re-arms.
	next = max(next, time.Millisecond)
	if d.econTimer == nil {
		d.econTimer = time.NewTimer(next)
		return
	}
	d.econTimer.Reset(next)
}

// evaluateQuarter records one adaptive evaluation and, when it says so,
// stops the session for a restart (d.mu held). It reports whether it did.
func (d *driver) evaluateQuarter(pe *phaseEcon, now time.Time, elapsed time.Duration) bool {
	r, p, e := d.r, d.p, d.r.econ()
	done, total := 0, 0
	if tasks, err := plans.ReadTasks(p.ph.Path); err == nil {
		for _, t := range tasks {
			total++
			if t.Done {
				done++
			}
		}
	}
	e.mu.Lock()
	q, ok := pe.meter.Quarter(now, elapsed, done, total)
	e.mu.Unlock()
	if !ok {
		return false
	}
	d.perform() // what the policy decided before, first
	r.event("budget_quarter", d.fields(map[string]any{"used_pct": q.UsedPct, "tasks_done": q.TasksDone, "tasks_total": q.TasksTotal,
		"probability": q.Probability, "decision": string(q.Decision)}))
	r.log.Info("budget quarter", "phase", p.ph.ID, "used_percent", q.UsedPct, "tasks_done", q.TasksDone, "tasks_total", q.TasksTotal,
		"probability", q.Probability, "decision", q.Decision)
	d.later(func() {
		r.recordEconomics(p)
		_ = r.save()
	})
	if q.Decision != budget.Restart || r.cfg.MaxRestarts == 0 {
		return false
	}
	d.pol.StopFor(policy.TriggerAdaptive, fmt.Sprintf("adaptive budget: %.0f %% of the phase budget used with %d of %d tasks done "+
		"(completion probability %.2f < %.2f)", q.UsedPct, q.TasksDone, q.TasksTotal, q.Probability, e.adaptive.MinCompletionProbability))
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
	pe, e := r.phaseEcon(p), r.econ()
	elapsed := r.now().Sub(p.rec.StartedAt)
	e.mu.Lock()
	used, _ := pe.meter.Limits().Used(pe.meter.Spend(elapsed))
	pe.meter.OpenWindow(elapsed)
	e.mu.Unlock()
	pe.quarter = 0
	pe.level, pe.action = budget.LevelNone, budget.Action{}
	r.event("budget_window", map[string]any{"phase": p.ph.ID, "used_pct": budget.RoundPct(used * 100)})
}

// budgetRefusal is the reason to deny a tool call under the budget's
// current level, "" to let it run. A session already stopping lets its
// tool run: that tool's PostToolUse ends it cleanly.
func (d *driver) budgetRefusal(call policy.Call) string {
	pe := d.pe
	a := pe.action
	if d.pol.StopReason() != "" || !(a.RefuseExploratory || a.WrapUpOnly || a.Stop) {
		return ""
	}
	var in struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(call.Input, &in)
	c := budget.Call{Name: call.Tool, Command: call.Command, WrapUp: d.pol.IsHandoffCall(call)}
	c.PhaseFile = d.phaseFile(pe, call.FilePath, in.Path, call.Command)
	why := budget.Refusal(a, c, pe.left)
	if why == "" {
		return ""
	}
	scope := "phase"
	if pe.scope == scopePlan {
		scope = "plan"
	}
	if a.WrapUpOnly || a.Stop { // "write the handoff": say where
		why += d.pol.HandoffHint(checkpoint.HandoffTemplate())
	}
	return fmt.Sprintf("debussy (%s budget): %s", scope, why)
}

// phaseFile reports whether a call reads one of the phase's own files: its
// phase file, the master plan, a file the phase names or has written.
func (d *driver) phaseFile(pe *phaseEcon, paths ...string) bool {
	root := d.p.repo.Root()
	own := []string{d.p.ph.Path, d.r.Plan.Path}
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
		abs := d.absPath(raw)
		if pe.written[abs] {
			return true
		}
		for _, f := range own {
			if a, err := filepath.Abs(f); err == nil && a == abs {
				return true
			}
		}
		if rel := relTo(root, abs); rel != "" && !strings.HasPrefix(rel, "..") && strings.Contains(d.p.ph.Content, rel) {
			return true
		}
	}
	return false
}

func (d *driver) absPath(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.p.repo.Root(), path)
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
