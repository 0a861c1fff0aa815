package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/worktree"
)

// Git as the ledger: every phase end is a commit whose trailers say how it
// ended (gitcommit.Message), so a clone without .debussy/ — another
// machine, a CI job — knows which phases are done. .debussy/ stays the
// local record with raw logs; which of them says a phase is done is
// package completion's precedence (resolver).

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
		r.log.Info("nothing to do: the phase is already completed", "phase", ph.ID, "why", why)
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

// commitMessage is the message of a debussy commit for phase p; an outcome
// carries what the phase took and, when it did not complete, why.
func (p *phaseRun) commitMessage(event commitEvent, what string) gitcommit.Message {
	r := p.r
	m := gitcommit.Message{
		Subject: fmt.Sprintf("debussy: phase %s %q — %s", p.ph.ID, p.ph.ShortTitle(), what),
		Run:     r.id, Plan: r.planRel(), Phase: p.ph.ID, Event: string(event), Session: p.rec.Sessions,
	}
	if gitcommit.IsOutcome(string(event)) {
		m.Sessions, m.Restarts = p.rec.Sessions, p.rec.Restarts
		m.Reason = checkpoint.Redact(p.reason)
	}
	m.UsageLimit = p.usageLimit
	return m
}

// commitAll commits for commit(). A phase's end is recorded even when the
// tree is clean: an empty commit, so git history alone knows the outcome.
// A hook refusing that empty commit refuses no work of the agent's, so it
// is only a warning (the outcome stays in .debussy/).
func (p *phaseRun) commitAll(event commitEvent, msg gitcommit.Message) (c gitcommit.Commit, err error) {
	r := p.r
	keep := gitcommit.Never(p.keep)
	listed := len(p.rec.Commits)
	save := func() error { return r.recorder.savePhase(p.rec) }
	defer func() { unlist(&p.rec.Commits, listed, err, save) }()
	c, err = r.commitWaiting(func() (gitcommit.Commit, error) {
		return p.repo.CommitAll(r.gitCtx(), msg.String(), excludeUser(r.userFiles, msg), keep, listFirst(&p.rec.Commits, save))
	})
	if len(c.Unstaged) > 0 {
		r.log.Warn("the agent staged files copied in from "+worktree.IncludeFile+"; they stay in the worktree, out of the commit and the index",
			"phase", p.ph.ID, "files", strings.Join(c.Unstaged, ", "))
	}
	// A usage limit is recorded in git even without work: other jobs read
	// it there (remote.Hold).
	if !isRecorded(event) && msg.UsageLimit == "" {
		return c, err
	}
	var hookErr *gitcommit.HookError
	if errors.Is(err, gitcommit.ErrNothingToCommit) {
		c, err = r.commitWaiting(func() (gitcommit.Commit, error) {
			return p.repo.CommitAll(r.gitCtx(), msg.String(), excludeUser(r.userFiles, msg), keep, gitcommit.AllowEmpty(), listFirst(&p.rec.Commits, save))
		})
		if errors.As(err, &hookErr) {
			r.log.Warn("a hook refused the empty commit that records the phase's end in git; .debussy/ still has it",
				"phase", p.ph.ID, "event", event, "hook", hookErr.Hook, "output", text.Tail(checkpoint.Redact(hookErr.Output), 500))
			err = gitcommit.ErrNothingToCommit
		}
	}
	// A hook refusing the agent's work leaves the phase going (see commit);
	// anything else ends the attempt to record it.
	if isRecorded(event) && !errors.As(err, &hookErr) {
		p.recorded = true
	}
	return c, err
}

// interruptedGitWait bounds git's work (a commit and its hooks) once the
// run is interrupted: the interrupted work is committed if that is quick,
// else left in the tree for the rerun.
const interruptedGitWait = 5 * time.Second

// gitCtx is the context git commands and hooks take: the run's, so a
// Ctrl-C kills a hung hook; once interrupted, a short one for committing
// the interrupted work (a second Ctrl-C stops claude, not that commit).
func (r *orun) gitCtx() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	if r.ctx.Err() == nil {
		return r.ctx
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), interruptedGitWait)
	context.AfterFunc(ctx, cancel) // released once done or past the wait
	return ctx
}

// lockWait bounds how long a commit waits for a git process holding the
// index or branch lock (the user's `git status` refreshing the index, an
// editor's git integration): git's own commands take milliseconds, and
// failing at once would leave a finished phase uncommitted.
var lockWait = 10 * time.Second

// commitWaiting runs commit until it does not fail on a git lock, or
// lockWait has passed.
func (r *orun) commitWaiting(commit func() (gitcommit.Commit, error)) (gitcommit.Commit, error) {
	deadline := r.now().Add(lockWait)
	for warned := false; ; warned = true {
		c, err := commit()
		if !errors.Is(err, gitcommit.ErrLocked) || r.now().After(deadline) {
			return c, err
		}
		if !warned {
			r.log.Warn("a git process holds the repository's lock: waiting for it to finish", "for_at_most", lockWait, "err", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// listFirst adds a commit to commits and saves the ledger (save: the
// record commits is in) before the branch moves to it, so that killed at any moment debussy never leaves the
// user's branch at a commit .debussy/ does not list. A commit that then
// does not land (a git process took the branch's lock) is taken back out.
func listFirst(commits *[]string, save func() error) gitcommit.CommitOption {
	return gitcommit.Written(func(hash string) error {
		*commits = append(*commits, hash)
		if err := save(); err != nil {
			*commits = (*commits)[:len(*commits)-1]
			return err
		}
		return nil
	})
}

// unlist takes back out of commits what listFirst added after its first n
// when the commit failed after all.
func unlist(commits *[]string, n int, err error, save func() error) {
	if err == nil || len(*commits) <= n {
		return
	}
	*commits = (*commits)[:n]
	_ = save() // best effort: a commit listed but not in the branch is only a dangling object
}

// isRecorded reports whether event is a phase end recorded in git even
// without work to commit. An interrupted phase resumes, so its end is
// committed only when there is work.
func isRecorded(event commitEvent) bool {
	return slices.Contains([]commitEvent{eventCompleted, eventFailed, eventBlocked}, event)
}

// recordEnd commits the phase's end when it ends completed, failed or
// blocked and no commit has recorded it yet; err is the reason.
func (p *phaseRun) recordEnd(status state.Status, err error) {
	event := commitEvent(status)
	if p.recorded || !isRecorded(event) {
		return
	}
	if err != nil {
		p.reason = publicReason(err) // the trailer is pushed: structured words only
	}
	p.commit(event, string(status))
}

// phaseIDs lists the plan's phase ids, for an error naming one it lacks.
func phaseIDs(p *plans.Plan) string {
	ids := make([]string, 0, len(p.Phases))
	for _, ph := range p.Phases {
		ids = append(ids, ph.ID)
	}
	return strings.Join(ids, ", ")
}
