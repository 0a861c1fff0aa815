// Package cijob is a plan's phase run as a CI job: `debussy run PLAN --only
// ID --base deps --push R`. Before the first session, --base deps merges
// the result branches of the phase's dependencies (plans.PhaseBranch) from
// the remote; --push pushes the phase's own branch after every commit
// debussy makes for it, and first of all whatever a run killed between
// commit and push left unpushed, and the run's record beside it
// (records.go). A push the remote rejects because the branch moved on is
// fetched, merged and pushed again, never forced.
package cijob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/state"
)

// BaseDeps is --base deps.
const BaseDeps = "deps"

// maxPushTries bounds the fetch-merge-push rounds against a remote branch
// other pushers keep moving.
const maxPushTries = 4

// pushGrace bounds a push made after Ctrl-C (the interrupt's commit): the
// run's context is cancelled by then; a second Ctrl-C cuts it at once.
var pushGrace = 15 * time.Second

// Job is a run's work with the remote (--base deps, --push): a CI job's
// phase on its branch. Such a run is one phase at a time in the user's
// work tree, so its state is one goroutine's.
type Job struct {
	Repo    *gitcommit.Repo
	Plan    *plans.Plan
	PlanRel string // the plan as the Debussy-Plan trailer names it
	// Only, Base and Push are --only, --base and --push.
	Only, Base, Push string
	Run              string // the run's id
	Now              func() time.Time
	Hard             <-chan struct{} // a second Ctrl-C
	Log              *slog.Logger
	Rec              Emitter // the run's record
	// Ctx is the run's root context; GitCtx what git commands take
	// (bounded once interrupted).
	Ctx, GitCtx func() context.Context
	// Writer commits for phase the way every commit site does (the lock
	// wait, listed in the phase's record first when list).
	Writer func(phase string, list bool) Writer
	// Ready refuses what the run refuses before anything is fetched: a
	// repository without a commit, a dirty tree (a killed run's leftovers
	// committed first).
	Ready func() error
	// Preview is a dry run: nothing is fetched, so --base deps's
	// dependencies are not required to be done yet.
	Preview bool

	unpushed map[string]pending
	hold     *remote.Hold
}

// Emitter is where facts go.
type Emitter interface{ Emit(record.Event) }

// Writer commits: Write runs one git write (a commit, a merge) with the
// options it adds; Emit records facts where its commits are listed.
type Writer interface {
	Write(w func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error)) (gitcommit.Commit, error)
	Emitter
}

// pending is a phase whose last push failed.
type pending struct {
	repo *gitcommit.Repo
	w    Writer
}

// Hold is the account's usage limit git records, read by ReadHold; nil
// when none is in force (or without a job).
func (j *Job) Hold() *remote.Hold {
	if j == nil {
		return nil
	}
	return j.hold
}

// remoteName is the remote --base deps and --push work with.
func (j *Job) remoteName() string {
	if j.Push != "" {
		return j.Push
	}
	return "origin"
}

func (j *Job) remoteAt(dir string) remote.Remote {
	// Marked with the run id, as its claude sessions are: a git push left
	// running by a debussy killed mid-push is killed by the next run
	// (markStaleRuns), which pushes again.
	return remote.Remote{Dir: dir, Name: j.remoteName(), Env: append(os.Environ(), state.EnvRunID+"="+j.Run)}
}

// planID names the plan on the remote (plans.ID).
func (j *Job) planID() string { return plans.ID(j.PlanRel) }

// UsesRemote reports whether the run fetches from or pushes to a remote.
func (j *Job) UsesRemote() bool { return j.Base == BaseDeps || j.Push != "" }

// Sync, before the phases are chosen: commits what a killed run
// left, fetches the plan's phase branches, brings in the phase's own
// pushed branch (a rerun resumes its work) or pushes what a kill left
// unpushed, and merges the dependencies' branches. Any refusal leaves HEAD
// where it was and pushes nothing more.
func (j *Job) Sync(ctx context.Context) error {
	if err := j.Ready(); err != nil {
		return err
	}
	rem := j.remoteAt(j.Repo.Root())
	if err := rem.Check(ctx); err != nil {
		return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
	}
	// Every plan's branches: a usage limit any of them records is the
	// account's (readHold).
	if err := rem.Fetch(ctx, "debussy/"); err != nil {
		return fmt.Errorf("%w: %w", outcome.ErrSetup, j.interrupted(ctx, err))
	}
	orig, err := j.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", outcome.ErrSetup, err)
	}
	undo := func(err error) error {
		if head, herr := j.Repo.Head(); herr == nil && head != orig {
			if rerr := rem.ResetKeep(context.WithoutCancel(ctx), orig); rerr != nil {
				return fmt.Errorf("%w (and moving HEAD back to %s: %w)", err, gitcommit.Short(orig), rerr)
			}
		}
		return err
	}
	if j.Push != "" && j.Only != "" {
		if err := j.syncOwn(ctx, rem); err != nil {
			return undo(err)
		}
	}
	if j.Base == BaseDeps {
		if err := j.mergeDeps(ctx, rem); err != nil {
			return undo(err)
		}
	}
	return nil
}

