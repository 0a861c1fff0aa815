package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// stepKind is what the phase does after one session.
type stepKind int

const (
	stepFinish      stepKind = iota // the attempt is over: the caller reads the done signal and runs the gates
	stepInterrupted                 // Ctrl-C: commit, stop; a rerun resumes
	stepFailFast                    // claude cannot run here: exit 2, no retry, no commit of its own
	stepExhausted                   // a budget ran out: extend it (the user) or end the phase
	stepRestart                     // a fresh session from a checkpoint, counted against max_restarts
	stepRetry                       // the session failed on its own: again from a checkpoint, after a backoff
	stepUsageLimit                  // a usage limit: commit, wait for its reset (or end with exit 75), go on uncounted
)

// step is the decision after a session, with its reason.
type step struct {
	kind stepKind
	why  string
}

// afterSession decides what follows a session that ended as end; signalled
// is whether the agent's `debussy done` signal is on disk. Pure, and the
// order of its cases is the precedence: Ctrl-C, then the agent's done
// signal (it beats a stop decided on the same response), then a refusal
// no retry can fix, a usage limit, a budget, a clean end, a restart, a
// retry. reached says whether any session of the run got an answer from
// the API: an unreachable API is a setup error until one did.
func afterSession(end sessionEnd, signalled, reached bool) step {
	out := end.outcome
	switch {
	case end.interrupted:
		return step{kind: stepInterrupted}
	case end.done || signalled:
		return step{kind: stepFinish}
	case out.Refused() != nil:
		return step{kind: stepFailFast, why: out.Refused().Error()}
	case out.Failure.Class == failure.UsageLimit:
		return step{kind: stepUsageLimit, why: out.Failure.Reason}
	case out.Failure.Class == failure.Unreachable && !reached:
		return step{kind: stepFailFast, why: out.Failure.Reason + ": " + out.Failure.Fix}
	case end.trigger == policy.TriggerBudget:
		return step{kind: stepExhausted}
	}
	// A session debussy was ending that ended its turn by itself before
	// the stop (the agent stopped instead of writing its handoff) restarts
	// like a stopped one.
	stopped := out.Kind == runner.OutcomeStopped || (end.trigger != "" && out.Kind == runner.OutcomeCompleted)
	switch {
	case end.trigger == "" && (out.Kind == runner.OutcomeCompleted || out.Kind == runner.OutcomeMaxTurns):
		return step{kind: stepFinish}
	case stopped && end.trigger == policy.TriggerAdaptive:
		return step{kind: stepRestart, why: lessons(end.reason)}
	case stopped && end.trigger != "":
		return step{kind: stepRestart, why: end.reason}
	case out.Failure.Class == failure.PromptTooLong:
		// The context filled before a trigger fired.
		return step{kind: stepRestart, why: "the context filled up (prompt too long)"}
	}
	return step{kind: stepRetry, why: describeOutcome(out)}
}

// runSessions runs sessions for one attempt until one ends normally:
// restarting on context triggers, retrying sessions that failed on their
// own. A nil error means the last session completed (or hit max turns, or
// the agent signalled); the caller then looks at the done signal.
func (r *orun) runSessions(ctx context.Context, p *phaseRun, prompt string) error {
	for {
		if err := r.mayStartSession(ctx, p); err != nil {
			return err
		}
		end, err := r.runSession(ctx, p, prompt)
		if err != nil {
			return r.sessionFailed(p, err)
		}
		if reachedAPI(end.outcome) {
			r.reached.Store(true)
		}
		s := afterSession(end, r.signalled(p), r.reached.Load())
		switch s.kind {
		case stepFinish:
			p.transient = 0
			return nil
		case stepInterrupted:
			r.commit(p, eventInterrupted, "interrupted")
			return r.endPhase(p, state.StatusInterrupted, ErrInterrupted)
		case stepFailFast:
			if refused := end.outcome.Refused(); refused != nil {
				return r.failFast(p, fmt.Errorf("%w: phase %s: %w", ErrSetup, p.ph.ID, refused))
			}
			return r.failFast(p, fmt.Errorf("%w: phase %s: %s", ErrSetup, p.ph.ID, s.why))
		case stepUsageLimit:
			prompt, err = r.usageLimit(ctx, p, end)
		case stepExhausted:
			prompt, err = r.extendOrEnd(ctx, p, end)
		case stepRestart:
			prompt, err = r.restart(p, end, s.why)
		case stepRetry:
			prompt, err = r.retry(ctx, p, s.why)
		}
		if err != nil {
			return err
		}
	}
}

// reachedAPI reports whether a session got an answer from the API: a
// response with usage, or a result that cost something.
func reachedAPI(o runner.Outcome) bool {
	r := o.Result
	return r != nil && (r.CostUSD > 0 || r.Usage.Context() > 0 || o.Failure.Class == failure.UsageLimit)
}

