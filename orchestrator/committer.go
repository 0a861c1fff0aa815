package orchestrator

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/record"
)

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
			c.rec.Emit(record.LockWait{Phase: c.phase, ForMs: lockWait.Milliseconds(), Error: err.Error()})
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
