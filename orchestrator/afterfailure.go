package orchestrator

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/debussy-dev/debussy/record"
)

// othersAfterFailure handles the phases still running when phase id of a
// --parallel run failed: --fail-fast stops them at a safe point (the
// Ctrl-C path: after the running tool, work committed to their branches,
// resumed by a rerun); else they go on to their end. Either way the
// ledger and the summary name them and what became of them.
func (sc *scheduler) othersAfterFailure(id string, running map[string]*slot) {
	r := sc.r
	ids := slices.Sorted(maps.Keys(running))
	r.rec.Emit(record.AfterFailure{Phase: id, Running: ids, FailFast: r.FailFast})
	if !r.FailFast {
		return
	}
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