// mayStartSession ends the phase before a session that must not start:
// git disagreed with a commit under strict_git, a strict budget is spent
// and the user does not extend it, or a usage limit an earlier run met
// has not reset yet (the session would only be refused again).
func (r *orun) mayStartSession(ctx context.Context, p *phaseRun) error {
	if w := p.rec.WaitingUntil; !w.IsZero() && w.After(r.now()) {
		if err := r.waitForReset(ctx, p, p.rec.Limit, w); err != nil {
			return err
		}
	}
	if p.gitDisagrees != nil {
		return r.endPhase(p, state.StatusFailed, fmt.Errorf("%w: %w", ErrSetup, p.gitDisagrees))
	}
	if spent, ok := r.budgetSpent(p); ok && !r.extendBudget(ctx, p, spent) {
		return r.endPhase(p, state.StatusFailed, r.exhaustedError(p, spent))
	}
	return nil
}

// sessionFailed ends the phase for a session debussy could not run.
func (r *orun) sessionFailed(p *phaseRun, err error) error {
	switch {
	case errors.Is(err, ErrLedger):
		return err
	case errors.Is(err, ErrSetup): // claude is missing
		return r.failFast(p, err)
	}
	return r.endPhase(p, state.StatusFailed, err)
}

// failFast ends the phase for a failure no retry can fix, with exit 2: no
// remediation, no "failed" commit on the user's branch (work the agent
// did is still committed), and the session taken off the count so the
// fixed command starts the phase fresh.
func (r *orun) failFast(p *phaseRun, err error) error {
	r.commit(p, eventInterrupted, "stopped: claude cannot run")
	p.recorded = true
	p.rec.Sessions = max(p.rec.Sessions-1, 0)
	return r.endPhase(p, state.StatusFailed, err)
}

// extendOrEnd follows a budget's stop: the user may extend it (a new
// session from a checkpoint, which max_restarts does not count: the user
// chose it); else the phase ends exhausted. It returns the next prompt.
func (r *orun) extendOrEnd(ctx context.Context, p *phaseRun, end sessionEnd) (string, error) {
	spent := r.phaseEcon(p).exhausted
	if !r.extendBudget(ctx, p, spent) {
		return "", r.endPhase(p, state.StatusFailed, r.exhaustedError(p, spent))
	}
	c := r.commit(p, eventRestart, "checkpoint after a budget extension")
	p.keepFrom(end)
	p.rec.Restarts++
	cp, err := r.checkpoint(p, "resume", extendedWhy(spent), c) // "resumed", not "restart 0 of N"
	if err != nil {
		return "", err
	}
	r.log.Info("restarting the session from a checkpoint after the budget's extension", "phase", p.ph.ID)
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// restart commits, checkpoints and returns the next session's prompt, or
// ends the phase when max_restarts is spent.
func (r *orun) restart(p *phaseRun, end sessionEnd, why string) (string, error) {
	if p.restarts >= r.cfg.MaxRestarts {
		return "", r.endPhase(p, state.StatusFailed, fmt.Errorf("phase %s %w: max restarts (%d) exceeded: %s; work committed",
			p.ph.ID, ErrPhaseFailed, r.cfg.MaxRestarts, why))
	}
	c := r.commit(p, eventRestart, fmt.Sprintf("checkpoint before restart %d/%d", p.restarts+1, r.cfg.MaxRestarts))
	p.keepFrom(end)
	p.restarts++
	p.rec.Restarts++
	cp, err := r.checkpoint(p, "restart", why, c)
	if err != nil {
		return "", err
	}
	if end.trigger == policy.TriggerAdaptive {
		r.openWindow(p)
	}
	r.log.Info("restarting the session from a checkpoint", "phase", p.ph.ID, "restart", p.restarts, "max_restarts", r.cfg.MaxRestarts)
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// retry follows a session that failed on its own (an API error, a crash,
// a hang): from a checkpoint, after a backoff, at most maxTransient times.
func (r *orun) retry(ctx context.Context, p *phaseRun, why string) (string, error) {
	p.transient++
	if p.transient > maxTransient {
		return "", r.endPhase(p, state.StatusFailed, fmt.Errorf("phase %s %w: its session failed %d times, last: %s",
			p.ph.ID, ErrPhaseFailed, maxTransient+1, why))
	}
	wait := r.Backoff(p.transient)
	r.log.Warn("session failed: retrying from a checkpoint", "phase", p.ph.ID, "why", why, "wait", wait,
		"retry", p.transient, "max_retries", maxTransient)
	r.event("session_retry", map[string]any{"phase": p.ph.ID, "why": why, "wait_ms": wait.Milliseconds(), "retry": p.transient})
	// The retry starts from a checkpoint: what was done, and why the last
	// session ended.
	c := r.commit(p, eventRetry, "checkpoint before retry: "+oneLine(why))
	cp, err := r.checkpoint(p, "retry", why, c)
	if err != nil {
		return "", err
	}
	stopped := false
	r.unlocked(func() {
		select {
		case <-ctx.Done():
			stopped = true
		case <-time.After(wait):
		}
	})
	if stopped {
		return "", r.endPhase(p, state.StatusInterrupted, ErrInterrupted)
	}
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// keepFrom keeps what the next checkpoint needs of the session that ended:
// the handoff or why there is none, and the calls to avoid.
func (p *phaseRun) keepFrom(end sessionEnd) {
	p.handoff, p.noHandoff = end.handoff, end.noHandoff
	p.avoid = append(p.avoid, end.avoid...)
}
