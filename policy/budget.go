package policy

import (
	"cmp"
	"fmt"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/checkpoint"
)

// BudgetReading is where the budgets stand after an event or the duration
// timer, as package budget measured them: the fuller budget's scope, what
// its level asks, what is left, and the notes of levels newly reached.
// The policy decides what the agent hears, what it refuses and when the
// session stops.
type BudgetReading struct {
	Scope  string // "phase" or "plan": the fuller budget
	Action budget.Action
	Left   string       // what remains of the fuller budget: "12.5K tokens"
	Notes  []BudgetNote // levels reached since the last telling, phase first
	// Exhausted describes the spend when Action.Stop: "phase tokens 105K of 100K".
	Exhausted string
}

// BudgetNote is one level's sentence for the agent.
type BudgetNote struct {
	Scope      string // "phase" or "plan"
	Level      budget.Level
	Text       string
	WrapUpOnly bool // the level refuses every tool but the handoff's
}

// Budget takes a budget reading: it queues the levels' notes, keeps the
// level's action for PreToolUse, and at 100 % stops the session (a
// budget's stop, not a restart). It reports whether it decided that stop.
func (p *Policy) Budget(r BudgetReading) bool {
	p.budget = r
	for _, n := range r.Notes {
		prefix := "debussy: "
		if n.Scope == "plan" {
			prefix = "debussy (plan budget): "
		}
		note := prefix + n.Text
		if n.Level == budget.LevelWrapUp {
			note += fmt.Sprintf(" Record what is done and what remains with `debussy progress --phase %s \"...\"`.", p.cfg.Phase)
			if n.WrapUpOnly {
				note += p.HandoffHint(checkpoint.HandoffTemplate())
			}
		}
		p.Note(note)
	}
	if !r.Action.Stop || p.StopReason() != "" {
		return false
	}
	p.StopFor(TriggerBudget, "budget exhausted: "+r.Exhausted)
	return p.StopReason() != ""
}

// Quarter takes an adaptive quarter's evaluation: a restart decision stops
// the session for a restart from a checkpoint with a fresh budget window,
// unless restarts are off. It reports whether it stopped the session.
func (p *Policy) Quarter(q budget.Quarter, minProbability float64) bool {
	if q.Decision != budget.Restart || p.cfg.MaxRestarts == 0 || p.StopReason() != "" {
		return false
	}
	p.StopFor(TriggerAdaptive, fmt.Sprintf("adaptive budget: %.0f %% of the phase budget used with %d of %d tasks done "+
		"(completion probability %.2f < %.2f)", q.UsedPct, q.TasksDone, q.TasksTotal, q.Probability, minProbability))
	return true
}

// budgetRefusal is the reason to deny a tool call under the budget's
// current level, "" to let it run. A session already stopping lets its
// tool run: that tool's PostToolUse ends it cleanly.
func (p *Policy) budgetRefusal(c Call) string {
	a := p.budget.Action
	if p.StopReason() != "" || !(a.RefuseExploratory || a.WrapUpOnly || a.Stop) {
		return ""
	}
	why := budget.Refusal(a, budget.Call{Name: c.Tool, Command: c.Command, WrapUp: p.IsHandoffCall(c), PhaseFile: c.PhaseFile}, p.budget.Left)
	if why == "" {
		return ""
	}
	if a.WrapUpOnly || a.Stop { // "write the handoff": say where
		why += p.HandoffHint(checkpoint.HandoffTemplate())
	}
	return fmt.Sprintf("debussy (%s budget): %s", cmp.Or(p.budget.Scope, "phase"), why)
}

// Budget scopes, in messages and events.
const (
	ScopePhase = "phase"
	ScopePlan  = "plan"
)

// BudgetCheck is one check of the phase's and the plan's budgets, as
// BudgetFirst decides on it.
type BudgetCheck struct {
	// QuarterDue: the phase's budget is adaptive, limited, and at a quarter
	// (budget.QuarterDue) not evaluated yet.
	QuarterDue bool
	Stopping   bool // the policy has decided a stop already
	Phase      budget.Level
	Plan       budget.Level
}

// BudgetPick is which reading a budget check acts on first.
type BudgetPick int

const (
	PickPhase   BudgetPick = iota // the phase's budget: its level, what is left, its stop
	PickPlan                      // the plan's, fuller than the phase's
	PickQuarter                   // the adaptive quarter's evaluation, then (without a restart) the fuller budget
)

var pickNames = [...]string{"phase budget", "plan budget", "quarter first"}

func (p BudgetPick) String() string { return pickNames[p] }

// BudgetFirst decides which budget speaks (AfterRows' budget rows): an
// adaptive quarter due is evaluated before the levels, since its restart,
// even at 100 %, replaces the budget's stop; else the fuller of the
// phase's and the plan's, the phase's on a tie.
func BudgetFirst(c BudgetCheck) BudgetPick {
	switch {
	case c.QuarterDue && !c.Stopping:
		return PickQuarter
	case c.Plan > c.Phase:
		return PickPlan
	}
	return PickPhase
}

// Fuller is the budget the levels are read from once the quarter, if any,
// did not restart: BudgetFirst without the quarter.
func (c BudgetCheck) Fuller() BudgetPick {
	c.QuarterDue = false
	return BudgetFirst(c)
}
