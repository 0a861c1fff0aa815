// Package completion answers one question for run, check, status, matrix,
// pipeline and collect: is phase X done, since which commit, and per which
// source. Three sources know: the plan's table (the user's word), the
// local ledger (.debussy/, a cache of git with raw logs) and the commit
// trailers in git history reachable from HEAD (Debussy-Event: what a
// clone, another machine or a CI job knows).
//
// The precedence, first match wins:
//
//	| # | facts                                                          | done | source |
//	|---|----------------------------------------------------------------|------|--------|
//	| 1 | the plan's table says completed                                | yes  | table  |
//	| 2 | --restart (Fresh)                                              | no   | —      |
//	| 3 | .debussy/ has a completion, and git does not contradict it:    | yes  | ledger |
//	|   | git is not authoritative (no history read, auto_commit off),   |      |        |
//	|   | the completion recorded no commit, or git's latest outcome     |      |        |
//	|   | of the phase is completed too                                  |      |        |
//	| 4 | git's latest outcome of the phase is completed (a clone        | yes  | git    |
//	|   | without .debussy/, a run elsewhere, or .debussy/ says failed)  |      |        |
//	| 5 | anything else: pending, failed, blocked, interrupted, a dead   | no   | —      |
//	|   | run (.debussy/ says running, no lock), a completion whose      |      |        |
//	|   | commit a reset took away or a later outcome in git overrode    |      |        |
//
// Rows 3's condition makes .debussy/ a cache of git: a completion whose
// commit is not reachable from HEAD (a reset), or that a later outcome in
// git overrides (a --restart that failed), does not count.
package completion

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// Source is what says a phase is done.
type Source string

const (
	None   Source = ""       // not done
	Table  Source = "table"  // the plan's table
	Ledger Source = "ledger" // .debussy/
	Git    Source = "git"    // a Debussy-Event: completed trailer reachable from HEAD
)

// Resolver holds the three sources; the zero value of each is "knows
// nothing".
type Resolver struct {
	Plan *plans.Plan
	// Ledger is .debussy/'s runs, PlanPath the plan's absolute path they
	// are keyed by; nil: no .debussy/ (a clone, CI) or not consulted.
	Ledger   *state.Ledger
	PlanPath string
	// Git is the outcomes in git history reachable from HEAD, PlanRel the
	// plan's Debussy-Plan path; nil: no repository or unreadable history.
	Git     *gitcommit.Ledger
	PlanRel string
	// GitKnows: git history, not .debussy/, is the record (it was read
	// and debussy commits, auto_commit).
	GitKnows bool
	// Fresh is --restart: only the plan's table counts.
	Fresh bool
}

// Answer is whether a phase is done, per which source, since which commit.
type Answer struct {
	Done   bool
	Source Source
	// Commit is the commit the phase was done at ("" when the source
	// names none: the table, or a ledger record without commits).
	Commit string
	// Commits are the phase's commits per the source (the ledger's list,
	// or git's outcome commit).
	Commits []string
	Run     string // the run that completed it, per the ledger or git's trailer
	// Why says it in words for the log: "completed in run X at abc1234".
	Why string
}

// Phase resolves phase id by the precedence in the package comment.
func (r Resolver) Phase(id string) Answer {
	if ph := r.plan(id); ph != nil && ph.Status == plans.StatusCompleted {
		return Answer{Done: true, Source: Table, Why: "completed in the plan's table"}
	}
	if r.Fresh {
		return Answer{}
	}
	o, inGit := r.InGit(id)
	if r.Ledger != nil {
		if run, prev := r.Ledger.LastCompleted(r.PlanPath, id); prev != nil && (!r.GitKnows || len(prev.Commits) == 0 || inGit) {
			a := Answer{Done: true, Source: Ledger, Run: run.ID, Commits: prev.Commits, Why: "completed in run " + run.ID}
			if n := len(prev.Commits); n > 0 {
				a.Commit = prev.Commits[n-1]
				a.Why += " at " + gitcommit.Short(a.Commit)
			}
			return a
		}
	}
	if inGit {
		return Answer{Done: true, Source: Git, Commit: o.Commit, Commits: []string{o.Commit}, Run: o.Run,
			Why: fmt.Sprintf("completed at %s (per git)", gitcommit.Short(o.Commit))}
	}
	return Answer{}
}

// Done reports whether phase id is done: Phase(id).Done, in the shape
// plans.Plan.Ready and Unfinished take.
func (r Resolver) Done(id string) bool { return r.Phase(id).Done }

// InGit returns git's latest outcome of phase id when it is completed:
// source 4 alone, for a question about git history (is the phase's work
// in HEAD already?).
func (r Resolver) InGit(id string) (gitcommit.Outcome, bool) {
	o, ok := r.Git.Latest(r.PlanRel, id)
	if !ok || o.Event != string(state.StatusCompleted) {
		return gitcommit.Outcome{}, false
	}
	return o, true
}

func (r Resolver) plan(id string) *plans.Phase {
	if r.Plan == nil {
		return nil
	}
	return r.Plan.Phase(id)
}

// ReadGit reads the outcomes in repo's git history for the resolver (its
// Git); an unreadable history only costs the skip of phases completed
// elsewhere, so it is a warning and nil.
func ReadGit(ctx context.Context, repo *gitcommit.Repo, planRel string, log *slog.Logger) *gitcommit.Ledger {
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
