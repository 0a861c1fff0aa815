package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/worktree"
)

// A phase's worktree holds what git checks out. What a project needs to run
// beyond that comes from two places, before the phase's first session:
// .worktreeinclude (the ignored files it names are copied from the user's
// checkout by package worktree) and worktree_setup (a command: npm ci).

// setupLog is worktree_setup's output, in the phase's directory.
const setupLog = "worktree-setup.log"

// worktreeIncludes lists, once per run, the files .worktreeinclude selects
// that git ignores in the user's checkout: never a tracked file.
func (sc *scheduler) worktreeIncludes() ([]gitcommit.IgnoredFile, error) {
	r := sc.r
	if sc.includes != nil {
		return *sc.includes, nil
	}
	files, found, err := worktree.Includes(r.gitCtx(), r.Repo)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if found {
		r.log.Info(worktree.IncludeFile+": ignored files each phase worktree gets a copy of", "count", len(files), "files", samplePaths(pathSet(files), 5))
	}
	sc.includes = &files
	return files, nil
}

func pathSet(files []gitcommit.IgnoredFile) gitcommit.Fingerprints {
	out := make(gitcommit.Fingerprints, len(files))
	for _, f := range files {
		out[f.Path] = ""
	}
	return out
}

// prepareWorktree readies a phase's worktree for its first session: the
// .worktreeinclude copies, then worktree_setup in a new worktree, on the
// phase's goroutine: it touches only the worktree and its log.
func (sc *scheduler) prepareWorktree(ctx context.Context, s *slot) error {
	r := sc.r
	n, err := worktree.CopyIncludes(r.log, r.Repo.Root(), s.path, s.includes)
	if err == nil && n > 0 {
		s.rec.Emit(record.IncludesCopied{Phase: s.ph.ID, Files: n})
	}
	if err != nil {
		return fmt.Errorf("%w: phase %s: copy the files %s names into %s: %w", ErrSetup, s.ph.ID, worktree.IncludeFile, s.path, err)
	}
	if r.cfg.WorktreeSetup == "" || s.reused {
		return nil
	}
	return sc.setupWorktree(ctx, s)
}

// setupWorktree runs worktree_setup in the phase's new worktree, its
// output (redacted) in worktree-setup.log in the phase's directory.
func (sc *scheduler) setupWorktree(ctx context.Context, s *slot) error {
	r := sc.r
	command, timeout := r.cfg.WorktreeSetup, time.Duration(r.cfg.WorktreeSetupTimeout)
	logPath := filepath.Join(r.Store.PhaseDir(r.id, s.ph.ID), setupLog)
	s.rec.Emit(record.WorktreeSetupStarted{Phase: s.ph.ID, Command: command, Log: logPath})
	res := gate.Run(ctx, s.path, s.repo.ChildEnv(r.Env), plans.Gate{Name: "worktree_setup", Command: command}, timeout)
	text := fmt.Sprintf("$ %s\n(in %s)\n%s\n[exit %d after %s, timed out: %t]\n", command, s.path,
		strings.TrimRight(res.Output, "\n"), res.ExitCode, res.Duration.Round(time.Millisecond), res.TimedOut)
	werr := state.WriteFile(logPath, []byte(text)) // res.Output is redacted
	if werr != nil {
		s.rec.Emit(record.Warning{Phase: s.ph.ID, What: "worktree_setup's log not saved", Error: werr.Error(), Err: werr})
	}
	s.rec.Emit(record.WorktreeSetup{Phase: s.ph.ID, Command: command, ExitCode: res.ExitCode,
		TimedOut: res.TimedOut, DurationMs: res.Duration.Milliseconds(), Log: logPath})
	var why string
	switch {
	case res.Passed():
		return nil
	case ctx.Err() != nil:
		return ErrInterrupted
	case res.Err != nil:
		why = fmt.Sprintf("could not run: %v", res.Err)
	case res.TimedOut:
		why = fmt.Sprintf("timed out after %s (worktree_setup_timeout)", timeout)
	default:
		why = fmt.Sprintf("exit %d", res.ExitCode)
	}
	// The command is the user's config, which may carry a token: a log
	// that shows no text (public.Handler) and the commits say what failed
	// without it.
	where := relTo(r.Repo.Root(), logPath)
	return outcome.WithPublic(outcome.SetupFailure(fmt.Sprintf("phase %s %v before its first session: worktree_setup `%s` %s; its output is in %s",
		s.ph.ID, ErrPhaseFailed, command, why, where)),
		fmt.Sprintf("phase %s %v before its first session: worktree_setup %s; its output is in %s", s.ph.ID, ErrPhaseFailed, why, where))
}

// notStarted records a phase that ended before its first session: its
// worktree could not be readied, or --fail-fast or Ctrl-C stopped that.
func (sc *scheduler) notStarted(s *slot, err error) error {
	status := state.StatusFailed
	if errors.Is(err, ErrInterrupted) {
		status = state.StatusInterrupted
	}
	if !s.reused {
		// Nothing of the agent's is in it: a rerun starts afresh.
		s.discard = true
		s.rec.Emit(record.WorktreeDiscarded{Phase: s.ph.ID, Branch: s.newBranch})
	}
	s.rec.Emit(record.PhaseEnded{Phase: s.ph.ID, Status: string(status), Error: err.Error(), Reason: outcome.PublicReason(err),
		Sessions: new(int), NotStarted: true, Err: err})
	if serr := s.rec.Sync(); serr != nil {
		return serr
	}
	return err
}