// interrupted is err, or ErrInterrupted when ctx's end caused it.
func (j *Job) interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return outcome.ErrInterrupted
	}
	return err
}

// syncOwn brings the --only phase's pushed branch into HEAD when it holds
// work HEAD lacks (a job that ran the phase before: its work goes on, a
// completed phase is skipped), else pushes the phase's commits HEAD has
// and the remote lacks (a kill between commit and push).
func (j *Job) syncOwn(ctx context.Context, rem remote.Remote) error {
	branch := plans.PhaseBranch(j.planID(), j.Only)
	ref := rem.Tracking(branch)
	tip, ok, err := rem.Tip(ctx, ref)
	if err != nil {
		return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
	}
	head, err := j.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", outcome.ErrSetup, err)
	}
	if ok && tip != head {
		behind, err := rem.IsAncestor(ctx, tip, head)
		if err != nil {
			return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
		}
		if !behind {
			if err := j.bringIn(ctx, rem, ref, fmt.Sprintf("debussy: phase %s — merge its branch %s from %s", j.Only, branch, rem.Name),
				"The phase's branch on the remote holds work of an earlier run (--push)."); err != nil {
				return fmt.Errorf("phase %s: its branch %s on %s %w", j.Only, branch, rem.Name, err)
			}
			j.Rec.Emit(record.RemoteResume{Phase: j.Only, Branch: branch, Commit: tip, Remote: rem.Name})
			return nil
		}
	}
	against := ""
	if ok {
		against = ref
	}
	unpushed, err := rem.Unpushed(ctx, against, j.PlanRel, j.Only)
	if err != nil {
		return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
	}
	if len(unpushed) == 0 {
		return nil
	}
	j.Log.Warn("pushing first: commits of the phase an earlier run made but did not push", "phase", j.Only, "commits", len(unpushed), "branch", branch)
	pctx, cancel := j.pushContext()
	defer cancel()
	if err := j.pushBranch(pctx, j.Repo, j.Only, nil); err != nil {
		return fmt.Errorf("%w: phase %s: push the commits an earlier run left unpushed: %w", outcome.ErrPush, j.Only, j.interrupted(ctx, err))
	}
	return nil
}

// bringIn moves HEAD to include ref: a fast-forward when HEAD is behind
// it, else a merge commit (git's merge, as --parallel merges). A conflict
// names the files; nothing is changed then. Its error reads after a noun:
// "… cannot be merged: …".
func (j *Job) bringIn(ctx context.Context, rem remote.Remote, ref, subject, body string) error {
	head, err := j.Repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", outcome.ErrSetup, err)
	}
	ff, err := rem.IsAncestor(ctx, head, ref)
	if err != nil {
		return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
	}
	if ff {
		if err := rem.FastForward(ctx, ref); err != nil {
			return fmt.Errorf("%w: %w", outcome.ErrSetup, j.interrupted(ctx, err))
		}
		return nil
	}
	msg := gitcommit.Message{Subject: subject, Body: body, Run: j.Run, Plan: j.PlanRel, Phase: j.Only, Event: "merge"}
	_, err = j.Writer(j.Only, false).Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
		return j.Repo.Merge(j.GitCtx(), ref, msg.String(), opts...)
	})
	var ce *gitcommit.ConflictError
	switch {
	case err == nil, errors.Is(err, gitcommit.ErrNothingToCommit):
		return nil
	case errors.As(err, &ce) && ce.Untracked:
		return public.OwnErr(fmt.Errorf("%w: your untracked %s would be overwritten (move them away and rerun)", outcome.ErrConflict, strings.Join(ce.Files, ", ")))
	case errors.As(err, &ce):
		return public.OwnErr(fmt.Errorf("%w: it and HEAD both changed %s", outcome.ErrConflict, strings.Join(ce.Files, ", ")))
	}
	return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
}

