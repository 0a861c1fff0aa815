package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/prompt"
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
	for {
		if err := p.mayStartSession(ctx); err != nil {
			return err
		}
		end, err := p.runSession(ctx, prompt)
		if err != nil {
			return p.sessionFailed(err)
		}
		if reachedAPI(end.Outcome) {
			p.launch.reached.Store(true)
		}
		// The policy decides what follows, as it decided in the session.
		e := ended(end, p.signalled(), p.launch.reached.Load())
		e.Restarts, e.Retries, e.Model, e.Limits = p.tries.restarts, p.tries.retries, p.model(), p.limits
		s := policy.After(e)
		switch s.Kind {
		case policy.StepFinish:
			p.tries.retries = 0
			return nil
		case policy.StepInterrupted:
			p.commit(eventInterrupted, "interrupted", commitOpts{})
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
				return p.endPhase(state.StatusFailed, outcome.WithPublic(fmt.Errorf("phase %s %w: max restarts (%d) exceeded: %s; work committed",
					p.ph.ID, ErrPhaseFailed, s.Of, why), fmt.Sprintf("phase %s failed: max restarts (%d) exceeded", p.ph.ID, s.Of)))
			}
			prompt, err = p.restart(end, why, s)
		case policy.StepRetry:
			prompt, err = p.retry(ctx, s, end.Outcome)
		case policy.StepRetriesSpent:
			class := end.Outcome.Failure.Class
			return p.endPhase(state.StatusFailed, outcome.WithPublic(fmt.Errorf("phase %s %w: its session failed %d times, last: %s",
				p.ph.ID, ErrPhaseFailed, s.N, s.Why), fmt.Sprintf("phase %s failed: its session failed %d times (%s)", p.ph.ID, s.N, outcome.ClassWord(class))))
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
// a strict budget is spent and the user does not extend it, or a usage
// limit an earlier run met has not reset yet (the session would only be
// refused again).
func (p *phaseRun) mayStartSession(ctx context.Context) error {
	if rec := p.rec.Record(); !rec.WaitingUntil.IsZero() && rec.WaitingUntil.After(p.now()) {
		if err := p.waitForReset(ctx, rec.Limit, rec.WaitingUntil, 0); err != nil {
			return err
		}
	}
	if spent, ok := p.spend.Spent(p.now()); ok && !p.extendBudget(ctx, spent) {
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
	p.commit(eventInterrupted, "stopped: claude cannot run", commitOpts{})
	n := max(p.rec.Record().Sessions-1, 0)
	return p.end(record.PhaseEnded{Status: string(state.StatusFailed), Sessions: &n}, err, false)
}

// extendOrEnd follows a budget's stop: the user may extend it (a new
// session from a checkpoint, which max_restarts does not count: the user
// chose it); else the phase ends exhausted. It returns the next prompt.
func (p *phaseRun) extendOrEnd(ctx context.Context, end session.Result) (string, error) {
	spent := p.spend.Budget.Exhausted
	if !p.extendBudget(ctx, spent) {
		return "", p.endPhase(state.StatusFailed, p.exhaustedError(spent))
	}
	c := p.commit(eventRestart, "checkpoint after a budget extension", commitOpts{})
	p.keepFrom(end)
	cp := p.checkpoint("resume", extendedWhy(spent), c.hash) // "resumed", not "restart 0 of N"
	p.rec.Emit(record.Restart{Phase: p.ph.ID, Of: p.limits.Restarts, Extension: true})
	return prompt.WithRejection(c.rejected, cp.Prompt(p.start.basePrompt)), nil
}

// restart commits, checkpoints and returns the next session's prompt:
// restart s.N of s.Of, as the policy decided.
func (p *phaseRun) restart(end session.Result, why string, s policy.Step) (string, error) {
	c := p.commit(eventRestart, fmt.Sprintf("checkpoint before restart %d/%d", s.N, s.Of), commitOpts{})
	p.keepFrom(end)
	p.tries.restarts = s.N
	cp := p.checkpoint("restart", why, c.hash)
	if end.Trigger == policy.TriggerAdaptive {
		p.rec.Emit(record.BudgetWindow{Phase: p.ph.ID, UsedPct: p.spend.OpenWindow(p.now())})
	}
	p.rec.Emit(record.Restart{Phase: p.ph.ID, Restart: s.N, Of: s.Of})
	return prompt.WithRejection(c.rejected, cp.Prompt(p.start.basePrompt)), nil
}

// retry follows a session that failed on its own (an API error, a crash,
// a hang): from a checkpoint, after the policy's backoff.
func (p *phaseRun) retry(ctx context.Context, s policy.Step, out runner.Outcome) (string, error) {
	class := out.Failure.Class
	p.tries.retries = s.N
	// Why in debussy's words; what claude said with it stays local.
	p.rec.Emit(record.SessionRetry{Phase: p.ph.ID, Why: out.Words(), Error: s.Why, Failure: string(class), WaitMs: s.Wait.Milliseconds(),
		Retry: s.N, MaxRetries: s.Of})
	// The retry starts from a checkpoint: what was done, and why the last
	// session ended. The subject is pushed: the failure's class, not its
	// text.
	c := p.commit(eventRetry, "checkpoint before retry ("+outcome.ClassWord(class)+")", commitOpts{})
	cp := p.checkpoint("retry", s.Why, c.hash)
	select {
	case <-ctx.Done():
		return "", p.endPhase(state.StatusInterrupted, ErrInterrupted)
	case <-time.After(s.Wait):
	}
	return prompt.WithRejection(c.rejected, cp.Prompt(p.start.basePrompt)), nil
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
	sig, err := p.files.store.ReadSignal(p.files.run, p.ph.ID)
	return err != nil || sig != nil
}
