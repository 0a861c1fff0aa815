package orchestrator

import (
	"log/slog"
	"strings"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// What a run takes over from one that died: git locks it held and runs
// the ledger still calls running.

// reclaimGitLocks removes the git locks (index.lock mid-commit) of a
// debussy that was killed while holding them: left, they fail every commit
// of this run and of git (gitcommit.ReclaimLocks).
func reclaimGitLocks(repo *gitcommit.Repo, log *slog.Logger) {
	if repo == nil {
		return
	}
	locks, err := repo.ReclaimLocks()
	for i, l := range locks {
		locks[i] = relTo(repo.Root(), l)
	}
	switch {
	case err != nil:
		log.Warn("could not remove the git locks a killed debussy left", "removed", strings.Join(locks, ", "), "err", err)
	case len(locks) > 0:
		log.Warn("removed the git locks a killed debussy left", "locks", strings.Join(locks, ", "))
	}
}

// markStaleRuns records the runs whose process died (kill -9, a crash) as
// interrupted, and kills any claude session they left behind.
func (r *orun) markStaleRuns() {
	var gl *gitcommit.Ledger // read once, if a run died
	ended := func(run *state.Run, phase string) (gitcommit.Outcome, bool) {
		if gl == nil {
			if gl = completion.ReadGit(r.gitCtx(), r.Repo, r.planRel(), r.log); gl == nil {
				gl = &gitcommit.Ledger{}
			}
		}
		o, ok := gl.Latest(PlanRel(r.root(), run.Plan), phase)
		return o, ok && o.Run == run.ID && isRecorded(commitEvent(o.Event))
	}
	var facts []record.StaleRun
	for _, run := range r.ledger.Runs {
		// This run holds the lock, so no other run recorded as running is
		// alive: a live one would hold the lock.
		if run.Status != state.StatusRunning {
			continue
		}
		// Its claude session and the tools it started (some in sessions
		// of their own) all carry the run id in their environment.
		f := record.StaleRun{Run: run.ID, PID: run.PID, Processes: runner.KillByEnv(state.EnvRunID + "=" + run.ID)}
		for _, p := range run.Phases {
			if p.Status != state.StatusRunning {
				continue
			}
			if o, ok := ended(run, p.ID); ok {
				// Killed after the phase's end was committed, before it
				// was saved: git has how it ended.
				f.Phases = append(f.Phases, record.StalePhase{Phase: p.ID, Status: o.Event, Reason: o.Reason, Commit: o.Commit})
				continue
			}
			f.Phases = append(f.Phases, record.StalePhase{Phase: p.ID, Status: string(state.StatusInterrupted),
				Reason: "debussy stopped without saving (killed or crashed)"})
		}
		facts = append(facts, f)
		r.recovered = append(r.recovered, run)
	}
	// Applied now (the recorder has not started): the ledger this run
	// reads says they are interrupted.
	for _, f := range facts {
		r.rec.Emit(f)
	}
}