// mergeDeps merges the result branches of the --only phase's direct
// dependencies (each holds its own dependencies' merges). A dependency
// completed in the plan's table, or already in HEAD's history with no
// branch on the remote, needs nothing.
func (j *Job) mergeDeps(ctx context.Context, rem remote.Remote) error {
	ph := j.Plan.Phase(j.Only)
	if ph == nil {
		return nil // selectOnly names the mistake
	}
	res := completion.Resolver{Plan: j.Plan, Git: completion.ReadGit(j.GitCtx(), j.Repo, j.PlanRel, j.Log), PlanRel: j.PlanRel}
	for _, dep := range ph.DependsOn {
		if res.Phase(dep).Source == completion.Table {
			continue
		}
		branch := plans.PhaseBranch(j.planID(), dep)
		ref := rem.Tracking(branch)
		tip, ok, err := rem.Tip(ctx, ref)
		if err != nil {
			return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
		}
		if !ok {
			if _, ok := res.InGit(dep); ok {
				continue
			}
			return fmt.Errorf("%w: --base deps: phase %s depends on phase %s, whose branch %s is not on %s: run that phase first (debussy run %s --only %s --push %s)",
				outcome.ErrSetup, j.Only, dep, branch, rem.Name, j.PlanRel, dep, rem.Name)
		}
		o, ok, err := rem.LatestOutcome(ctx, ref, j.PlanRel, dep)
		if err != nil {
			return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
		}
		if !ok || o.Event != string(state.StatusCompleted) {
			how := "no outcome of it is recorded there (a run still going, or killed)"
			if h, held, _ := rem.Hold(ctx, j.Now(), ref); held && h.Phase == dep {
				how = fmt.Sprintf("it stopped at the %s usage limit, which resets %s; rerun it after that",
					failure.LimitName(h.Limit), failure.ResetClock(h.Resets, j.Now()))
			}
			if ok {
				how = fmt.Sprintf("its latest outcome there is %s at %s", o.Event, gitcommit.Short(o.Commit))
				if o.Reason != "" {
					how += ": " + o.Reason
				}
			}
			return fmt.Errorf("%w: --base deps: phase %s depends on phase %s, which has not completed on branch %s of %s: %s",
				outcome.ErrSetup, j.Only, dep, branch, rem.Name, how)
		}
		head, err := j.Repo.Head()
		if err != nil {
			return fmt.Errorf("%w: read HEAD: %w", outcome.ErrSetup, err)
		}
		if merged, err := rem.IsAncestor(ctx, tip, head); err != nil {
			return fmt.Errorf("%w: %w", outcome.ErrSetup, err)
		} else if merged {
			j.Log.Debug("dependency already merged", "phase", j.Only, "dependency", dep, "branch", branch)
			continue
		}
		if err := j.bringIn(ctx, rem, ref, fmt.Sprintf("debussy: phase %s — merge dependency phase %s", j.Only, dep),
			fmt.Sprintf("--base deps: phase %s's result, branch %s of %s.", dep, branch, rem.Name)); err != nil {
			if errors.Is(err, outcome.ErrConflict) {
				return fmt.Errorf("--base deps: phase %s's dependency phase %s (branch %s of %s) %w; HEAD is as it was, nothing was pushed (merge the dependencies with git yourself, then rerun)",
					j.Only, dep, branch, rem.Name, err)
			}
			return err
		}
		j.Rec.Emit(record.BaseMerge{Phase: j.Only, Dependency: dep, Branch: branch, Commit: tip})
	}
	return nil
}

