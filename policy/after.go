package policy

import (
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
)

// StepKind is what the phase does after one session.
type StepKind int

const (
	StepFinish        StepKind = iota // the attempt is over: the done signal is read and the gates run
	StepInterrupted                   // Ctrl-C: commit, stop; a rerun resumes
	StepFailFast                      // claude cannot run here: exit 2, no retry, no commit of its own
	StepExhausted                     // a budget ran out: extend it (the user) or end the phase
	StepRestart                       // a fresh session from a checkpoint, counted against max_restarts
	StepRetry                         // the session failed on its own: again from a checkpoint, after a backoff
	StepUsageLimit                    // a usage limit: commit, wait for its reset (or end with exit 75), go on uncounted
	StepFallback                      // a limit on one model: commit, go on at once with fallback_model, uncounted
	StepRestartsSpent                 // a restart was due but max_restarts is spent: the phase fails, work committed
	StepRetriesSpent                  // a retry was due but MaxSessionRetries are spent: the phase fails
)

var stepNames = [...]string{"finish", "interrupted", "fail fast", "exhausted", "restart", "retry", "usage limit",
	"fallback model", "restarts spent", "retries spent"}

func (k StepKind) String() string { return stepNames[k] }

// MaxSessionRetries is how many times a session that failed on its own
// (API error, crash, timeout) is retried before the phase fails.
const MaxSessionRetries = 3

// Step is the decision after a session, with its reason.
type Step struct {
	Kind StepKind
	Why  string
	// N of Of: the restart (StepRestart) or retry (StepRetry) this step
	// is, 1-based, and its limit; for the Spent kinds, the limit spent.
	N, Of int
	Wait  time.Duration // StepRetry: the backoff before the next session
	Model string        // StepFallback: the model the phase goes on with
}

// Ended is a session's end as the decision after it needs it.
type Ended struct {
	Interrupted bool // Ctrl-C (or --fail-fast) stopped it
	Done        bool // the agent ran `debussy done` in the session
	Signalled   bool // the done signal is on disk
	// Refused is why claude refused what no retry changes; "" when it did not.
	Refused string
	Failure failure.Failure
	// Reached: some session of the run got an answer from the API, so an
	// unreachable API is a blip to retry rather than a setup error.
	Reached bool
	Trigger estimator.Trigger // why debussy stopped the session, "" when it did not
	Reason  string
	// Ended is how the CLI ended: Completed (it ended its turn, or hit
	// max turns) or Stopped (debussy's stop took).
	Completed, Stopped bool
	// Describe is the outcome in words, a retry's reason.
	Describe string

	// The phase's counts the step is decided on, and the limits.
	Restarts int    // restarts of this attempt so far
	Retries  int    // retries of sessions that failed on their own so far
	Model    string // the model the session ran
	Limits   Limits
}

// Limits are the run's settings After decides on.
type Limits struct {
	Restarts int // max_restarts: the restarts an attempt may make
	// Backoff is the wait before retry n (1-based); nil: RetryWait with
	// RetryBackoff.
	Backoff        func(n int) time.Duration
	RetryBackoff   time.Duration // retry_backoff, the first retry's wait
	FallbackModel  string        // fallback_model, "" none
	UsageLimitWait time.Duration // usage_limit_wait: the longest wait for a reset (ResetWait)
	MaxRetries     int           // max_retries: remediation attempts (Remediate)
}

// LimitsOf reads the limits from the run's configuration; backoff, when
// not nil, replaces retry_backoff's doubling (tests wait nothing).
func LimitsOf(c config.Config, backoff func(n int) time.Duration) Limits {
	return Limits{Restarts: c.MaxRestarts, Backoff: backoff, RetryBackoff: time.Duration(c.RetryBackoff),
		FallbackModel: c.FallbackModel, UsageLimitWait: time.Duration(c.UsageLimitWait), MaxRetries: c.MaxRetries}
}

// RetryWait is the wait before retry n (1-based) of a failed session:
// first, doubling, up to a minute (or first, when that is longer).
func RetryWait(first time.Duration, n int) time.Duration {
	return min(first<<(n-1), max(first, time.Minute))
}

