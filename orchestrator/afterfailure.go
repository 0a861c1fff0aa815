package orchestrator

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// othersAfterFailure handles the phases still running when phase id of a
// --parallel run failed: --fail-fast stops them at a safe point (the
// Ctrl-C path: after the running tool, work committed to their branches,
// resumed by a rerun); else they go on to their end. Either way the
// ledger and the summary name them and what became of them.
func (sc *scheduler) othersAfterFailure(id string, running map[string]*slot) {
	r := sc.r
	ids := slices.Sorted(maps.Keys(running))
	err := r.recorder.update(func(run *state.Run) {
		run.AfterFailure = &state.AfterFailure{Phase: id, FailFast: r.FailFast, Running: ids}
	})
	if err != nil {
		r.log.Warn("record the phases running at the failure", "err", err)
	}
	r.recorder.event(record.AfterFailure{Phase: id, Running: ids, FailFast: r.FailFast})
	if !r.FailFast {
		r.log.Warn("a phase failed: the phases still running go on to their end (--fail-fast would stop them)",
			"failed", id, "running", strings.Join(ids, ", "))
		return
	}
	r.log.Warn("a phase failed: --fail-fast stops the phases still running at a safe point",
		"failed", id, "running", strings.Join(ids, ", "))
	for _, s := range running {
		s.cancel(errFailFast)
	}
}

// removeWorktree removes a phase's worktree, and its branch too when
// deleteBranch: once merged, or when no session ran on a branch made for
// it (a rerun then starts the phase afresh from your branch).
func (sc *scheduler) removeWorktree(s *slot, deleteBranch bool) {
	r := sc.r
	if err := r.Repo.RemoveWorktree(r.gitCtx(), s.path); err != nil {
		r.log.Warn("remove the phase's worktree", "phase", s.ph.ID, "err", err)
		return
	}
	_ = os.Remove(filepath.Dir(s.path)) // the run's directory, once empty
	_ = os.Remove(filepath.Dir(filepath.Dir(s.path)))
	if deleteBranch {
		if err := r.Repo.DeleteBranch(r.gitCtx(), s.branch); err != nil {
			r.log.Warn("delete the phase's branch", "phase", s.ph.ID, "err", err)
		}
	}
}
