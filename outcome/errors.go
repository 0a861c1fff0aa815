// Package outcome says how a run or a phase ended: the errors that decide
// exit codes (commands maps them, in one place) and what may be published
// about them — a commit's trailers, GitHub's step summary, a notification
// leave the machine, so they say why in structured words only.
package outcome

import (
	"errors"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/recorder"
)

// Errors that decide exit codes.
var (
	ErrInterrupted = errors.New("interrupted")
	ErrDirty       = errors.New("uncommitted changes to tracked files")
	ErrSetup       = errors.New("cannot start")
	// ErrPhaseFailed and ErrBlocked read as verbs in messages:
	// "phase 2 failed on attempt 3: …".
	ErrPhaseFailed = errors.New("failed")
	ErrBlocked     = errors.New("was blocked")
	// ErrLedger stops a run whose ledger cannot be written: a rerun
	// resumes from the ledger, so going on without it would lose work.
	ErrLedger = recorder.ErrLedger
	// ErrConflict reads as a verb: "phase 2 cannot be merged into your
	// branch: …". The run stops with exit 1; the branch is as it was.
	ErrConflict = errors.New("cannot be merged")
	// ErrPush ends a run whose phase's commits are in the local branch but
	// could not be pushed (exit 1): nothing is lost, and the same command
	// pushes them first.
	ErrPush = errors.New("not pushed")
	// ErrBudgetExhausted ends a run whose phase or plan budget ran out
	// under strict enforcement (or adaptive at 100 % without a restart):
	// the work is committed, later phases are not started. The phase is
	// recorded failed with economics.exhausted set, so a rerun resumes it
	// like any failure.
	ErrBudgetExhausted = errors.New("budget exhausted")
	// ErrUsageLimit ends a run at a subscription's usage limit that
	// resets later than usage_limit_wait allows (exit 75, EX_TEMPFAIL):
	// the work is committed, and the same command after the reset resumes
	// the phase.
	ErrUsageLimit = errors.New("usage limit reached")
)

// UsageLimitError says which limit, when it resets, and that a rerun goes on.
type UsageLimitError struct {
	Phase  string
	Limit  string // five_hour, seven_day, ...
	Resets time.Time
	Wait   time.Duration // usage_limit_wait; 0 means waiting is off
	Now    time.Time
}

func (e *UsageLimitError) Error() string {
	why := fmt.Sprintf("it resets at %s, later than usage_limit_wait (%s) allows", failure.ResetClock(e.Resets, e.Now), e.Wait)
	switch {
	case e.Wait == 0:
		why = fmt.Sprintf("it resets at %s and usage_limit_wait is 0", failure.ResetClock(e.Resets, e.Now))
	case e.Resets.IsZero():
		why = "claude did not say when it resets"
	}
	return fmt.Sprintf("phase %s: %s limit reached: %s; the work so far is committed — run the same command after the reset to go on",
		e.Phase, failure.LimitName(e.Limit), why)
}

func (e *UsageLimitError) Unwrap() error { return ErrUsageLimit }

// SetupFailure is a phase that failed on the setup, not on the agent's
// work: it reads "phase 2 failed: …" and exits 2 like ErrSetup.
type SetupFailure string

func (e SetupFailure) Error() string   { return string(e) }
func (e SetupFailure) Unwrap() []error { return []error{ErrPhaseFailed, ErrSetup} }
