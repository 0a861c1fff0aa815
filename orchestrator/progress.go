package orchestrator

import (
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/session"
)

// Progress is a running phase's figures after one stream event, for a live
// view (Options.Progress). It is a copy: the receiver may keep it.
type Progress struct {
	Phase, Title string
	Session      int
	Snapshot     estimator.Snapshot // the session's estimate after the event
	Zone         string             // the session's zone: green, yellow or red
	// Tokens and CostUSD are the phase's totals so far: every API call of
	// its sessions, the running one included (the budget's Meter), plus
	// what an earlier run of the phase spent when it resumed.
	Tokens   int64
	CostUSD  float64
	Restarts int
	Started  time.Time // the phase's start
	Ended    bool      // the session ended
	// Activity is the running session's progress phase: exploring,
	// planning, acting or verifying; "" before its first telling tool.
	Activity string
	// Budget is where the phase stands in its budget; nil without one.
	Budget *BudgetProgress
	// WaitingUntil is set while the phase waits for a usage limit to reset.
	WaitingUntil time.Time
	// Running is the main thread's tool in flight (what it does, since
	// when); nil when none.
	Running *session.Running
}

// BudgetProgress is the fuller of the phase's and the plan's budgets.
type BudgetProgress = session.BudgetProgress