// After decides what follows a session: the rows of AfterRows, in their
// order. The order of its cases is the precedence: Ctrl-C, then the
// agent's done signal (it beats a stop decided on the same response), then
// a refusal no retry can fix, a usage limit, an API never reached, a
// budget, a clean end, a restart, a retry.
func After(e Ended) Step {
	switch {
	case e.Interrupted:
		return Step{Kind: StepInterrupted}
	case e.Done || e.Signalled:
		return Step{Kind: StepFinish}
	case e.Refused != "":
		return Step{Kind: StepFailFast, Why: e.Refused}
	case e.Failure.Class == failure.UsageLimit:
		if failure.ModelSpecific(e.Failure.LimitType) && e.Limits.FallbackModel != "" && e.Model != e.Limits.FallbackModel {
			return Step{Kind: StepFallback, Why: e.Failure.Reason, Model: e.Limits.FallbackModel}
		}
		return Step{Kind: StepUsageLimit, Why: e.Failure.Reason}
	case e.Failure.Class == failure.Unreachable && !e.Reached:
		return Step{Kind: StepFailFast, Why: e.Failure.Reason + ": " + e.Failure.Fix}
	case e.Trigger == TriggerBudget:
		return Step{Kind: StepExhausted}
	}
	// A session debussy was ending that ended its turn by itself before
	// the stop (the agent stopped instead of writing its handoff) restarts
	// like a stopped one.
	stopped := e.Stopped || (e.Trigger != "" && e.Completed)
	switch {
	case e.Trigger == "" && e.Completed:
		return Step{Kind: StepFinish}
	case stopped && e.Trigger != "":
		return e.restart(e.Reason)
	case e.Failure.Class == failure.PromptTooLong:
		// The context filled before a trigger fired.
		return e.restart("the context filled up (prompt too long)")
	}
	n := e.Retries + 1
	if n > MaxSessionRetries {
		return Step{Kind: StepRetriesSpent, Why: e.Describe, N: n, Of: MaxSessionRetries}
	}
	wait := RetryWait(e.Limits.RetryBackoff, n)
	if e.Limits.Backoff != nil {
		wait = e.Limits.Backoff(n)
	}
	return Step{Kind: StepRetry, Why: e.Describe, N: n, Of: MaxSessionRetries, Wait: wait}
}

// restart is a restart, or the phase's end when max_restarts is spent.
func (e Ended) restart(why string) Step {
	if e.Restarts >= e.Limits.Restarts {
		return Step{Kind: StepRestartsSpent, Why: why, N: e.Restarts, Of: e.Limits.Restarts}
	}
	return Step{Kind: StepRestart, Why: why, N: e.Restarts + 1, Of: e.Limits.Restarts}
}

// ResetWait decides a usage limit's wait, after the session that met it
// or before one a rerun would start: go on at until (a buffer after the
// reset), or, ok false, end the run with exit 75 when the reset is
// unknown or further away than usage_limit_wait (0: never wait). A reset
// that has passed is waited past by the buffer alone.
func ResetWait(resets, now time.Time, wait time.Duration) (until time.Time, ok bool) {
	if resets.IsZero() || resets.Sub(now) > wait {
		return time.Time{}, false
	}
	return failure.AfterReset(resets), true
}

// Verdict is what an attempt's end (its last session finished) leads to,
// by the agent's done signal.
type Verdict int

const (
	VerdictGates       Verdict = iota // the signal says completed (or none is required): run the gates
	VerdictBlocked                    // the agent reported it is blocked: the phase ends blocked, exit 1
	VerdictAgentFailed                // the agent reported failure: a remediation, if one is left
	VerdictNoSignal                   // require_done_signal and no signal: a remediation, if one is left
)

var verdictNames = [...]string{"gates", "blocked", "agent failed", "no signal"}

func (v Verdict) String() string { return verdictNames[v] }

// AfterAttempt reads the done signal's status ("" when the agent sent
// none) at the end of an attempt.
func AfterAttempt(status string, requireDoneSignal bool) Verdict {
	switch {
	case status == "blocked":
		return VerdictBlocked
	case status == "failed":
		return VerdictAgentFailed
	case status == "" && requireDoneSignal:
		return VerdictNoSignal
	}
	return VerdictGates
}

// Remediate reports whether attempt (1-based) that did not finish the
// phase (a failed gate, the agent's failure, no signal, a hook's refusal)
// is followed by a remediation session: max_retries of them per phase.
func Remediate(attempt, maxRetries int) bool {
	return attempt <= maxRetries
}