// pushContext is the context a push runs under: the run's, or once Ctrl-C
// has cancelled that (the interrupt's own commit is pushed), a short grace
// that a second Ctrl-C cuts.
func (j *Job) pushContext() (context.Context, context.CancelFunc) {
	if j.Ctx().Err() == nil {
		return context.WithCancel(j.Ctx())
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(j.Ctx()), pushGrace)
	if j.Hard != nil {
		go func() {
			select {
			case <-j.Hard:
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
// commits go through w, the phase's committer (nil: one that lists them
// nowhere), as every commit does.
func (j *Job) pushBranch(ctx context.Context, repo *gitcommit.Repo, phase string, c Writer) error {
	rem := j.remoteAt(repo.Root())
	branch := plans.PhaseBranch(j.planID(), phase)
	if c == nil {
		c = j.Writer(phase, false)
	}
	for try := 1; ; try++ {
		err := rem.Push(ctx, branch)
		if err == nil || !errors.Is(err, remote.ErrRejected) || try >= maxPushTries {
			return err
		}
		c.Emit(record.PushRejected{Phase: phase, Branch: branch, Try: try})
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
			Run:     j.Run, Plan: j.PlanRel, Phase: phase, Event: "merge",
		}
		_, err = c.Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
			return repo.Merge(j.GitCtx(), rem.Tracking(branch), msg.String(), opts...)
		})
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

// Pushed follows a commit of phase (in repo, by its committer c) under
// --push: the push, and what remains to push if it failed (FinalPush
// tries once more).
func (j *Job) Pushed(phase string, repo *gitcommit.Repo, c Writer) {
	ctx, cancel := j.pushContext()
	defer cancel()
	branch := plans.PhaseBranch(j.planID(), phase)
	if err := j.pushBranch(ctx, repo, phase, c); err != nil {
		if j.unpushed == nil {
			j.unpushed = map[string]pending{}
		}
		j.unpushed[phase] = pending{repo, c}
		c.Emit(record.PushFailed{Phase: phase, Branch: branch, Remote: j.Push, Error: err.Error()})
		return
	}
	delete(j.unpushed, phase)
	head, _ := repo.Head()
	c.Emit(record.Push{Phase: phase, Branch: branch, Remote: j.Push, Commit: &head})
}

// FinalPush tries once more to push every phase whose last push failed.
// One that still fails ends the run with ErrPush when it would otherwise
// succeed; its commits stay in the local branch either way.
func (j *Job) FinalPush(err error) error {
	if j.Push == "" || len(j.unpushed) == 0 {
		return err
	}
	for id, u := range j.unpushed {
		repo := u.repo
		ctx, cancel := j.pushContext()
		perr := j.pushBranch(ctx, repo, id, u.w)
		cancel()
		branch := plans.PhaseBranch(j.planID(), id)
		if perr == nil {
			delete(j.unpushed, id)
			j.Rec.Emit(record.Push{Phase: id, Branch: branch, Remote: j.Push})
			continue
		}
		head, _ := repo.Head()
		perr = fmt.Errorf("phase %s: %w to %s (branch %s): %w; the work is committed locally at %s — run the same command again to push it first",
			id, outcome.ErrPush, j.Push, branch, perr, gitcommit.Short(head))
		j.Rec.Emit(record.PushFailed{Phase: id, Branch: branch, Remote: j.Push, Error: perr.Error(), Final: true})
		if err == nil {
			err = perr
		}
	}
	return err
}

// ReadHold reads the usage limit in force that git records (remote.Hold):
// from HEAD, and with --base/--push from the remote's debussy branches
// syncRemote fetched. An unreadable record costs only the hold: a warning.
func (j *Job) ReadHold(ctx context.Context) {
	if j.Repo == nil {
		return
	}
	rem := remote.Remote{Dir: j.Repo.Root()}
	var revs []string
	if j.UsesRemote() {
		rem.Name = j.remoteName()
		revs = append(revs, remote.DebussyRefs(rem.Name))
	}
	h, ok, err := rem.Hold(ctx, j.Now(), revs...)
	if errors.Is(err, exec.ErrNotFound) {
		return // no git installed: the records are read with it
	}
	if err != nil {
		j.Log.Warn("read the usage limits recorded in git; going on without them", "err", j.interrupted(ctx, err))
		return
	}
	if ok {
		j.hold = &h
	}
}

// Plans says, for --dry-run, what --base deps and --push would do.
func (j *Job) Plans() []string {
	var out []string
	if j.Base == BaseDeps && j.Only != "" {
		if ph := j.Plan.Phase(j.Only); ph != nil {
			for _, dep := range ph.DependsOn {
				out = append(out, fmt.Sprintf("--base deps: merge phase %s's branch %s from %s (it must end completed there)",
					dep, plans.PhaseBranch(j.planID(), dep), j.remoteName()))
			}
		}
	}
	if j.Push != "" {
		phase := j.Only
		if phase == "" {
			phase = "<ID>"
		}
		out = append(out, fmt.Sprintf("--push: push HEAD to %s on %s after every commit (never forced)",
			plans.PhaseBranch(j.planID(), phase), j.Push))
	}
	return out
}
