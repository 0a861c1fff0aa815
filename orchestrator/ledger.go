package orchestrator

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
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
		res.Git = readGitLedger(r.gitCtx(), r.Repo, r.planRel(), r.log)
		res.GitKnows = res.Git != nil && r.cfg.AutoCommit
	}
	return res
}

// readGitLedger reads the outcomes in git history; an unreadable history
// only costs the skip of phases completed elsewhere, so it is a warning.
func readGitLedger(ctx context.Context, repo *gitcommit.Repo, planRel string, log *slog.Logger) *gitcommit.Ledger {
	if repo == nil {
		return nil
	}
	l, err := repo.ReadLedger(ctx, planRel)
	if err != nil {
		log.Warn("read phase outcomes from git history; relying on .debussy/ alone", "err", err)
		return nil
	}
	return l
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
	if why, ok := done[ph.ID]; ok && r.rem().usesRemote() {
		// A CI job run again (--base/--push): the phase's branch says it
		// is done, so there is nothing to redo (--restart redoes it).
		r.log.Info("nothing to do: the phase is already completed", "phase", ph.ID, "why", public.Own(why))
		return nil
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

// phaseIDs lists the plan's phase ids, for an error naming one it lacks.
func phaseIDs(p *plans.Plan) string {
	ids := make([]string, 0, len(p.Phases))
	for _, ph := range p.Phases {
		ids = append(ids, ph.ID)
	}
	return strings.Join(ids, ", ")
}
