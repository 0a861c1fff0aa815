package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// A phase's commits: when debussy commits (commitEvent), the message and
// its trailers, and what became of it (commitResult); the committer
// (committer.go) does the git side.

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
		p.rec.Emit(record.CommitFailed{Phase: p.ph.ID, Error: err.Error(), Kind: string(event), Interrupted: cut, DurationMs: ms})
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
		ev.Error, ev.Reason = err.Error(), outcome.PublicReason(err)
	}
	p.rec.Emit(ev)
	if serr := p.rec.Sync(); serr != nil {
		return serr
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
