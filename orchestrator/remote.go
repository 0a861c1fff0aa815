package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/state"
)

// A phase as a CI job: `debussy run PLAN --only ID --base deps --push R`.
// Before the first session, --base deps merges the result branches of the
// phase's dependencies (plans.PhaseBranch) from the remote; --push pushes
// the phase's own branch after every commit debussy makes for it, and
// first of all whatever a run killed between commit and push left
// unpushed. A push the remote rejects because the branch moved on is
// fetched, merged and pushed again, never forced.

// BaseDeps is --base deps.
const BaseDeps = "deps"

// ErrPush ends a run whose phase's commits are in the local branch but
// could not be pushed (exit 1): nothing is lost, and the same command
// pushes them first.
var ErrPush = errors.New("not pushed")

// maxPushTries bounds the fetch-merge-push rounds against a remote branch
// other pushers keep moving.
const maxPushTries = 4

// pushGrace bounds a push made after Ctrl-C (the interrupt's commit): the
// run's context is cancelled by then; a second Ctrl-C cuts it at once.
var pushGrace = 15 * time.Second

// remoteRun is the run's work with the remote (--base deps, --push): a
// CI job's phase on its branch. Such a run is one phase at a time in the
// user's work tree, so unpushed and hold are one goroutine's.
type remoteRun struct{ r *orun }

// rem is the run's work with the remote.
func (r *orun) rem() *remoteRun { return &remoteRun{r} }

// remoteName is the remote --base deps and --push work with.
func (rm *remoteRun) remoteName() string {
	r := rm.r
	if r.Push != "" {
		return r.Push
	}
	return "origin"
}

func (rm *remoteRun) remoteAt(dir string) remote.Remote {
	r := rm.r
	// Marked with the run id, as its claude sessions are: a git push left
	// running by a debussy killed mid-push is killed by the next run
	// (markStaleRuns), which pushes again.
	return remote.Remote{Dir: dir, Name: rm.remoteName(), Env: append(os.Environ(), state.EnvRunID+"="+r.id)}
}

// planID names the plan on the remote (plans.ID).
func (rm *remoteRun) planID() string { return plans.ID(rm.r.planRel()) }

// usesRemote reports whether the run fetches from or pushes to a remote.
func (rm *remoteRun) usesRemote() bool { return rm.r.Base == BaseDeps || rm.r.Push != "" }

// syncRemote, before the phases are chosen: commits what a killed run
// left, fetches the plan's phase branches, brings in the phase's own
// pushed branch (a rerun resumes its work) or pushes what a kill left
// unpushed, and merges the dependencies' branches. Any refusal leaves HEAD
// where it was and pushes nothing more.
func (rm *remoteRun) syncRemote(ctx context.Context) error {
	r := rm.r
	if err := requireCommit(r.Repo); err != nil {
		return err
	}
	if err := r.checkTree(); err != nil {
		return err
	}
	rem := rm.remoteAt(r.Repo.Root())
	if err := rem.Check(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	// Every plan's branches: a usage limit any of them records is the
	// account's (readHold).
	if err := rem.Fetch(ctx, "debussy/"); err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, rm.interrupted(ctx, err))
	}
	orig, err := r.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	undo := func(err error) error {
		if head, herr := r.Repo.Head(); herr == nil && head != orig {
			if rerr := rem.ResetKeep(context.WithoutCancel(ctx), orig); rerr != nil {
				return fmt.Errorf("%w (and moving HEAD back to %s: %w)", err, gitcommit.Short(orig), rerr)
			}
		}
		return err
	}
	if r.Push != "" && r.Only != "" {
		if err := rm.syncOwn(ctx, rem); err != nil {
			return undo(err)
		}
	}
	if r.Base == BaseDeps {
		if err := rm.mergeDeps(ctx, rem); err != nil {
			return undo(err)
		}
	}
	return nil
}

// interrupted is err, or ErrInterrupted when ctx's end caused it.
func (rm *remoteRun) interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return err
}

