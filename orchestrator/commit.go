package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// A phase's commits: when debussy commits (commitEvent), the message and
// its trailers, and what became of it (commitResult); then the committer
// every commit site commits through.

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

// commitOpts are a commit's extra trailers: why the phase did not complete
// (an outcome's, structured words only: it is pushed), the usage limit it
// stopped at (other jobs read it: remote.Hold).
type commitOpts struct{ reason, usageLimit string }

// commitResult is what became of a commit. A failed commit leaves the work
// in the tree and the phase going; the next commit tries again.
type commitResult struct {
	hash string // the new commit, or HEAD when none was made
	// rejected is the user's hook that refused it: the next prompt carries
	// its output, so the agent can fix what it reports.
	rejected *gitcommit.HookError
	// err is why it failed otherwise (a lock held past lockWait, a full
	// disk, Ctrl-C cutting a hung hook).
	err error
}

// commit commits the tree (if auto_commit) with trailers; its facts list
// the commit in the phase's record.
func (p *phaseRun) commit(event commitEvent, what string, o commitOpts) commitResult {
	head, _ := p.commits.Head()
	if !p.cfg.AutoCommit {
		return commitResult{hash: head}
	}
	start := p.now()
	c, err := p.commitAll(event, p.commitMessage(event, what, o))
	ms := p.now().Sub(start).Milliseconds()
	var hookErr *gitcommit.HookError
	switch {
	case errors.As(err, &hookErr):
		// Nothing is lost: the work stays in the tree (staged, as after a
		// refused `git commit`) and the next commit tries again. A secret
		// scanner's output quotes what it found: redacted before it is
		// logged, recorded or told.
		hookErr.Output = checkpoint.Redact(hookErr.Output)
		p.rec.Emit(record.CommitRejected{Phase: p.ph.ID, Hook: hookErr.Hook, ExitCode: hookErr.ExitCode,
			Output: text.Tail(hookErr.Output, 4000), Kind: string(event), DurationMs: ms})
		return commitResult{hash: head, rejected: hookErr}
	case isNothing(err):
		p.rec.Emit(record.CommitNothing{Phase: p.ph.ID, Kind: string(event), DurationMs: ms})
		return commitResult{hash: head}
	case err != nil:
		// Interrupted mid-commit: the rerun commits what the agent wrote
		// (leftByEarlierRuns), not as the user's.
		cut := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
		p.rec.Emit(record.CommitFailed{Phase: p.ph.ID, Error: err.Error(), Kind: string(event), Interrupted: cut, DurationMs: ms, Err: err})
		return commitResult{hash: head, err: err}
	}
	p.rec.Emit(record.Commit{Phase: p.ph.ID, Commit: c.Hash, Files: c.Files, Kind: string(event), DurationMs: ms})
	if p.commits.push != nil {
		p.commits.push()
	}
	return commitResult{hash: c.Hash}
}

// commitMessage is the message of a debussy commit for phase p; an outcome
// carries what the phase took and, when it did not complete, why.
func (p *phaseRun) commitMessage(event commitEvent, what string, o commitOpts) gitcommit.Message {
	rec := p.rec.Record()
	m := gitcommit.Message{
		Subject: fmt.Sprintf("debussy: phase %s %q — %s", p.ph.ID, p.ph.ShortTitle(), what),
		Run:     p.files.run, Plan: p.start.planRel, Phase: p.ph.ID, Event: string(event), Session: rec.Sessions,
	}
	if gitcommit.IsOutcome(string(event)) {
		m.Sessions, m.Restarts = rec.Sessions, rec.Restarts
		m.Reason = checkpoint.Redact(o.reason)
	}
	m.UsageLimit = o.usageLimit
	return m
}

// commitAll commits for commit(). A phase's end is recorded even when the
// tree is clean: an empty commit, so git history alone knows the outcome.
// A hook refusing that empty commit refuses no work of the agent's, so it
// is only a warning (the outcome stays in .debussy/).
func (p *phaseRun) commitAll(event commitEvent, msg gitcommit.Message) (gitcommit.Commit, error) {
	c, err := p.commits.commitAll(msg)
	if len(c.Unstaged) > 0 {
		p.rec.Emit(record.Unstaged{Phase: p.ph.ID, Files: c.Unstaged})
	}
	// A usage limit is recorded in git even without work: other jobs read
	// it there (remote.Hold).
	if !errors.Is(err, gitcommit.ErrNothingToCommit) || !isRecorded(event) && msg.UsageLimit == "" {
		return c, err
	}
	c, err = p.commits.commitAll(msg, gitcommit.AllowEmpty())
	if hookErr := (*gitcommit.HookError)(nil); errors.As(err, &hookErr) {
		p.rec.Emit(record.CommitRejected{Phase: p.ph.ID, Hook: hookErr.Hook, ExitCode: hookErr.ExitCode,
			Output: text.Tail(checkpoint.Redact(hookErr.Output), 4000), Kind: string(event), Empty: true})
		err = gitcommit.ErrNothingToCommit
	}
	return c, err
}

