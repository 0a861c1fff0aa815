package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// ended is a session's end as the policy's decision after it needs it:
// signalled is whether the agent's `debussy done` signal is on disk,
// reached whether any session of the run got an answer from the API.
func ended(res session.Result, signalled, reached bool) policy.Ended {
	out := res.Outcome
	e := policy.Ended{Interrupted: res.Interrupted, Done: res.Done, Signalled: signalled, Failure: out.Failure, Reached: reached,
		Trigger: res.Trigger, Reason: res.Reason, Describe: out.Describe(),
		Completed: out.Kind == runner.OutcomeCompleted || out.Kind == runner.OutcomeMaxTurns,
		Stopped:   out.Kind == runner.OutcomeStopped}
	if err := out.Refused(); err != nil {
		e.Refused = err.Error()
	}
	return e
}

// runSessions runs sessions for one attempt until one ends normally:
// restarting on context triggers, retrying sessions that failed on their
// own. A nil error means the last session completed (or hit max turns, or
// the agent signalled); the caller then looks at the done signal.
func (p *phaseRun) runSessions(ctx context.Context, prompt string) error {
	r := p.r
	for {
		if err := p.mayStartSession(ctx); err != nil {
			return err
		}
		end, err := p.runSession(ctx, prompt)
		if err != nil {
			return p.sessionFailed(err)
		}
		if reachedAPI(end.Outcome) {
			r.reached.Store(true)
		}
		// The policy decides what follows, as it decided in the session.
		e := ended(end, p.signalled(), r.reached.Load())
		e.Restarts, e.Retries, e.Model, e.Limits = p.restarts, p.transient, p.model(), r.limits
		s := policy.After(e)
		switch s.Kind {
		case policy.StepFinish:
			p.transient = 0
			return nil
		case policy.StepInterrupted:
			p.commit(eventInterrupted, "interrupted")
			return p.endPhase(state.StatusInterrupted, ErrInterrupted)
		case policy.StepFailFast:
			if refused := end.Outcome.Refused(); refused != nil {
				// A setup problem (a login, a permission, a missing CLI) in
				// debussy's words: the CI log and the step summary say it.
				return p.failFast(public.OwnErr(fmt.Errorf("%w: phase %s: %w", ErrSetup, p.ph.ID, refused)))
			}
			return p.failFast(public.OwnErr(fmt.Errorf("%w: phase %s: %s", ErrSetup, p.ph.ID, s.Why)))
		case policy.StepUsageLimit, policy.StepFallback:
			prompt, err = p.atUsageLimit(ctx, end, s)
		case policy.StepExhausted:
			prompt, err = p.extendOrEnd(ctx, end)
		case policy.StepRestart, policy.StepRestartsSpent:
			why := s.Why
			if end.Trigger == policy.TriggerAdaptive {
				why = lessons(why)
			}
			if s.Kind == policy.StepRestartsSpent {
				return p.endPhase(state.StatusFailed, withPublic(fmt.Errorf("phase %s %w: max restarts (%d) exceeded: %s; work committed",
					p.ph.ID, ErrPhaseFailed, s.Of, why), fmt.Sprintf("phase %s failed: max restarts (%d) exceeded", p.ph.ID, s.Of)))
			}
			prompt, err = p.restart(end, why, s)
		case policy.StepRetry:
			prompt, err = p.retry(ctx, s, end.Outcome)
		case policy.StepRetriesSpent:
			class := end.Outcome.Failure.Class
			return p.endPhase(state.StatusFailed, withPublic(fmt.Errorf("phase %s %w: its session failed %d times, last: %s",
				p.ph.ID, ErrPhaseFailed, s.N, s.Why), fmt.Sprintf("phase %s failed: its session failed %d times (%s)", p.ph.ID, s.N, classWord(class))))
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
// a strict budget is spent
// and the user does not extend it, or a usage limit an earlier run met
// has not reset yet (the session would only be refused again).
func (p *phaseRun) mayStartSession(ctx context.Context) error {
	r := p.r
	if w := p.rec.WaitingUntil; !w.IsZero() && w.After(r.now()) {
		if err := p.waitForReset(ctx, p.rec.Limit, w); err != nil {
			return err
		}
	}
	if spent, ok := p.spendOf().Spent(r.now()); ok && !p.extendBudget(ctx, spent) {
		return p.endPhase(state.StatusFailed, p.exhaustedError(spent))
	}
	return nil
}

// sessionFailed ends the phase for a session debussy could not run.
func (p *phaseRun) sessionFailed(err error) error {
	switch {
	case errors.Is(err, ErrLedger):
		return err
	case errors.Is(err, ErrSetup): // claude is missing
		return p.failFast(err)
	}
	return p.endPhase(state.StatusFailed, err)
}

// failFast ends the phase for a failure no retry can fix, with exit 2: no
// remediation, no "failed" commit on the user's branch (work the agent
// did is still committed), and the session taken off the count so the
// fixed command starts the phase fresh.
func (p *phaseRun) failFast(err error) error {
	p.commit(eventInterrupted, "stopped: claude cannot run")
	p.recorded = true
	p.rec.Sessions = max(p.rec.Sessions-1, 0)
	return p.endPhase(state.StatusFailed, err)
}

// extendOrEnd follows a budget's stop: the user may extend it (a new
// session from a checkpoint, which max_restarts does not count: the user
// chose it); else the phase ends exhausted. It returns the next prompt.
func (p *phaseRun) extendOrEnd(ctx context.Context, end session.Result) (string, error) {
	r := p.r
	spent := p.spendOf().Budget.Exhausted
	if !p.extendBudget(ctx, spent) {
		return "", p.endPhase(state.StatusFailed, p.exhaustedError(spent))
	}
	c := p.commit(eventRestart, "checkpoint after a budget extension")
	p.keepFrom(end)
	p.rec.Restarts++
	cp, err := p.checkpoint("resume", extendedWhy(spent), c) // "resumed", not "restart 0 of N"
	if err != nil {
		return "", err
	}
	r.log.Info("restarting the session from a checkpoint after the budget's extension", "phase", p.ph.ID)
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// restart commits, checkpoints and returns the next session's prompt:
// restart s.N of s.Of, as the policy decided.
func (p *phaseRun) restart(end session.Result, why string, s policy.Step) (string, error) {
	r := p.r
	c := p.commit(eventRestart, fmt.Sprintf("checkpoint before restart %d/%d", s.N, s.Of))
	p.keepFrom(end)
	p.restarts = s.N
	p.rec.Restarts++
	cp, err := p.checkpoint("restart", why, c)
	if err != nil {
		return "", err
	}
	if end.Trigger == policy.TriggerAdaptive {
		p.openWindow()
	}
	r.log.Info("restarting the session from a checkpoint", "phase", p.ph.ID, "restart", s.N, "max_restarts", s.Of)
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// retry follows a session that failed on its own (an API error, a crash,
// a hang): from a checkpoint, after the policy's backoff.
func (p *phaseRun) retry(ctx context.Context, s policy.Step, out runner.Outcome) (string, error) {
	r := p.r
	class := out.Failure.Class
	p.transient = s.N
	why, wait := s.Why, s.Wait
	r.log.Warn("session failed: retrying from a checkpoint", "phase", p.ph.ID, "why", public.Words(out.Words(), why), "wait", wait,
		"retry", p.transient, "max_retries", s.Of)
	r.recorder.event(record.SessionRetry{Phase: p.ph.ID, Why: out.Words(), Error: why, Failure: string(class), WaitMs: wait.Milliseconds(), Retry: p.transient})
	// The retry starts from a checkpoint: what was done, and why the last
	// session ended.
	// The subject is pushed: the failure's class, not its text.
	c := p.commit(eventRetry, "checkpoint before retry ("+classWord(class)+")")
	cp, err := p.checkpoint("retry", why, c)
	if err != nil {
		return "", err
	}
	stopped := false
	select {
	case <-ctx.Done():
		stopped = true
	case <-time.After(wait):
	}
	if stopped {
		return "", p.endPhase(state.StatusInterrupted, ErrInterrupted)
	}
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// keepFrom keeps what the next checkpoint needs of the session that ended:
// the handoff or why there is none, and the calls to avoid.
func (p *phaseRun) keepFrom(end session.Result) {
	p.handoff, p.noHandoff = end.Handoff, end.NoHandoff
	p.avoid = append(p.avoid, end.Avoid...)
}

// openWindow gives an adaptive restart a fresh budget window.
func (p *phaseRun) openWindow() {
	r := p.r
	used := p.spendOf().OpenWindow(r.now())
	r.recorder.event(record.BudgetWindow{Phase: p.ph.ID, UsedPct: used})
}

// lessons is what an adaptive restart's checkpoint says the last window
// taught, beside the files, calls and notes every checkpoint carries.
func lessons(reason string) string {
	return reason + ". Lessons so far: at the last session's rate the phase would not finish within its budget. " +
		"The files changed, failed commands and progress notes below are what it tried; do not repeat its exploration, " +
		"finish the remaining tasks by the most direct route, and record each with `debussy progress`."
}

// signalled reports whether the agent ran `debussy done` for the phase in
// this attempt; an unreadable signal counts, the phase loop reports it.
func (p *phaseRun) signalled() bool {
	r := p.r
	sig, err := r.Store.ReadSignal(r.id, p.ph.ID)
	return err != nil || sig != nil
}
