package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// --parallel N: phases whose dependencies are complete run at the same
// time, each in a linked worktree on its own branch under
// .debussy/worktrees/, and are merged into the user's branch as they
// complete — in dependency order, since a phase starts only once its
// dependencies are merged, from the merged result.
//
// Nothing is locked across a phase's work. Each phase's goroutine owns its
// worktree, its branch and its side of the record: what happens it emits
// to the run's recorder, which never waits on a phase. A phase's commits (hooks, filters, signing) touch only its own
// worktree and branch, so they need no lock: git's own locks cover what
// worktrees share. The user's branch is changed by the scheduler's
// goroutine alone (worktrees added from it, phases merged into it, one at
// a time), so merges are serialised without a lock either, and never wait
// for a phase's commit. The services phases share lock themselves: the
// spend account, the window answers, the events log, the notifier, the
// live view; the rest of orun is set before the first phase starts and
// only read meanwhile (--base/--push, and so unpushed, run one phase at a
// time in your work tree).

// run runs the phases of todo, up to cfg.Parallel at a time. The
// first error stops new phases from starting; those running finish (and
// are merged) before it is returned, so no work or spend is thrown away —
// or, with --fail-fast, are stopped at a safe point (their work committed
// to their branches, resumed by a rerun).
func (sc *scheduler) run(ctx context.Context, order []*plans.Phase, todo map[string]bool) error {
	r := sc.r
	if !r.cfg.AutoCommit {
		return fmt.Errorf("%w: --parallel %d needs auto_commit: a phase's work reaches your branch as a merge of its branch's commits",
			ErrSetup, r.cfg.Parallel)
	}

	// A checkout git would refuse is refused before any phase is paid for.
	if err := r.Repo.CheckCheckout(); err != nil {
		return fmt.Errorf("%w: phase worktrees: %w", ErrSetup, err)
	}
	// claude's sandbox in two phases at once would race on the placeholder
	// files it makes in the shared git dir (gitcommit/placeholders.go).
	if r.Sandbox != nil {
		held, err := r.Repo.HoldSandboxPlaceholders()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		defer held.Release()
	}

	done := map[string]bool{} // merged here, or not this run's to do
	for _, ph := range order {
		if !todo[ph.ID] {
			done[ph.ID] = true
		}
	}
	started := map[string]bool{}
	running := map[string]*slot{}
	// Buffered: a phase that ended never waits for the scheduler (which
	// may be merging another).
	results := make(chan phaseResult, r.cfg.Parallel)
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	for {
		for _, ph := range order {
			if first != nil || ctx.Err() != nil || len(running) >= r.cfg.Parallel {
				break
			}
			if !todo[ph.ID] || started[ph.ID] || len(r.Plan.Unfinished(ph, func(id string) bool { return done[id] })) > 0 {
				continue
			}
			started[ph.ID] = true
			s, err := sc.openWorktree(ph)
			if err != nil {
				if len(running) > 0 {
					sc.othersAfterFailure(ph.ID, running)
				}
				fail(err)
				break
			}
			running[ph.ID] = s
			var pctx context.Context
			pctx, s.cancel = context.WithCancelCause(ctx)
			// s (its record included) is the goroutine's until it sends
			// its result; then the scheduler's again, to merge it.
			go func() {
				err := sc.prepareWorktree(pctx, s)
				if err != nil {
					err = sc.notStarted(s, err)
				} else {
					err = r.newPhase(s.ph, s.rec, s.repo, s.keep).run(pctx)
				}
				results <- phaseResult{id: s.ph.ID, err: err}
			}()
		}
		if len(running) == 0 {
			break
		}
		res := <-results
		s := running[res.id]
		s.cancel(nil)
		delete(running, res.id)
		err := res.err
		if err == nil {
			err = sc.mergePhase(s)
		}
		if err == nil {
			done[res.id] = true
		} else {
			if first == nil && !errors.Is(err, ErrInterrupted) && len(running) > 0 {
				sc.othersAfterFailure(res.id, running)
			}
			fail(err)
		}
		sc.closeWorktree(s, err == nil)
	}
	if first != nil {
		return first
	}
	for id := range todo {
		if !done[id] {
			return ErrInterrupted // stopped before it could start
		}
	}
	return nil
}