// syncOwn brings the --only phase's pushed branch into HEAD when it holds
// work HEAD lacks (a job that ran the phase before: its work goes on, a
// completed phase is skipped), else pushes the phase's commits HEAD has
// and the remote lacks (a kill between commit and push).
func (rm *remoteRun) syncOwn(ctx context.Context, rem remote.Remote) error {
	r := rm.r
	branch := plans.PhaseBranch(rm.planID(), r.Only)
	ref := rem.Tracking(branch)
	tip, ok, err := rem.Tip(ctx, ref)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	head, err := r.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	if ok && tip != head {
		behind, err := rem.IsAncestor(ctx, tip, head)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		if !behind {
			if err := rm.bringIn(ctx, rem, ref, fmt.Sprintf("debussy: phase %s — merge its branch %s from %s", r.Only, branch, rem.Name),
				"The phase's branch on the remote holds work of an earlier run (--push)."); err != nil {
				return fmt.Errorf("phase %s: its branch %s on %s %w", r.Only, branch, rem.Name, err)
			}
			r.log.Info("took up the phase's branch from the remote", "phase", r.Only, "branch", branch, "remote", rem.Name, "commit", gitcommit.Short(tip))
			r.recorder.event(record.RemoteResume{Phase: r.Only, Branch: branch, Commit: tip})
			return nil
		}
	}
	against := ""
	if ok {
		against = ref
	}
	unpushed, err := rem.Unpushed(ctx, against, r.planRel(), r.Only)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if len(unpushed) == 0 {
		return nil
	}
	r.log.Warn("pushing first: commits of the phase an earlier run made but did not push", "phase", r.Only, "commits", len(unpushed), "branch", branch)
	pctx, cancel := rm.pushContext()
	defer cancel()
	if err := rm.pushBranch(pctx, r.Repo, r.Only, nil); err != nil {
		return fmt.Errorf("%w: phase %s: push the commits an earlier run left unpushed: %w", ErrPush, r.Only, rm.interrupted(ctx, err))
	}
	return nil
}

// bringIn moves HEAD to include ref: a fast-forward when HEAD is behind
// it, else a merge commit (git's merge, as --parallel merges). A conflict
// names the files; nothing is changed then. Its error reads after a noun:
// "… cannot be merged: …".
func (rm *remoteRun) bringIn(ctx context.Context, rem remote.Remote, ref, subject, body string) error {
	r := rm.r
	head, err := r.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	ff, err := rem.IsAncestor(ctx, head, ref)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if ff {
		if err := rem.FastForward(ctx, ref); err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, rm.interrupted(ctx, err))
		}
		return nil
	}
	msg := gitcommit.Message{Subject: subject, Body: body, Run: r.id, Plan: r.planRel(), Phase: r.Only, Event: "merge"}
	_, err = r.commitWaiting(func() (gitcommit.Commit, error) { return r.Repo.Merge(r.gitCtx(), ref, msg.String()) })
	var ce *gitcommit.ConflictError
	switch {
	case err == nil, errors.Is(err, gitcommit.ErrNothingToCommit):
		return nil
	case errors.As(err, &ce) && ce.Untracked:
		return public.OwnErr(fmt.Errorf("%w: your untracked %s would be overwritten (move them away and rerun)", ErrConflict, strings.Join(ce.Files, ", ")))
	case errors.As(err, &ce):
		return public.OwnErr(fmt.Errorf("%w: it and HEAD both changed %s", ErrConflict, strings.Join(ce.Files, ", ")))
	}
	return fmt.Errorf("%w: %w", ErrSetup, err)
}

