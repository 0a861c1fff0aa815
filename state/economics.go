package state

import (
	"slices"

	"github.com/debussy-dev/debussy/budget"
)

// Economics is what a phase (across its sessions: restarts and remediation
// included) or a run (its phases summed) spent, against which budget.
type Economics struct {
	// Tokens is every token processed: input, output and cache of every
	// API call, main thread and subagents; TokensByKind splits it.
	Tokens       int64         `json:"tokens"`
	TokensByKind budget.Tokens `json:"tokens_by_kind"`
	// CostUSD is computed from the price table; ReportedCostUSD is the
	// CLI's own total_cost_usd of the sessions that ended with a result.
	CostUSD         float64 `json:"cost_usd"`
	ReportedCostUSD float64 `json:"reported_cost_usd"`
	WallMs          int64   `json:"wall_ms"`
	APITurns        int     `json:"api_turns"`
	// UnknownModels were priced like Sonnet: the cost is a guess.
	UnknownModels []string `json:"unknown_models,omitempty"`

	// The budget and where the spend stands in it; empty without one.
	Limits      Limits `json:"limits,omitzero"`
	Enforcement string `json:"enforcement,omitempty"`
	// UsedPct is the fullest dimension's share of its limit, in percent.
	UsedPct   float64 `json:"used_pct,omitempty"`
	Dimension string  `json:"dimension,omitempty"` // tokens, cost or duration
	Level     string  `json:"level,omitempty"`     // none, note, firm, wrapup, exhausted
	// Exhausted: the phase ended because its budget (or the plan's) ran
	// out; Extensions counts the times a user granted more.
	Exhausted  bool `json:"exhausted,omitempty"`
	Extensions int  `json:"extensions,omitempty"`

	// Quarters are the adaptive evaluations, in order.
	Quarters []budget.Quarter `json:"quarters,omitempty"`
	// Progress is the latest session's progress phase: exploring,
	// planning, acting or verifying.
	Progress string `json:"progress,omitempty"`
}

// Limits is a budget as recorded; 0 is no limit.
type Limits struct {
	Tokens     int64   `json:"tokens,omitempty"`
	CostUSD    float64 `json:"cost_usd,omitempty"`
	DurationMs int64   `json:"duration_ms,omitempty"`
}

// SumPhases adds up what the run's phases spent: tokens, cost and API
// turns. Wall time is not a sum (the run's own clock says it), nor are the
// limits and levels, which the run sets for itself.
func (r *Run) SumPhases() Economics {
	var s Economics
	for _, p := range r.Phases {
		e := p.Economics
		if e == nil {
			continue
		}
		s.Tokens += e.Tokens
		s.TokensByKind = s.TokensByKind.Add(e.TokensByKind)
		s.CostUSD += e.CostUSD
		s.ReportedCostUSD += e.ReportedCostUSD
		s.APITurns += e.APITurns
		for _, m := range e.UnknownModels {
			if !slices.Contains(s.UnknownModels, m) {
				s.UnknownModels = append(s.UnknownModels, m)
			}
		}
	}
	return s
}
