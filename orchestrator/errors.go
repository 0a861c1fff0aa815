package orchestrator

import (
	"errors"

	"github.com/debussy-dev/debussy/outcome"
)

// The errors that decide exit codes are package outcome's; these are
// their names here, which commands maps.
var (
	ErrInterrupted     = outcome.ErrInterrupted
	ErrDirty           = outcome.ErrDirty
	ErrSetup           = outcome.ErrSetup
	ErrPhaseFailed     = outcome.ErrPhaseFailed
	ErrBlocked         = outcome.ErrBlocked
	ErrLedger          = outcome.ErrLedger
	ErrConflict        = outcome.ErrConflict
	ErrPush            = outcome.ErrPush
	ErrBudgetExhausted = outcome.ErrBudgetExhausted
	ErrUsageLimit      = outcome.ErrUsageLimit
)

// UsageLimitError is outcome's.
type UsageLimitError = outcome.UsageLimitError

// PublicReason is what may be published about err (outcome's), for the
// last line a run logs.
func PublicReason(err error) string { return outcome.PublicReason(err) }

// errFailFast is why --fail-fast stops the phases still running once one
// failed (the cause of their context).
var errFailFast = errors.New("another phase failed (--fail-fast)")
