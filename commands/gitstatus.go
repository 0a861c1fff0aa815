package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/state"
)

// Git as the ledger for `debussy status`: a clone without .debussy/ (CI,
// another machine) still knows from commit trailers which phases ended
// how, and a local run's phases that never started here show what git
// says about them (completed on another machine, then pulled).

// gitStatus prints what git history says about the newest plan debussy
// committed for, shaped like a run; false when history has nothing.
func (e *Env) gitStatus(repo *gitcommit.Repo, asJSON bool, hold *remote.Hold) (bool, error) {
	if repo == nil {
		return false, nil
	}
	l, err := repo.ReadLedger(context.Background(), "") // the newest plan's
	if err != nil {
		return false, fmt.Errorf("read git history: %w", err)
	}
	if len(l.Outcomes) == 0 {
		return false, nil
	}
	run := runFromGit(repo.Root(), l)
	if asJSON {
		enc := jsonEncoder(e.Stdout)
		return true, enc.Encode(struct {
			*state.Run
			Source      string       `json:"source"`
			AccountHold *remote.Hold `json:"account_hold,omitempty"`
		}{run, "git", hold})
	}
	fmt.Fprintf(e.Stdout, "no run recorded in .debussy/; per git history (commits reachable from HEAD):\nplan %s\n", run.Plan)
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTATUS\tSESSIONS\tRESTARTS\tCOMMIT\tREASON")
	for _, p := range run.Phases {
		commit := ""
		if len(p.Commits) > 0 {
			commit = gitcommit.Short(p.Commits[0])
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", p.ID, p.Status, p.Sessions, p.Restarts, commit, text.OneLine(p.LastError, 80))
	}
	return true, tw.Flush()
}

// runFromGit is a run-shaped view of the newest plan in l: its phases in
// the plan's order when the plan file is in the checkout (pending ones
// too), else in the order they last ended.
func runFromGit(root string, l *gitcommit.Ledger) *state.Run {
	rel := l.Outcomes[0].Plan
	run := &state.Run{ID: l.Outcomes[0].Run, Plan: rel, Status: state.StatusCompleted}
	path := rel
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(root, filepath.FromSlash(rel))
	}
	var ids []string
	titles := map[string]string{}
	if plan, err := plans.Load(path, plans.Options{Root: root}); err == nil && len(plan.Phases) > 0 && path != "" {
		run.Plan = path
		for _, ph := range plan.Phases {
			ids = append(ids, ph.ID)
			titles[ph.ID] = ph.Title
		}
	} else {
		for _, o := range l.Outcomes {
			if (o.Plan == rel || o.Plan == "") && !slices.Contains(ids, o.Phase) {
				ids = append(ids, o.Phase)
			}
		}
		slices.Reverse(ids) // oldest ending first
	}
	for _, id := range ids {
		rec := &state.PhaseRecord{ID: id, Title: titles[id], Status: state.StatusPending}
		if o, ok := l.Latest(rel, id); ok {
			fromOutcome(rec, o)
		}
		run.Phases = append(run.Phases, rec)
	}
	run.Status = overall(run.Phases)
	return run
}

// fromOutcome fills a phase record from its outcome in git.
func fromOutcome(rec *state.PhaseRecord, o gitcommit.Outcome) {
	rec.Status = state.Status(o.Event)
	rec.Sessions, rec.Restarts = o.Sessions, o.Restarts
	rec.Commits = []string{o.Commit}
	rec.LastError, rec.Reason = o.Reason, o.Reason
	rec.EndedAt = o.When
}

// overall is a run status for phases: the worst of them, completed when
// all are.
func overall(phases []*state.PhaseRecord) state.Status {
	worst := state.StatusCompleted
	rank := map[state.Status]int{state.StatusCompleted: 0, state.StatusPending: 1, state.StatusInterrupted: 2, state.StatusBlocked: 3, state.StatusFailed: 4}
	for _, p := range phases {
		if rank[p.Status] > rank[worst] {
			worst = p.Status
		}
	}
	return worst
}

// mergeGit fills the latest run's phases that did not run here (pending)
// with what git history says about them.
func (e *Env) mergeGit(repo *gitcommit.Repo, run *state.Run) {
	if repo == nil {
		return
	}
	var pending []*state.PhaseRecord
	for _, p := range run.Phases {
		if p.Status == state.StatusPending {
			pending = append(pending, p)
		}
	}
	if len(pending) == 0 {
		return
	}
	rel := orchestrator.PlanRel(repo.Root(), run.Plan)
	l, err := repo.ReadLedger(context.Background(), rel)
	if err != nil {
		fmt.Fprintf(e.Stderr, "debussy: read git history: %v\n", err)
		return
	}
	for _, p := range pending {
		if o, ok := l.Latest(rel, p.ID); ok {
			fromOutcome(p, o)
		}
	}
}
