package orchestrator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// requireCommit refuses a repository without a commit: every file in it is
// untracked, so every file is the user's, and a first commit made by
// debussy would carry them under its name.
func requireCommit(repo *gitcommit.Repo) error {
	head, err := repo.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	if head != "" {
		return nil
	}
	return fmt.Errorf("%w: %s has no commit yet; debussy commits the agent's work on top of yours and never commits "+
		"your files for you: commit what belongs in the project first (git add -A && git commit -m \"initial commit\"), then run again",
		ErrSetup, repo.Root())
}

// recordUserFiles notes the untracked files present now, before the first
// session: they are the user's and stay out of every commit of this run
// unless the agent changes them. The record lets a run that takes over
// after a crash commit the leftovers without them.
func (r *orun) recordUserFiles() error {
	files, err := r.Repo.Untracked(r.gitCtx())
	if err != nil {
		return fmt.Errorf("%w: list untracked files: %w", ErrSetup, err)
	}
	if left := r.leftByEarlierRuns(files); len(left) > 0 {
		r.log.Warn("untracked files written while an earlier run ran are its agent's work, left uncommitted: this run commits them",
			"count", len(left), "files", samplePaths(left, 5))
	}
	r.userFiles = files
	if err := r.Store.SaveUserFiles(r.id, files); err != nil {
		return fmt.Errorf("%w: %w", ErrLedger, err)
	}
	if len(files) > 0 && r.cfg.AutoCommit {
		r.log.Info("untracked files found at the start are yours: debussy's commits leave them out unless the agent changes them",
			"count", len(files), "files", samplePaths(files, 5))
	}
	return nil
}

// leftByEarlierRuns takes out of files, and returns, those an earlier run's
// agent wrote and that run could not commit (its commit refused by a lock
// held too long, a full disk: a phase's record says Uncommitted): not among
// the user's files that run found at its start, and last written while it
// ran. Counting them as the user's would keep them out of every commit for
// good. Only such a run is asked: after any other, a file written while it
// ran is one the user made (the agent's were committed). A run that died is not
// asked: checkTree committed its leftovers already, and its end is not
// known. A --parallel run's agents worked in their own worktrees, so what
// changed here meanwhile was the user's.
//
// A file's mtime comes from the kernel's coarse clock, which lags the one
// EndedAt was read from by up to a tick (4 ms at HZ 250): a file the user
// wrote just after the run ended can carry an mtime before its end
// (TestCommitWaitsForGitLock/held failed so under load). So the last
// mtimeLag of the run counts as the user's: never commit the user's file;
// the agent's session ended well before the run recorded its end.
func (r *orun) leftByEarlierRuns(files gitcommit.Fingerprints) gitcommit.Fingerprints {
	left := gitcommit.Fingerprints{}
	for _, run := range r.ledger.Runs {
		if run.ID == r.id || run.StartedAt.IsZero() || run.EndedAt.IsZero() || slices.Contains(r.recovered, run) ||
			slices.ContainsFunc(run.Phases, func(p *state.PhaseRecord) bool { return p.Worktree != "" }) ||
			!slices.ContainsFunc(run.Phases, func(p *state.PhaseRecord) bool { return p.Uncommitted != "" }) {
			continue
		}
		theirs, ok, err := r.Store.LoadUserFiles(run.ID)
		if err != nil || !ok {
			continue
		}
		for path, fp := range files {
			if _, mine := theirs[path]; mine {
				continue
			}
			fi, err := os.Lstat(filepath.Join(r.Repo.Root(), filepath.FromSlash(path)))
			if err == nil && !fi.ModTime().Before(run.StartedAt) && fi.ModTime().Before(run.EndedAt.Add(-mtimeLag)) {
				left[path] = fp
				delete(files, path)
			}
		}
	}
	return left
}

// mtimeLag is how far a file's mtime may lag the run's clock (see
// leftByEarlierRuns), with room to spare.
const mtimeLag = 50 * time.Millisecond

// dirtyError refuses uncommitted changes to tracked files, naming them.
func dirtyError(dirty []string) error {
	const show = 20
	list := dirty
	if len(list) > show {
		list = append(list[:show:show], fmt.Sprintf("… and %d more", len(dirty)-show))
	}
	return fmt.Errorf("%w:\n  %s\ncommit or stash them first, or pass --allow-dirty to let debussy commit them with the agent's work",
		ErrDirty, strings.Join(list, "\n  "))
}

// checkTree refuses a tree with uncommitted changes to tracked files: debussy
// must not sweep the user's own edits into its commits. Leftovers of a run
// that died are that run's work and are committed instead.
func (r *orun) checkTree() error {
	if len(r.recovered) > 0 && r.cfg.AutoCommit {
		// A run that died (kill -9, crash) left its agent's work in the
		// tree, tracked or new: commit it as that run's, before anything else.
		last := r.recovered[len(r.recovered)-1]
		phase := runningPhase(last)
		msg := gitcommit.Message{
			Subject: fmt.Sprintf("debussy: phase %s — work left by interrupted run %s", phase, last.ID),
			Body:    "debussy stopped without committing (killed or crashed); this is what it left in the tree.",
			Run:     last.ID, Plan: PlanRel(r.Repo.Root(), last.Plan), Phase: phase, Event: string(eventInterrupted),
		}
		// The files that run found at its start are still the user's.
		user, _, err := r.Store.LoadUserFiles(last.ID)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		// Listed in that run's record before the branch moves to it.
		c, err := r.committer(nil, r.rec, last.ID, phase, true).Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
			return r.Repo.CommitAll(r.gitCtx(), msg.String(), append(opts, excludeUser(user, msg))...)
		})
		switch {
		case errors.Is(err, gitcommit.ErrNothingToCommit):
		case err != nil:
			return fmt.Errorf("%w: commit the interrupted run's work: %w", ErrSetup, err)
		default:
			r.rec.Emit(record.LeftoverCommit{Run: last.ID, Commit: c.Hash, Files: c.Files})
		}
	}
	dirty, err := r.Repo.DirtyTracked(r.gitCtx())
	if err != nil {
		return fmt.Errorf("%w: check the work tree: %w", ErrSetup, err)
	}
	dirty = withoutOwnIgnore(r.Repo, dirty)
	if len(dirty) == 0 || r.cfg.AllowDirty {
		return nil
	}
	return dirtyError(dirty)
}

func runningPhase(run *state.Run) string {
	for _, p := range run.Phases {
		if p.Status == state.StatusInterrupted || p.Status == state.StatusRunning {
			return p.ID
		}
	}
	return ""
}
