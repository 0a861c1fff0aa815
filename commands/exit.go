package commands

import (
	"context"
	"errors"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// Exit codes are debussy's contract with shells and CI.
const (
	ExitOK          = 0
	ExitFailed      = 1   // a phase failed, was blocked, ran out of restarts/retries or of its budget
	ExitUsage       = 2   // bad usage, config or plan, or a setup claude cannot run in (login, permissions)
	ExitTempFail    = 75  // EX_TEMPFAIL: a usage limit resets later than usage_limit_wait; work committed, rerun after the reset
	ExitInterrupted = 130 // Ctrl-C: work committed, state saved, a rerun resumes
)

// ErrUsage marks a mistake in how debussy was called.
var ErrUsage = errors.New("usage")

// exitCode maps an error to the process exit code. It is the only place
// that does.
func exitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, orchestrator.ErrLedger):
		// Before interrupted: a rerun cannot resume without the ledger.
		return ExitFailed
	case errors.Is(err, orchestrator.ErrBudgetExhausted):
		// A limit the user set was reached: the phase did not finish
		// within it. Work is committed; raising the budget resumes it.
		return ExitFailed
	case errors.Is(err, orchestrator.ErrUsageLimit):
		return ExitTempFail
	case errors.Is(err, orchestrator.ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, ErrUsage),
		errors.Is(err, ErrDoctor), // each problem was shown with its fix
		errors.Is(err, config.ErrInvalid),
		errors.Is(err, plans.ErrInvalidPlan),
		errors.Is(err, orchestrator.ErrDirty),
		errors.Is(err, orchestrator.ErrSetup),
		errors.Is(err, state.ErrLocked),
		errors.Is(err, state.ErrNoActiveRun):
		return ExitUsage
	default:
		return ExitFailed
	}
}
