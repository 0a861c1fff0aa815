package orchestrator

import (
	"fmt"
	"strings"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
)

// Git as the ledger: every phase end is a commit whose trailers say how it
// ended (gitcommit.Message), so a clone without .debussy/ — another
// machine, a CI job — knows which phases are done. .debussy/ stays the
// local record with raw logs; which of them says a phase is done is
// package completion's precedence (resolver).

// resolver answers whether a phase is done for this run: the plan's
// table, .debussy/ and git history, by completion's precedence. Git history
// is read when the run does not start afresh (--restart).
func (r *orun) resolver() completion.Resolver {
	res := completion.Resolver{Plan: r.Plan, Ledger: r.ledger, PlanPath: r.planPath(), PlanRel: r.planRel(), Fresh: r.Restart}
	if !r.Restart {
		res.Git = completion.ReadGit(r.gitCtx(), r.Repo, r.planRel(), r.log)
		res.GitKnows = res.Git != nil && r.cfg.AutoCommit
	}
	return res
}

// selectOnly narrows todo to the --only phase, which must exist and whose
// dependencies must all be done.
func (r *orun) selectOnly(order []*plans.Phase, todo map[string]bool, done map[string]string) error {
	ph := r.Plan.Phase(r.Only)
	if ph == nil {
		return fmt.Errorf("%w: --only %s: no such phase in %s; its phases are %s", ErrSetup, r.Only, r.Plan.Path, phaseIDs(r.Plan))
	}
	// A dry run of --base deps fetches nothing: the run merges them first.
	if missing := r.Plan.Unfinished(ph, func(id string) bool { _, ok := done[id]; return ok }); len(missing) > 0 && !(r.preview && r.Base == BaseDeps) {
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
	if why, ok := done[ph.ID]; ok && r.newJob().UsesRemote() {
		// A CI job run again (--base/--push): the phase's branch says it
		// is done, so there is nothing to redo (--restart redoes it).
		r.log.Info("nothing to do: the phase is already completed", "phase", ph.ID, "why", public.Own(why))
		return nil
	}
	todo[ph.ID] = true
	delete(done, ph.ID)
	return nil
}

// selectPhases decides which phases this run executes and logs why the
// others are skipped.
func (r *orun) selectPhases(order []*plans.Phase) (selection, error) {
	sel := selection{todo: map[string]bool{}, skipped: map[string]record.PhaseSkipped{}}
	done := map[string]string{} // id → why it counts as completed
	res := r.resolver()
	for _, ph := range order {
		if a := res.Phase(ph.ID); a.Done {
			done[ph.ID] = a.Why
			skip := record.PhaseSkipped{Phase: ph.ID, Why: a.Why}
			if a.Source != completion.Table {
				skip.Commits = a.Commits
			}
			sel.skipped[ph.ID] = skip
			continue
		}
		sel.todo[ph.ID] = true
	}
	if r.Only != "" {
		if err := r.selectOnly(order, sel.todo, done); err != nil {
			return sel, err
		}
	}
	if r.PhaseID != "" {
		start := r.Plan.Phase(r.PhaseID)
		if start == nil {
			return sel, fmt.Errorf("%w: --phase %s: no such phase in %s; its phases are %s", ErrSetup, r.PhaseID, r.Plan.Path, phaseIDs(r.Plan))
		}
		// --phase runs that phase and what follows it in run order; its
		// dependencies (transitively) must already be complete.
		if missing := r.Plan.Unfinished(start, func(id string) bool { _, ok := done[id]; return ok }); len(missing) > 0 {
			noun := "phase"
			if len(missing) > 1 {
				noun = "phases"
			}
			return sel, fmt.Errorf("%w: --phase %s depends on unfinished %s %s; run them first or drop --phase",
				ErrSetup, r.PhaseID, noun, strings.Join(missing, ", "))
		}
		sel.todo[start.ID] = true
		delete(done, start.ID)
		delete(sel.skipped, start.ID)
		for _, ph := range order {
			if ph.ID == start.ID {
				break
			}
			delete(sel.todo, ph.ID)
			if _, ok := sel.skipped[ph.ID]; !ok {
				sel.skipped[ph.ID] = record.PhaseSkipped{Phase: ph.ID} // before --phase: not done, not run
			}
		}
	}
	return sel, nil
}

// skippedIDs are the phases sel skips.
func (sel selection) skippedIDs() map[string]bool {
	out := map[string]bool{}
	for id := range sel.skipped {
		if !sel.todo[id] {
			out[id] = true
		}
	}
	return out
}