// isRecorded reports whether event is a phase end recorded in git even
// without work to commit. An interrupted phase resumes, so its end is
// committed only when there is work.
func isRecorded(event commitEvent) bool {
	return slices.Contains([]commitEvent{eventCompleted, eventFailed, eventBlocked}, event)
}

func isNothing(err error) bool { return errors.Is(err, gitcommit.ErrNothingToCommit) }

// endPhase ends the phase with status, committing a failed or blocked end
// in git (an outcome commit, even empty); err is returned unchanged unless
// the ledger cannot be written.
func (p *phaseRun) endPhase(status state.Status, err error) error {
	return p.end(record.PhaseEnded{Status: string(status)}, err, true)
}

// end records the phase's end ev, and its outcome commit first when
// commitEnd and the outcome is one git records (failed, blocked): the
// completed phase's commit is made before, and a failure no commit
// records (claude cannot run) has none.
func (p *phaseRun) end(ev record.PhaseEnded, err error, commitEnd bool) error {
	ev.Phase = p.ph.ID
	if event := commitEvent(ev.Status); commitEnd && isRecorded(event) && event != eventCompleted {
		p.commit(event, ev.Status, commitOpts{reason: outcome.PublicReason(err)})
	}
	if err != nil {
		ev.Error, ev.Reason, ev.Err = err.Error(), outcome.PublicReason(err), err
	}
	p.rec.Emit(ev)
	if serr := p.rec.Sync(); serr != nil {
		return serr
	}
	return err
}

// lockWait bounds how long a commit waits for a git process holding the
// index or branch lock (the user's `git status` refreshing the index, an
// editor's git integration): git's own commands take milliseconds, and
// failing at once would leave a finished phase uncommitted.
var lockWait = 10 * time.Second

// Write runs w, one git write (a commit, a merge) given the committer's
// options, until it does not fail on a git lock, or lockWait has
// passed; each commit it makes is listed first and unlisted if its
// branch did not move.
func (c *committer) Write(w func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error)) (gitcommit.Commit, error) {
	deadline := c.now().Add(lockWait)
	for warned := false; ; warned = true {
		listed := ""
		var opts []gitcommit.CommitOption
		if c.list {
			opts = append(opts, gitcommit.Written(func(hash string) error {
				c.rec.Emit(record.CommitListed{Run: c.run, Phase: c.phase, Commit: hash})
				if err := c.rec.Sync(); err != nil {
					c.rec.Emit(record.CommitUnlisted{Run: c.run, Phase: c.phase, Commit: hash})
					return err
				}
				listed = hash
				return nil
			}))
		}
		com, err := w(opts...)
		if err != nil && listed != "" {
			// Best effort: a commit listed but not in the branch is only a
			// dangling object.
			c.rec.Emit(record.CommitUnlisted{Run: c.run, Phase: c.phase, Commit: listed})
		}
		if !errors.Is(err, gitcommit.ErrLocked) || c.now().After(deadline) {
			return com, err
		}
		if !warned {
			c.rec.Emit(record.LockWait{Phase: c.phase, ForMs: lockWait.Milliseconds(), Error: err.Error(), Err: err})
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// commitAll commits the tree with msg, leaving out the user's files and
// the worktree's copies.
func (c *committer) commitAll(msg gitcommit.Message, opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
	return c.Write(func(more ...gitcommit.CommitOption) (gitcommit.Commit, error) {
		all := append(append([]gitcommit.CommitOption{excludeUser(c.user, msg), gitcommit.Never(c.keep)}, opts...), more...)
		return c.Committer.CommitAll(c.gitCtx(), msg.String(), all...)
	})
}

// committer is a committer for repo's commits, emitting to rec and, when
// list, listing them in phase's record of run runID ("" this run's).
func (r *orun) committer(repo Committer, rec emitter, runID, phase string, list bool) *committer {
	return &committer{Committer: repo, rec: rec, list: list, run: runID, phase: phase, now: r.now, gitCtx: r.gitCtx}
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

// Emit records ev where the committer's commits are listed.
func (c *committer) Emit(ev record.Event) { c.rec.Emit(ev) }
