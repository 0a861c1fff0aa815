package commands

import (
	"path/filepath"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// markCompleted shows as completed the phases a run would skip as done —
// in an earlier run (.debussy/) or per git's commit trailers — where the
// plan's table still says pending (debussy does not edit the plan). What
// cannot be read leaves the table's word.
func (e *Env) markCompleted(ws *workspace, plan *plans.Plan) {
	if plan.Err() != nil {
		return
	}
	opts := orchestrator.Options{Config: ws.Config, Plan: plan, Repo: ws.Repo}
	if ws.Root != "" {
		opts.Store = state.New(filepath.Join(ws.Root, state.DirName))
	}
	done, err := orchestrator.Completed(opts)
	if err != nil {
		return
	}
	for _, ph := range plan.Phases {
		if done[ph.ID] {
			ph.Status = plans.StatusCompleted
		}
	}
}
