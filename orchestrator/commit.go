package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
	"github.com/debussy-dev/debussy/worktree"
	"go.opentelemetry.io/otel/attribute"
)

// A phase's commits: when debussy commits (commitEvent), the message and
// its trailers, the commit itself through gitcommit (hooks, the lock
// wait), and the ledger listing it first.

// commitEvent is a commit's Debussy-Event trailer: why debussy committed,
// which is not a state.Status (a restart or a retry is no phase outcome),
// so a status cannot be passed for one.
type commitEvent string

const (
	eventRestart     commitEvent = "restart"
	eventRetry       commitEvent = "retry"
	eventRemediation commitEvent = "remediation"
	eventCompleted   commitEvent = "completed"
	eventFailed      commitEvent = "failed"
	eventBlocked     commitEvent = "blocked"
	eventInterrupted commitEvent = "interrupted"
)

// commit commits the tree (if auto_commit) with trailers and records the
// commit in the phase record; the ledger is saved by the step that always
// follows a commit (a checkpoint, the next session, the phase's end). It
// returns the new commit's hash, or HEAD when there was nothing to commit.
// A failed commit leaves the work in the tree and the run going.
func (p *phaseRun) commit(event commitEvent, what string) string {
	r := p.r
	head, _ := p.committer.Head()
	if !r.cfg.AutoCommit {
		return head
	}
	span := p.startCommitTrace(event)
	c, err := p.commitAll(event, p.commitMessage(event, what))
	defer func() { endCommitTrace(span, c, err) }()
	p.rejected = nil
	var hookErr *gitcommit.HookError
	switch {
	case errors.As(err, &hookErr):
		// Nothing is lost: the work stays in the tree (staged, as after a
		// refused `git commit`) and the next commit tries again. A secret
		// scanner's output quotes what it found: redacted before it is
		// logged, recorded or told.
		hookErr.Output = checkpoint.Redact(hookErr.Output)
		p.rejected = hookErr
		r.log.Warn("commit rejected by a hook: the work stays in the tree", "phase", p.ph.ID, "event", event,
			"hook", hookErr.Hook, "exit_code", hookErr.ExitCode, "output", text.Tail(hookErr.Output, 2000))
		r.recorder.event(record.CommitRejected{Phase: p.ph.ID, Hook: hookErr.Hook, ExitCode: hookErr.ExitCode,
			Output: text.Tail(hookErr.Output, 4000), Kind: string(event)})
		return head
	case errors.Is(err, gitcommit.ErrNothingToCommit):
		p.uncommitted = nil
		r.log.Debug("nothing to commit", "phase", p.ph.ID, "event", event)
		return head
	case err != nil:
		p.uncommitted = err
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// Interrupted mid-commit: the rerun commits what the agent wrote
			// (leftByEarlierRuns), not as the user's.
			p.rec.Uncommitted = err.Error()
		}
		r.log.Error("commit failed: the work stays in the tree", "phase", p.ph.ID, "event", event, "err", err)
		r.recorder.event(record.CommitFailed{Phase: p.ph.ID, Error: err.Error()})
		return head
	}
	p.uncommitted = nil
	// commitAll listed it in p.rec.Commits before the branch moved.
	r.recorder.event(record.Commit{Phase: p.ph.ID, Commit: c.Hash, Files: c.Files, Kind: string(event)})
	r.log.Info("committed", "phase", p.ph.ID, "commit", gitcommit.Short(c.Hash), "files", c.Files, "event", event)
	p.pushed()
	return c.Hash
}

// commitMessage is the message of a debussy commit for phase p; an outcome
// carries what the phase took and, when it did not complete, why.
func (p *phaseRun) commitMessage(event commitEvent, what string) gitcommit.Message {
	r := p.r
	m := gitcommit.Message{
		Subject: fmt.Sprintf("debussy: phase %s %q — %s", p.ph.ID, p.ph.ShortTitle(), what),
		Run:     r.id, Plan: p.planRel, Phase: p.ph.ID, Event: string(event), Session: p.rec.Sessions,
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
		return p.committer.CommitAll(r.gitCtx(), msg.String(), excludeUser(r.userFiles, msg), keep, listFirst(&p.rec.Commits, save))
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
			return p.committer.CommitAll(r.gitCtx(), msg.String(), excludeUser(r.userFiles, msg), keep, gitcommit.AllowEmpty(), listFirst(&p.rec.Commits, save))
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

// isRecorded reports whether event is a phase end recorded in git even
// without work to commit. An interrupted phase resumes, so its end is
// committed only when there is work.
func isRecorded(event commitEvent) bool {
	return slices.Contains([]commitEvent{eventCompleted, eventFailed, eventBlocked}, event)
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

// excludeUser is the CommitAll option that keeps the user's files out of a
// commit whose message is m; a user file the agent changed is committed and
// named in the body.
func excludeUser(files gitcommit.Fingerprints, m gitcommit.Message) gitcommit.CommitOption {
	return gitcommit.Exclude(files, func(_ string, changed []string) string {
		note := "Untracked when the run started, changed by the agent since, so committed as its work:\n  " +
			strings.Join(changed, "\n  ")
		if m.Body != "" {
			m.Body += "\n\n"
		}
		m.Body += note
		return m.String()
	})
}

func (p *phaseRun) startCommitTrace(event commitEvent) telemetry.Span {
	r := p.r
	ctx := context.Background()
	if p.trace != nil {
		ctx = p.trace
	}
	_, span := r.Tracer.Start(ctx, "debussy.commit", attribute.String("debussy.phase", p.ph.ID),
		attribute.String("debussy.commit.event", string(event)))
	return span
}

func endCommitTrace(span telemetry.Span, c gitcommit.Commit, err error) {
	switch {
	case err == nil:
		telemetry.End(span, "", attribute.String("debussy.commit", c.Hash), attribute.Int("debussy.commit.files", c.Files))
	case isNothing(err):
		telemetry.End(span, "", attribute.Bool("debussy.commit.nothing", true))
	default:
		telemetry.End(span, "commit failed")
	}
}

// pushed follows a commit for phase p under --push: the push, and what
// remains to push if it failed (finalPush tries once more).
func (p *phaseRun) pushed() {
	r := p.r
	if r.Push == "" {
		return
	}
	ctx, cancel := r.rem().pushContext()
	defer cancel()
	branch := plans.PhaseBranch(r.rem().planID(), p.ph.ID)
	err := r.rem().pushBranch(ctx, p.repo, p.ph.ID, p.rec)
	if err != nil {
		r.unpushed[p.ph.ID] = p
		r.log.Warn("push failed: the commit stays in your branch; debussy pushes it again after the phase, or the same command pushes it first",
			"phase", p.ph.ID, "branch", branch, "remote", r.Push, "err", public.OwnErr(err)) // git's words about the remote
		r.recorder.event(record.PushFailed{Phase: p.ph.ID, Branch: branch, Remote: r.Push, Error: err.Error()})
		return
	}
	delete(r.unpushed, p.ph.ID)
	head, _ := p.committer.Head()
	r.log.Info("pushed", "phase", p.ph.ID, "branch", branch, "remote", r.Push, "commit", gitcommit.Short(head))
	r.recorder.event(record.Push{Phase: p.ph.ID, Branch: branch, Remote: r.Push, Commit: &head})
}

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

func isNothing(err error) bool { return errors.Is(err, gitcommit.ErrNothingToCommit) }