// mergeDeps merges the result branches of the --only phase's direct
// dependencies (each holds its own dependencies' merges). A dependency
// completed in the plan's table, or already in HEAD's history with no
// branch on the remote, needs nothing.
func (rm *remoteRun) mergeDeps(ctx context.Context, rem remote.Remote) error {
	r := rm.r
	ph := r.Plan.Phase(r.Only)
	if ph == nil {
		return nil // selectOnly names the mistake
	}
	res := completion.Resolver{Plan: r.Plan, Git: readGitLedger(r.gitCtx(), r.Repo, r.planRel(), r.log), PlanRel: r.planRel()}
	for _, dep := range ph.DependsOn {
		if res.Phase(dep).Source == completion.Table {
			continue
		}
		branch := plans.PhaseBranch(rm.planID(), dep)
		ref := rem.Tracking(branch)
		tip, ok, err := rem.Tip(ctx, ref)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		if !ok {
			if _, ok := res.InGit(dep); ok {
				continue
			}
			return fmt.Errorf("%w: --base deps: phase %s depends on phase %s, whose branch %s is not on %s: run that phase first (debussy run %s --only %s --push %s)",
				ErrSetup, r.Only, dep, branch, rem.Name, r.planRel(), dep, rem.Name)
		}
		o, ok, err := rem.LatestOutcome(ctx, ref, r.planRel(), dep)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		if !ok || o.Event != string(state.StatusCompleted) {
			how := "no outcome of it is recorded there (a run still going, or killed)"
			if h, held, _ := rem.Hold(ctx, r.now(), ref); held && h.Phase == dep {
				how = fmt.Sprintf("it stopped at the %s usage limit, which resets %s; rerun it after that",
					failure.LimitName(h.Limit), failure.ResetClock(h.Resets, r.now()))
			}
			if ok {
				how = fmt.Sprintf("its latest outcome there is %s at %s", o.Event, gitcommit.Short(o.Commit))
				if o.Reason != "" {
					how += ": " + o.Reason
				}
			}
			return fmt.Errorf("%w: --base deps: phase %s depends on phase %s, which has not completed on branch %s of %s: %s",
				ErrSetup, r.Only, dep, branch, rem.Name, how)
		}
		head, err := r.Repo.Head()
		if err != nil {
			return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
		}
		if merged, err := rem.IsAncestor(ctx, tip, head); err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		} else if merged {
			r.log.Debug("dependency already merged", "phase", r.Only, "dependency", dep, "branch", branch)
			continue
		}
		if err := rm.bringIn(ctx, rem, ref, fmt.Sprintf("debussy: phase %s — merge dependency phase %s", r.Only, dep),
			fmt.Sprintf("--base deps: phase %s's result, branch %s of %s.", dep, branch, rem.Name)); err != nil {
			if errors.Is(err, ErrConflict) {
				return fmt.Errorf("--base deps: phase %s's dependency phase %s (branch %s of %s) %w; HEAD is as it was, nothing was pushed (merge the dependencies with git yourself, then rerun)",
					r.Only, dep, branch, rem.Name, err)
			}
			return err
		}
		r.log.Info("merged a dependency's result", "phase", r.Only, "dependency", dep, "branch", branch, "commit", gitcommit.Short(tip))
		r.recorder.event(record.BaseMerge{Phase: r.Only, Dependency: dep, Branch: branch, Commit: tip})
	}
	return nil
}

