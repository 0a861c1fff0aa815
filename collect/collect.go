// Package collect brings a plan's phase results home: it fetches the phase
// branches (plans.PhaseBranch) that `debussy run --only ID --push REMOTE`
// pushed, merges the completed ones in plan order into one branch with
// git's merge (gitcommit.Repo.Merge, as --parallel merges), says how every
// other phase stands per the trailers on its branch, and pushes the result.
package collect

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/remote"
)

// ErrNotCompleted means a phase failed or was blocked: collect merged the
// others, the run as a whole did not succeed.
var ErrNotCompleted = errors.New("phases failed or were blocked")

// ErrSetup is a collect that cannot start: no git, no such remote, no
// branch to merge into.
var ErrSetup = errors.New("cannot collect")

// Options say what to collect, from where, into what.
type Options struct {
	Repo    *gitcommit.Repo
	Plan    *plans.Plan
	PlanRel string // the plan's path from the repository root (Debussy-Plan)
	Remote  string // a configured remote's name
	Into    string // "" = the checked-out branch
	Push    bool
	// PushAttempts bounds push, fetch-and-merge, push again (0: 5).
	PushAttempts int
}

// State is how a phase stands after collect.
type State string

const (
	Merged        State = "merged"         // merged now
	AlreadyMerged State = "already merged" // its branch is in the target already
	Completed     State = "completed"      // no branch; completed per the target's own history or the plan
	Failed        State = "failed"
	Blocked       State = "blocked"
	Interrupted   State = "interrupted" // stopped (Ctrl-C, a usage limit): a rerun resumes it
	Unfinished    State = "unfinished"  // a branch without an outcome yet: running, or killed
	NotRun        State = "not run"     // no branch
	Conflict      State = "conflict"    // its merge conflicted: not merged
	NotMerged     State = "not merged"  // completed, left alone after an earlier conflict
)

// Phase is one phase's line in the result.
type Phase struct {
	ID, Title string
	State     State
	Branch    string   // the phase branch, when the remote has it
	Commit    string   // the merge commit (Merged), else the branch's tip
	Reason    string   // Debussy-Reason of a failed or blocked phase, or what conflicted
	Files     []string // the conflicting paths (Conflict)
	Changed   int      // paths the merge changed (Merged)
}

// Result is what collect did.
type Result struct {
	Target string // the branch merged into
	Phases []Phase
	Pushed bool
	// Conflict names the branch and files of the merge that stopped
	// collect; nil when none did.
	Conflict *gitcommit.ConflictError
	// Records are the plan's run records its jobs pushed (run --push),
	// fetched and kept here (remote.RecordsPrefix); RecordsErr why they
	// could not be, which costs collect nothing else.
	Records    int
	RecordsErr error
}

