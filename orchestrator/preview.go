package orchestrator

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// Preview is what Run would decide before its first session.
type Preview struct {
	Order []*plans.Phase // run order
	Todo  map[string]bool
	// Skipped names the phases Run would skip as already completed (in the
	// plan's table or an earlier run); the rest not in Todo come before
	// --phase.
	Skipped map[string]bool
	// UserFiles are the untracked files present now, sorted: Run would
	// leave them out of its commits unless the agent changes them.
	UserFiles []string
	// Remote says what --base deps and --push would fetch, merge and push.
	Remote []string
}

// Check decides what Run would do with opts without locking, writing or
// starting anything, and refuses what Run would refuse before its first
// session, with the same errors: another run holding the lock, an unknown
// --phase or one whose dependencies are unfinished, uncommitted changes to
// tracked files. --dry-run is built on it so it cannot promise a run that
// would not start.
func Check(opts Options) (*Preview, error) {
	r := &orun{Options: opts, cfg: opts.Config, log: slog.New(slog.DiscardHandler), now: opts.Now, preview: true}
	if r.now == nil {
		r.now = time.Now
	}
	order, err := r.Plan.Order()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	if r.Store != nil {
		holder, held, err := r.Store.Holder()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		if held {
			who := "another debussy run"
			if holder != nil {
				who = fmt.Sprintf("run %s (pid %d)", holder.RunID, holder.PID)
			}
			return nil, fmt.Errorf("%w: %s is running in this repository", state.ErrLocked, who)
		}
		if r.ledger, err = r.Store.Load(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSetup, err)
		}
	} else {
		r.ledger = &state.Ledger{}
	}
	sel, err := r.selectPhases(order)
	if err != nil {
		return nil, err
	}
	p := &Preview{Order: order, Todo: sel.todo, Skipped: sel.skippedIDs(), Remote: r.newJob().Plans()}
	if r.Repo == nil {
		return p, nil
	}
	if err := requireCommit(r.Repo); err != nil {
		return nil, err
	}
	user, err := r.Repo.Untracked(r.gitCtx())
	if err != nil {
		return nil, fmt.Errorf("%w: list untracked files: %w", ErrSetup, err)
	}
	p.UserFiles = slices.Sorted(maps.Keys(user))
	if r.cfg.AllowDirty {
		return p, nil
	}
	// A run that died leaves its work in the tree; Run commits it rather
	// than refusing it as dirty.
	for _, run := range r.ledger.Runs {
		if run.Status == state.StatusRunning {
			return p, nil
		}
	}
	dirty, err := r.Repo.DirtyTracked(r.gitCtx())
	if err != nil {
		return nil, fmt.Errorf("%w: check the work tree: %w", ErrSetup, err)
	}
	dirty = withoutOwnIgnore(r.Repo, dirty)
	if len(dirty) > 0 {
		return nil, dirtyError(dirty)
	}
	return p, nil
}
