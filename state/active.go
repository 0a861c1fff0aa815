package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoActiveRun means `debussy done` / `debussy progress` found no run to
// report to.
var ErrNoActiveRun = errors.New("no active debussy run")

// Environment given to the agent's process, so that `debussy done` and
// `debussy progress` find their run from any directory.
const (
	EnvRunID    = "DEBUSSY_RUN_ID"
	EnvPhaseID  = "DEBUSSY_PHASE_ID"
	EnvStateDir = "DEBUSSY_STATE_DIR"
)

// Active is the run a `debussy done` or `debussy progress` reports to.
type Active struct {
	Store *Store
	RunID string
}

// FindActive locates the current run: DEBUSSY_STATE_DIR and DEBUSSY_RUN_ID
// when set (as in the agent's environment); otherwise the .debussy of the
// git repository containing cwd and the run holding its lock.
func FindActive(env func(string) string, cwd string) (*Active, error) {
	var store *Store
	if dir := env(EnvStateDir); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%w: %s=%s is not a directory", ErrNoActiveRun, EnvStateDir, dir)
		}
		store = New(dir)
	} else {
		root, err := gitRoot(cwd)
		if err != nil {
			return nil, err
		}
		store = New(filepath.Join(root, DirName))
	}
	if id := env(EnvRunID); id != "" {
		return &Active{Store: store, RunID: id}, nil
	}

	// The run holding the lock is the live one; a ledger entry still marked
	// running without it is a run that was killed.
	holder, held, err := store.Holder()
	if err != nil {
		return nil, err
	}
	if !held {
		return nil, fmt.Errorf("%w: no debussy run holds %s (these commands are for the agent inside `debussy run`)",
			ErrNoActiveRun, store.lockPath())
	}
	if holder != nil && holder.RunID != "" {
		return &Active{Store: store, RunID: holder.RunID}, nil
	}
	// The holder has not written who it is yet: its ledger entry says.
	l, err := store.Load()
	if err != nil {
		return nil, err
	}
	var active *Run
	for _, r := range l.Runs {
		if r.Status == StatusRunning && (active == nil || !r.StartedAt.Before(active.StartedAt)) {
			active = r
		}
	}
	if active == nil {
		return nil, fmt.Errorf("%w: no run in %s is running (these commands are for the agent inside `debussy run`)",
			ErrNoActiveRun, store.Dir)
	}
	return &Active{Store: store, RunID: active.ID}, nil
}

// gitRoot walks up from dir to the first directory holding .git (a
// directory, or a file in worktrees and submodules).
func gitRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository: %w", err)
	}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: %s is not inside a git repository and %s is not set", ErrNoActiveRun, abs, EnvStateDir)
		}
		d = parent
	}
}
