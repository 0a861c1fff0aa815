package policy

import (
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
)

// StepKind is what the phase does after one session.
type StepKind int

const (
	StepFinish      StepKind = iota // the attempt is over: the done signal is read and the gates run
	StepInterrupted                 // Ctrl-C: commit, stop; a rerun resumes
	StepFailFast                    // claude cannot run here: exit 2, no retry, no commit of its own
	StepExhausted                   // a budget ran out: extend it (the user) or end the phase
	StepRestart                     // a fresh session from a checkpoint, counted against max_restarts
	StepRetry                       // the session failed on its own: again from a checkpoint, after a backoff
	StepUsageLimit                  // a usage limit: commit, wait for its reset (or end with exit 75), go on uncounted
)

// Step is the decision after a session, with its reason.
type Step struct {
	Kind StepKind
	Why  string
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
}

// After decides what follows a session. The order of its cases is the
// precedence: Ctrl-C, then the agent's done signal (it beats a stop
// decided on the same response), then a refusal no retry can fix, a
// usage limit, an API never reached, a budget, a clean end, a restart,
// a retry.
func After(e Ended) Step {
	switch {
	case e.Interrupted:
		return Step{Kind: StepInterrupted}
	case e.Done || e.Signalled:
		return Step{Kind: StepFinish}
	case e.Refused != "":
		return Step{Kind: StepFailFast, Why: e.Refused}
	case e.Failure.Class == failure.UsageLimit:
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
		return Step{Kind: StepRestart, Why: e.Reason}
	case e.Failure.Class == failure.PromptTooLong:
		// The context filled before a trigger fired.
		return Step{Kind: StepRestart, Why: "the context filled up (prompt too long)"}
	}
	return Step{Kind: StepRetry, Why: e.Describe}
}