// pushContext is the context a push runs under: the run's, or once Ctrl-C
// has cancelled that (the interrupt's own commit is pushed), a short grace
// that a second Ctrl-C cuts.
func (rm *remoteRun) pushContext() (context.Context, context.CancelFunc) {
	r := rm.r
	if r.ctx.Err() == nil {
		return context.WithCancel(r.ctx)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), pushGrace)
	if r.Hard != nil {
		go func() {
			select {
			case <-r.Hard:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// pushBranch pushes repo's HEAD to the phase's branch on the remote. A
// rejection (the branch moved on) is fetched and merged into HEAD, then
// pushed again, up to maxPushTries times; a conflict ends it. Merge
// commits are listed in rec's commits first (nil: none), as every commit
// is (listFirst).
func (rm *remoteRun) pushBranch(ctx context.Context, repo *gitcommit.Repo, phase string, rec *state.PhaseRecord) error {
	r := rm.r
	rem := rm.remoteAt(repo.Root())
	branch := plans.PhaseBranch(rm.planID(), phase)
	for try := 1; ; try++ {
		err := rem.Push(ctx, branch)
		if err == nil || !errors.Is(err, remote.ErrRejected) || try >= maxPushTries {
			return err
		}
		r.log.Warn("push rejected: the remote branch moved on; fetching and merging it", "phase", phase, "branch", branch, "try", try)
		ok, err := rem.FetchBranch(ctx, branch)
		if err != nil {
			return err
		}
		if !ok {
			continue // deleted meanwhile: push again
		}
		msg := gitcommit.Message{
			Subject: fmt.Sprintf("debussy: phase %s — merge %s from %s", phase, branch, rem.Name),
			Body:    "The push was rejected: another push had moved the branch on (--push).",
			Run:     r.id, Plan: r.planRel(), Phase: phase, Event: "merge",
		}
		var opts []gitcommit.CommitOption
		listed := 0
		if rec != nil {
			listed = len(rec.Commits)
			opts = append(opts, listFirst(&rec.Commits, func() error { return r.recorder.savePhase(rec) }))
		}
		_, err = r.commitWaiting(func() (gitcommit.Commit, error) {
			return repo.Merge(r.gitCtx(), rem.Tracking(branch), msg.String(), opts...)
		})
		if rec != nil {
			unlist(&rec.Commits, listed, err, func() error { return r.recorder.savePhase(rec) })
		}
		var ce *gitcommit.ConflictError
		switch {
		case err == nil, errors.Is(err, gitcommit.ErrNothingToCommit):
		case errors.As(err, &ce):
			return fmt.Errorf("push %s: the remote branch moved on and merging it conflicts on %s; the local commits stay (merge %s yourself and push)",
				branch, strings.Join(ce.Files, ", "), rem.Tracking(branch))
		default:
			return fmt.Errorf("push %s: merge the remote branch: %w", branch, err)
		}
	}
}

// finalPush tries once more to push every phase whose last push failed.
// One that still fails ends the run with ErrPush when it would otherwise
// succeed; its commits stay in the local branch either way.
func (rm *remoteRun) finalPush(err error) error {
	r := rm.r
	if r.Push == "" || len(r.unpushed) == 0 {
		return err
	}
	for id, p := range r.unpushed {
		ctx, cancel := rm.pushContext()
		perr := rm.pushBranch(ctx, p.repo, id, p.rec)
		cancel()
		if perr == nil {
			delete(r.unpushed, id)
			r.recorder.event(record.Push{Phase: id, Branch: plans.PhaseBranch(rm.planID(), id), Remote: r.Push})
			continue
		}
		head, _ := p.repo.Head()
		perr = fmt.Errorf("phase %s: %w to %s (branch %s): %w; the work is committed locally at %s — run the same command again to push it first",
			id, ErrPush, r.Push, plans.PhaseBranch(rm.planID(), id), perr, gitcommit.Short(head))
		r.log.Error("push failed", "phase", id, "err", public.OwnErr(perr)) // git's words about the remote
		if err == nil {
			err = perr
		}
	}
	return err
}

// readHold reads the usage limit in force that git records (remote.Hold):
// from HEAD, and with --base/--push from the remote's debussy branches
// syncRemote fetched. An unreadable record costs only the hold: a warning.
func (rm *remoteRun) readHold(ctx context.Context) {
	r := rm.r
	if r.Repo == nil {
		return
	}
	rem := remote.Remote{Dir: r.Repo.Root()}
	var revs []string
	if rm.usesRemote() {
		rem.Name = rm.remoteName()
		revs = append(revs, remote.DebussyRefs(rem.Name))
	}
	h, ok, err := rem.Hold(ctx, r.now(), revs...)
	if errors.Is(err, exec.ErrNotFound) {
		return // no git installed: the records are read with it
	}
	if err != nil {
		r.log.Warn("read the usage limits recorded in git; going on without them", "err", rm.interrupted(ctx, err))
		return
	}
	if ok {
		r.hold = &h
	}
}

// applyHold makes the phase wait for the account's usage limit that git
// records before its first session (mayStartSession waits, or ends the run
// with exit 75 beyond usage_limit_wait).
func (p *phaseRun) applyHold() {
	r := p.r
	h := r.hold
	if h == nil || !h.Resets.After(r.now()) || !h.Resets.After(p.rec.WaitingUntil) {
		return
	}
	p.rec.WaitingUntil, p.rec.Limit = h.Resets, h.Limit
	r.log.Warn(fmt.Sprintf("the account's %s limit, met by phase %s (commit %s), resets %s: no session starts before then",
		failure.LimitName(h.Limit), h.Phase, gitcommit.Short(h.Commit), failure.ResetClock(h.Resets, r.now())), "phase", p.ph.ID)
	r.recorder.event(record.UsageLimitHold{Phase: p.ph.ID, Limit: h.Limit, Resets: h.Resets, Commit: h.Commit, ByPhase: h.Phase})
}

// remotePlan says, for --dry-run, what --base deps and --push would do.
func (rm *remoteRun) remotePlan() []string {
	r := rm.r
	var out []string
	if r.Base == BaseDeps && r.Only != "" {
		if ph := r.Plan.Phase(r.Only); ph != nil {
			for _, dep := range ph.DependsOn {
				out = append(out, fmt.Sprintf("--base deps: merge phase %s's branch %s from %s (it must end completed there)",
					dep, plans.PhaseBranch(rm.planID(), dep), rm.remoteName()))
			}
		}
	}
	if r.Push != "" {
		phase := r.Only
		if phase == "" {
			phase = "<ID>"
		}
		out = append(out, fmt.Sprintf("--push: push HEAD to %s on %s after every commit (never forced)",
			plans.PhaseBranch(rm.planID(), phase), r.Push))
	}
	return out
}
