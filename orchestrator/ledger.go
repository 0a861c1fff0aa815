package orchestrator

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// Git as the ledger: every phase end is a commit whose trailers say how it
// ended (gitcommit.Message), so a clone without .debussy/ — another
// machine, a CI job — knows which phases are done. .debussy/ stays the
// local record with raw logs; a phase completed in either is skipped.

// PlanRel is the plan's path relative to the repository root, with
// slashes: the Debussy-Plan trailer, the same on every clone. A plan
// outside the repository keeps its absolute path.
func PlanRel(root, planPath string) string {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return filepath.ToSlash(planPath)
	}
	// Resolve symlinks on both sides (a temp dir under a symlinked /tmp).
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// GitCompleted returns, for each phase of plan whose latest outcome in git
// history is completed, that outcome. planRel is the plan's PlanRel.
func GitCompleted(plan *plans.Plan, l *gitcommit.Ledger, planRel string) map[string]gitcommit.Outcome {
	done := map[string]gitcommit.Outcome{}
	for _, ph := range plan.Phases {
		if o, ok := l.Latest(planRel, ph.ID); ok && o.Event == string(state.StatusCompleted) {
			done[ph.ID] = o
		}
	}
	return done
}

// Ready lists, in run order, the phases that are not done and whose
// dependencies, transitively, all are: what can run now, side by side.
func Ready(plan *plans.Plan, done func(id string) bool) ([]*plans.Phase, error) {
	order, err := plan.Order()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	var ready []*plans.Phase
	for _, ph := range order {
		if done(ph.ID) || len(unfinished(plan, ph, done)) > 0 {
			continue
		}
		ready = append(ready, ph)
	}
	return ready, nil
}

// unfinished lists ph's dependencies, transitively and in plan order, that
// are not done.
func unfinished(plan *plans.Plan, ph *plans.Phase, done func(id string) bool) []string {
	seen := map[string]bool{}
	var visit func(p *plans.Phase)
	visit = func(p *plans.Phase) {
		for _, d := range p.DependsOn {
			if !seen[d] {
				seen[d] = true
				if dp := plan.Phase(d); dp != nil {
					visit(dp)
				}
			}
		}
	}
	visit(ph)
	var out []string
	for _, p := range plan.Phases {
		if seen[p.ID] && !done(p.ID) {
			out = append(out, p.ID)
		}
	}
	return out
}

// readGitLedger reads the outcomes in git history; an unreadable history
// only costs the skip of phases completed elsewhere, so it is a warning.
func (r *orun) readGitLedger() *gitcommit.Ledger {
	if r.Repo == nil {
		return nil
	}
	l, err := r.Repo.ReadLedger()
	if err != nil {
		r.log.Warn("read phase outcomes from git history; relying on .debussy/ alone", "err", err)
		return nil
	}
	return l
}

// selectOnly narrows todo to the --only phase, which must exist and whose
// dependencies must all be done.
func (r *orun) selectOnly(order []*plans.Phase, todo map[string]bool, done map[string]string) error {
	ph := r.Plan.Phase(r.Only)
	if ph == nil {
		ids := make([]string, 0, len(order))
		for _, p := range r.Plan.Phases {
			ids = append(ids, p.ID)
		}
		return fmt.Errorf("%w: --only %s: no such phase in %s; its phases are %s", ErrSetup, r.Only, r.Plan.Path, strings.Join(ids, ", "))
	}
	if missing := unfinished(r.Plan, ph, func(id string) bool { _, ok := done[id]; return ok }); len(missing) > 0 {
		noun := "phase"
		if len(missing) > 1 {
			noun = "phases"
		}
		return fmt.Errorf("%w: --only %s depends on unfinished %s %s (not completed here nor in git history reachable from HEAD); run or merge them first",
			ErrSetup, r.Only, noun, strings.Join(missing, ", "))
	}
	// The others stay as they are: pending ones are not run, not skipped
	// as completed.
	for _, p := range order {
		delete(todo, p.ID)
	}
	todo[ph.ID] = true
	delete(done, ph.ID)
	return nil
}

// planRel is this run's plan as the Debussy-Plan trailer names it.
func (r *orun) planRel() string {
	if r.Repo == nil {
		return filepath.ToSlash(r.Plan.Path)
	}
	return PlanRel(r.Repo.Root(), r.planPath())
}