// openWorktree gives ph its worktree: a new branch from the user's HEAD (the
// phases merged so far), or, for a phase an earlier run left unfinished
// and unmerged, that phase's branch again, with whatever a killed run left
// in its worktree committed first.
func (sc *scheduler) openWorktree(ph *plans.Phase) (*slot, error) {
	r := sc.r
	s := &slot{ph: ph, rec: r.rec.Phase(ph.ID), // the phase's side of the record
		branch: fmt.Sprintf("debussy/%s/phase-%s", r.id, ph.ID),
		path:   filepath.Join(r.Store.Dir, "worktrees", r.id, "phase-"+ph.ID)}
	var prevRun *state.Run
	if !r.Restart {
		var run *state.Run
		var prev *state.PhaseRecord
		r.rec.Read(func(l *state.Ledger, _ *state.Run) { run, prev = l.LastUnfinished(r.planPath(), ph.ID) })
		if prev != nil && prev.Branch != "" && prev.Merge == "" {
			if tip, err := r.Repo.BranchHead(prev.Branch); err == nil && tip != "" {
				s.branch, prevRun = prev.Branch, run
				if prev.Worktree != "" {
					s.path = prev.Worktree
				}
			}
		}
	}
	includes, err := sc.worktreeIncludes()
	if err != nil {
		return nil, err
	}
	s.includes = includes
	keep := make([]string, len(includes))
	for i, f := range includes {
		keep[i] = f.Path
	}
	s.keep = keep
	s.newBranch = prevRun == nil
	reused := false
	if prevRun != nil {
		if repo, err := r.Repo.OpenLinked(s.path); err == nil && samePath(repo.Root(), s.path) {
			s.repo, reused = repo, true
		} else {
			// Gone or broken: a fresh worktree on the same branch.
			s.path = filepath.Join(r.Store.Dir, "worktrees", r.id, "phase-"+ph.ID)
		}
	}
	if !reused {
		head, err := r.Repo.Head()
		if err != nil {
			return nil, fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
		}
		if err := r.Repo.AddWorktree(r.gitCtx(), s.path, s.branch, head); err != nil {
			return nil, fmt.Errorf("%w: phase %s: %w", ErrSetup, ph.ID, err)
		}
		repo, err := r.Repo.OpenLinked(s.path)
		if err != nil {
			return nil, fmt.Errorf("%w: phase %s: %w", ErrSetup, ph.ID, err)
		}
		s.repo = repo
	} else {
		msg := gitcommit.Message{
			Subject: fmt.Sprintf("debussy: phase %s — work left by interrupted run %s", ph.ID, prevRun.ID),
			Body:    "debussy stopped without committing (killed or crashed); this is what it left in the phase's worktree.",
			Run:     prevRun.ID, Plan: r.planRel(), Phase: ph.ID, Event: string(eventInterrupted),
		}
		// Waits out a git lock like every other commit (committer).
		c, err := r.committer(nil, s.rec, "", ph.ID, false).Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
			return s.repo.CommitAll(r.gitCtx(), msg.String(), append(opts, gitcommit.Never(keep))...)
		})
		switch {
		case errors.Is(err, gitcommit.ErrNothingToCommit):
		case err != nil:
			return nil, fmt.Errorf("%w: phase %s: commit the interrupted run's work in %s: %w", ErrSetup, ph.ID, s.path, err)
		default:
			s.rec.Emit(record.LeftoverCommit{Phase: ph.ID, Run: prevRun.ID, Commit: c.Hash, Files: c.Files})
		}
	}
	s.reused = reused
	if r.Sandbox != nil {
		// Its own config.worktree, which every phase's claude binds;
		// released when its worktree closes.
		held, err := s.repo.HoldSandboxPlaceholders()
		if err != nil {
			return nil, fmt.Errorf("%w: phase %s: %w", ErrSetup, ph.ID, err)
		}
		s.held = held
	}
	s.rec.Emit(record.Worktree{Phase: ph.ID, Path: s.path, Branch: s.branch, Resumed: prevRun != nil})
	if err := s.rec.Sync(); err != nil {
		return nil, err
	}
	return s, nil
}

func samePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// mergePhase merges a completed phase's branch into the user's branch. A
// conflict leaves the branch as it was, marks the phase failed (its work is
// not in the user's branch, so a rerun must not skip it) and stops the run.
func (sc *scheduler) mergePhase(s *slot) error {
	r := sc.r
	id := s.ph.ID
	msg := gitcommit.Message{
		Subject: fmt.Sprintf("debussy: merge phase %s %q", id, s.ph.ShortTitle()),
		Body:    fmt.Sprintf("The phase ran in its own worktree on branch %s (--parallel).", s.branch),
		Run:     r.id, Plan: r.planRel(), Phase: id, Event: "merge",
	}
	// The merge is listed in the ledger before the user's branch moves to
	// it, as every commit is (committer): a kill -9 in between must not
	// leave the branch at a commit no run lists.
	c, err := r.committer(nil, s.rec, "", id, true).Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
		return r.Repo.Merge(r.gitCtx(), s.branch, msg.String(), opts...)
	})
	var ce *gitcommit.ConflictError
	switch {
	case err == nil:
		s.rec.Emit(record.Merge{Phase: id, Branch: s.branch, Commit: c.Hash, Files: c.Files})
		return s.rec.Sync()
	case errors.Is(err, gitcommit.ErrNothingToCommit):
		return nil // already in the user's branch
	case errors.As(err, &ce) && ce.Untracked:
		// debussy's words and the files' paths: public (public.OwnErr).
		err = public.OwnErr(fmt.Errorf("phase %s %w into your branch: your untracked %s would be overwritten; your branch is as it was, the phase's work is on branch %s (move the files away and rerun)",
			id, ErrConflict, strings.Join(ce.Files, ", "), s.branch))
	case errors.As(err, &ce):
		err = public.OwnErr(fmt.Errorf("phase %s %w into your branch: it and a phase merged before it both changed %s (debussy merges whole files); your branch is as it was before this merge, the phase's work is on branch %s (merge it with git yourself, then rerun; or delete the branch to redo the phase)",
			id, ErrConflict, strings.Join(ce.Files, ", "), s.branch))
	default:
		err = fmt.Errorf("phase %s %w into your branch: %w; the phase's work is on branch %s", id, ErrConflict, err, s.branch)
	}
	s.rec.Emit(record.MergeFailed{Phase: id, Branch: s.branch, Error: err.Error(), Reason: outcome.PublicReason(err), Err: err})
	if serr := s.rec.Sync(); serr != nil {
		return serr
	}
	return err
}

// closeWorktree removes a phase's worktree once its work is committed to
// its branch (kept, with its work, if anything is left uncommitted), and
// deletes the branch once merged.
func (sc *scheduler) closeWorktree(s *slot, merged bool) {
	r := sc.r
	s.held.Release()
	if s.discard {
		sc.removeWorktree(s, s.newBranch)
		return
	}
	dirty, err := s.repo.DirtyTracked(r.gitCtx())
	var untracked gitcommit.Fingerprints
	if err == nil {
		untracked, err = s.repo.Untracked(r.gitCtx())
	}
	for _, f := range s.includes {
		delete(untracked, f.Path) // copies, never committed: not work
	}
	if err != nil || len(dirty)+len(untracked) > 0 {
		r.log.Warn("phase worktree kept: it holds uncommitted work", "phase", s.ph.ID, "path", s.path, "err", err)
		return
	}
	sc.removeWorktree(s, merged)
}
