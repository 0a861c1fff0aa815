package commands

import (
	"testing"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/view"
)

// phaseView passes the orchestrator's live figures through: the spend of
// every API call so far (no result's cost added on top), what the agent
// is doing and the budget.
func TestPhaseView(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   orchestrator.Progress
		want view.Phase
	}{
		{
			name: "no budget",
			in: orchestrator.Progress{Phase: "1", Title: "Setup", Session: 2, Zone: "green", Tokens: 12_000, CostUSD: 0.5, Started: start,
				Snapshot: estimator.Snapshot{Tokens: 9_000, Window: 200_000, ToolCalls: 3, CostUSD: 0.25}, Activity: "exploring"},
			want: view.Phase{ID: "1", Title: "Setup", Session: 2, Zone: "green", TotalTokens: 12_000, CostUSD: 0.5, Started: start,
				Tokens: 9_000, Window: 200_000, ToolCalls: 3, Activity: "exploring"},
		},
		{
			name: "the plan's budget, the fuller",
			in: orchestrator.Progress{Phase: "2", Session: 1, Tokens: 91_000, CostUSD: 0.3, Activity: "acting",
				Budget: &orchestrator.BudgetProgress{Scope: "plan", UsedPct: 91, Dimension: "tokens", Level: "firm"}},
			want: view.Phase{ID: "2", Session: 1, TotalTokens: 91_000, CostUSD: 0.3, Activity: "acting",
				BudgetScope: "plan", BudgetPct: 91, BudgetLevel: "firm"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := phaseView(tt.in); got != tt.want {
				t.Errorf("phaseView =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// The live view gets the running tool's description (its name when it has
// none) and its start.
func TestPhaseViewRunning(t *testing.T) {
	since := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	v := phaseView(orchestrator.Progress{Phase: "1", Running: &session.Running{Tool: "Bash", Description: "run the tests", Since: since}})
	if v.Running != "run the tests" || !v.RunningSince.Equal(since) {
		t.Errorf("%+v", v)
	}
	if v := phaseView(orchestrator.Progress{Phase: "1", Running: &session.Running{Tool: "Monitor", Since: since}}); v.Running != "Monitor" {
		t.Errorf("without a description: %q", v.Running)
	}
}