// Collect fetches the plan's phase branches from opts.Remote and merges the
// completed ones in plan order into the target branch. A conflicting merge
// is aborted (the target stays as the merges before it left it; no branch
// is deleted) and ends collect with an error wrapping gitcommit.ErrConflict;
// nothing is pushed then. Phases that failed or were blocked are listed
// with their reasons and make the error ErrNotCompleted once the completed
// ones are merged (and pushed).
func Collect(ctx context.Context, opts Options) (Result, error) {
	res := Result{}
	if _, err := exec.LookPath("git"); err != nil {
		return res, fmt.Errorf("%w: find git: %w (collect fetches and pushes with git: install it)", ErrSetup, err)
	}
	if opts.Remote == "" {
		return res, fmt.Errorf("%w: name the remote to collect from (--from origin)", ErrSetup)
	}
	rem := remote.Remote{Dir: opts.Repo.Root(), Name: opts.Remote}
	if err := rem.Check(ctx); err != nil {
		if errors.Is(err, remote.ErrNoRemote) {
			return res, fmt.Errorf("%w: no remote named %q here (git remote -v lists them; git remote add %s URL adds one)", ErrSetup, opts.Remote, opts.Remote)
		}
		return res, err
	}
	order, err := opts.Plan.Order()
	if err != nil {
		return res, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	if res.Target, err = checkoutTarget(ctx, rem, opts.Into); err != nil {
		return res, err
	}

	planID := plans.ID(opts.PlanRel)
	// Only this plan's branches, pruned: a branch deleted on the remote
	// must not be merged from a stale copy.
	if err := rem.Fetch(ctx, "debussy/"+planID+"/"); err != nil {
		return res, err
	}
	// The jobs' records travel with their branches: kept here too, so the
	// collected repository has the run's whole record (status --from).
	if res.RecordsErr = rem.FetchRecords(ctx); res.RecordsErr == nil {
		recs, err := rem.Records(ctx)
		res.RecordsErr = err
		for _, r := range recs {
			if r.Plan == planID {
				res.Records++
			}
		}
	}

	here, err := opts.Repo.ReadLedger(ctx, opts.PlanRel)
	if err != nil {
		return res, fmt.Errorf("read the history of %s: %w", res.Target, err)
	}
	// Done in the target: its history or the plan's table (no .debussy/:
	// the target's branch is what counts).
	inTarget := completion.Resolver{Plan: opts.Plan, Git: here, PlanRel: opts.PlanRel}
	stopped, conflictWhy := false, ""
	var notCompleted []string
	for _, ph := range order {
		p := Phase{ID: ph.ID, Title: ph.ShortTitle()}
		branch := plans.PhaseBranch(planID, ph.ID)
		ref := rem.Tracking(branch)
		tip, err := opts.Repo.RefHash(ref)
		if err != nil {
			return res, err
		}
		if tip == "" {
			p.State = NotRun
			if inTarget.Done(ph.ID) {
				p.State = Completed
			}
			res.Phases = append(res.Phases, p)
			continue
		}
		p.Branch, p.Commit = branch, tip
		l, err := opts.Repo.LedgerAt(ctx, ref, opts.PlanRel)
		if err != nil {
			return res, err
		}
		o, ok := l.Latest(opts.PlanRel, ph.ID)
		done := inTarget.Done(ph.ID)
		switch {
		case done && (!ok || o.Event != "completed"):
			// Completed in the target (a rerun elsewhere, merged): a branch
			// left from an earlier try does not undo that.
			p.State = Completed
		case !ok:
			p.State = Unfinished
			p.Reason = limitNote(opts.Repo, tip)
		case o.Event == "completed" && stopped:
			p.State = NotMerged
		case o.Event == "completed":
			if p, err = merge(ctx, opts, res.Target, ph, p, ref); err != nil {
				res.Phases = append(res.Phases, p)
				return res, err
			}
			if p.State == Conflict {
				stopped = true
				res.Conflict = &gitcommit.ConflictError{Branch: opts.Remote + "/" + branch, Files: p.Files}
				conflictWhy = p.Reason
			}
		default:
			p.State, p.Reason = State(o.Event), o.Reason
			if p.State == Interrupted {
				if n := limitNote(opts.Repo, tip); n != "" {
					p.Reason = n
				}
			}
			if p.State == Failed || p.State == Blocked {
				notCompleted = append(notCompleted, ph.ID)
			}
		}
		res.Phases = append(res.Phases, p)
	}

	if res.Conflict != nil {
		return res, fmt.Errorf("%w: merging %s into %s: %s; %s is as the merges before it left it, nothing was pushed, the phase branches are kept (merge %s with git yourself, then run collect again)",
			gitcommit.ErrConflict, res.Conflict.Branch, res.Target, conflictWhy, res.Target, res.Conflict.Branch)
	}
	if opts.Push {
		if err := push(ctx, rem, opts, res.Target); err != nil {
			return res, err
		}
		res.Pushed = true
	}
	if len(notCompleted) > 0 {
		noun := "phase " + notCompleted[0] + " was"
		if len(notCompleted) > 1 {
			noun = "phases " + strings.Join(notCompleted, ", ") + " were"
		}
		return res, &notCompletedError{fmt.Sprintf("%s not completed (failed or blocked); the completed phases are merged", noun)}
	}
	return res, nil
}

type notCompletedError struct{ msg string }

func (e *notCompletedError) Error() string { return e.msg }
func (e *notCompletedError) Unwrap() error { return ErrNotCompleted }

// limitNote says which usage limit stopped a phase whose branch ends at
// tip, from its Debussy-Usage-Limit trailer; "" when none did.
func limitNote(repo *gitcommit.Repo, tip string) string {
	c, err := repo.ReadCommit(tip)
	if err != nil {
		return ""
	}
	limit, resets, ok := remote.ParseLimitTrailer(c.Trailer(remote.LimitKey))
	if !ok {
		return ""
	}
	return fmt.Sprintf("stopped at the account's %s usage limit, which resets at %s", failure.LimitName(limit), resets.UTC().Format(time.RFC3339))
}

// merge merges a completed phase's fetched branch into the target: State
// Merged, AlreadyMerged or Conflict, or an error when the merge could not
// be made at all.
func merge(ctx context.Context, opts Options, target string, ph *plans.Phase, p Phase, ref string) (Phase, error) {
	msg := gitcommit.Message{
		Subject: fmt.Sprintf("debussy: merge phase %s %q", ph.ID, ph.ShortTitle()),
		Body:    fmt.Sprintf("Collected from %s/%s (debussy collect).", opts.Remote, p.Branch),
		Plan:    opts.PlanRel, Phase: ph.ID, Event: "merge",
	}
	c, err := opts.Repo.Merge(ctx, ref, msg.String())
	var ce *gitcommit.ConflictError
	switch {
	case err == nil:
		p.State, p.Commit, p.Changed = Merged, c.Hash, c.Files
	case errors.Is(err, gitcommit.ErrNothingToCommit):
		p.State = AlreadyMerged
	case errors.As(err, &ce):
		p.State, p.Files = Conflict, ce.Files
		p.Reason = "both sides changed " + strings.Join(ce.Files, ", ")
		if ce.Untracked {
			p.Reason = "untracked files in " + target + "'s work tree would be overwritten: " + strings.Join(ce.Files, ", ")
		}
	default:
		return p, fmt.Errorf("merge %s/%s into %s: %w", opts.Remote, p.Branch, target, err)
	}
	return p, nil
}

// checkoutTarget returns the branch to merge into: into, checked out (made
// at HEAD when it does not exist, moved up to HEAD when HEAD descends from
// it), else the checked-out branch.
func checkoutTarget(ctx context.Context, g remote.Remote, into string) (string, error) {
	if into == "" {
		b, err := g.Git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
		if err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			return "", fmt.Errorf("%w: HEAD is detached (as in a CI checkout): name the branch to merge into with --into BRANCH", ErrSetup)
		}
		return b, nil
	}
	if _, err := g.Git(ctx, "check-ref-format", "--branch", into); err != nil {
		return "", fmt.Errorf("%w: --into %s is not a valid branch name", ErrSetup, into)
	}
	if cur, err := g.Git(ctx, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && cur == into {
		return into, nil
	}
	if _, err := g.Git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+into); err != nil {
		if _, err := g.Git(ctx, "switch", "--quiet", "--create", into); err != nil {
			return "", fmt.Errorf("create branch %s: %w", into, err)
		}
		return into, nil
	}
	// A branch HEAD descends from (a CI runner's stale copy) moves up to
	// HEAD: nothing of it is lost, and the merges start from what the job
	// checked out. Any other is checked out as it is.
	switchArgs := []string{"switch", "--quiet", into}
	if _, err := g.Git(ctx, "merge-base", "--is-ancestor", "refs/heads/"+into, "HEAD"); err == nil {
		switchArgs = []string{"switch", "--quiet", "--force-create", into}
	}
	if _, err := g.Git(ctx, switchArgs...); err != nil {
		return "", fmt.Errorf("check out %s: %w", into, err)
	}
	return into, nil
}

// push pushes the target to the remote's branch of the same name. A push
// rejected because the remote moved on is fetched, merged and tried again;
// never forced.
func push(ctx context.Context, rem remote.Remote, opts Options, target string) error {
	attempts := opts.PushAttempts
	if attempts <= 0 {
		attempts = 5
	}
	for attempt := 1; ; attempt++ {
		err := rem.Push(ctx, target)
		if err == nil {
			return nil
		}
		if !errors.Is(err, remote.ErrRejected) || attempt >= attempts {
			return err
		}
		if _, err := rem.FetchBranch(ctx, target); err != nil {
			return fmt.Errorf("push %s to %s: rejected, and fetching it: %w", target, opts.Remote, err)
		}
		msg := gitcommit.Message{Subject: fmt.Sprintf("debussy: merge %s/%s", opts.Remote, target),
			Body: "Another push reached the branch first (debussy collect --push).", Plan: opts.PlanRel, Event: "merge"}
		if _, err := opts.Repo.Merge(ctx, rem.Tracking(target), msg.String()); err != nil && !errors.Is(err, gitcommit.ErrNothingToCommit) {
			return fmt.Errorf("push %s to %s: rejected, and merging what is there: %w; nothing was pushed", target, opts.Remote, err)
		}
	}
}
