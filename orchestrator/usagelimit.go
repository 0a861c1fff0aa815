package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// atUsageLimit follows a session that hit a usage limit: the work is
// committed and checkpointed; a limit on one model only goes on at once
// with fallback_model; else the phase waits for the reset (within
// usage_limit_wait) and resumes with the checkpoint — no restart or retry
// is counted, since nothing the agent did caused it — or the run ends
// with ErrUsageLimit. It returns the next session's prompt.
func (p *phaseRun) atUsageLimit(ctx context.Context, end session.Result, s policy.Step) (string, error) {
	f := end.Outcome.Failure
	name := failure.LimitName(f.LimitType)
	p.keepFrom(end)
	fallback := s.Kind == policy.StepFallback
	o := commitOpts{}
	if !fallback && !f.Resets.IsZero() {
		// The limit is the account's: its commit (pushed with --push)
		// holds back every job that reads it until the reset.
		o.usageLimit = remote.LimitTrailer(f.LimitType, f.Resets)
	}
	c := p.commit(eventRetry, fmt.Sprintf("checkpoint at the %s limit", name), o)
	why := fmt.Sprintf("the %s limit was reached; the phase resumes after its reset", name)
	if fallback {
		p.rec.Emit(record.FallbackModel{Phase: p.ph.ID, Limit: f.LimitType, From: p.model(), To: s.Model, Resets: f.Resets})
		why = fmt.Sprintf("the %s limit was reached; the phase goes on with %s", name, s.Model)
	}
	cp := p.checkpoint("resume", why, c.hash)
	if !fallback {
		if err := p.waitForReset(ctx, f.LimitType, f.Resets, p.rec.Record().Sessions); err != nil {
			return "", err
		}
	}
	return prompt.WithRejection(c.rejected, cp.Prompt(p.start.basePrompt)), nil
}

// waitForReset waits until a usage limit has reset, sending nothing to the
// API meanwhile, or ends the phase: ErrUsageLimit when the reset is
// further away than usage_limit_wait (or unknown), ErrInterrupted on
// Ctrl-C. The ledger names the reset while it waits and after such an
// end, so `status` shows it and a rerun before it waits again. session is
// the session that met the limit, 0 for a wait carried over.
func (p *phaseRun) waitForReset(ctx context.Context, limit string, resets time.Time, session int) error {
	now := p.now()
	wait := p.limits.UsageLimitWait
	until, ok := policy.ResetWait(resets, now, wait)
	if !ok {
		p.rec.Emit(record.UsageLimit{Phase: p.ph.ID, Limit: limit, Resets: resets, Session: session, Wait: wait})
		// No "failed" commit: nothing failed, the phase goes on after the
		// reset.
		return p.end(record.PhaseEnded{Status: string(state.StatusInterrupted)},
			&UsageLimitError{Phase: p.ph.ID, Limit: limit, Resets: resets, Wait: wait, Now: now}, false)
	}
	p.rec.Emit(record.UsageLimit{Phase: p.ph.ID, Limit: limit, Resets: resets, Waiting: true, Until: &until, Session: session, Wait: wait})
	if err := p.rec.Sync(); err != nil {
		return err
	}
	p.progress(p.rec.Record().Sessions, estimator.Snapshot{}, true) // the live view shows the wait, or its end
	t := time.NewTimer(until.Sub(now))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return p.endPhase(state.StatusInterrupted, ErrInterrupted)
	case <-t.C:
	}
	p.rec.Emit(record.UsageLimitReset{Phase: p.ph.ID, Limit: limit})
	p.progress(p.rec.Record().Sessions, estimator.Snapshot{}, true)
	return nil
}
