package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// ErrUsageLimit ends a run at a subscription's usage limit that resets
// later than usage_limit_wait allows (exit 75, EX_TEMPFAIL): the work is
// committed, and the same command after the reset resumes the phase.
var ErrUsageLimit = errors.New("usage limit reached")

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

// atUsageLimit follows a session that hit a usage limit: the work is
// committed and checkpointed; a limit on one model only goes on at once
// with fallback_model; else the phase waits for the reset (within
// usage_limit_wait) and resumes with the checkpoint — no restart or retry
// is counted, since nothing the agent did caused it — or the run ends
// with ErrUsageLimit. It returns the next session's prompt.
func (p *phaseRun) atUsageLimit(ctx context.Context, end session.Result, s policy.Step) (string, error) {
	r := p.r
	f := end.Outcome.Failure
	name := failure.LimitName(f.LimitType)
	p.rec.UsageLimits++
	p.keepFrom(end)
	fallback := s.Kind == policy.StepFallback
	if !fallback && !f.Resets.IsZero() {
		// The limit is the account's: its commit (pushed with --push)
		// holds back every job that reads it until the reset.
		p.usageLimit = remote.LimitTrailer(f.LimitType, f.Resets)
	}
	c := p.commit(eventRetry, fmt.Sprintf("checkpoint at the %s limit", name))
	p.usageLimit = ""
	why := fmt.Sprintf("the %s limit was reached; the phase resumes after its reset", name)
	if fallback {
		from := p.model()
		p.rec.Model = s.Model
		r.log.Warn(fmt.Sprintf("%s limit reached: going on with fallback_model %s", name, s.Model),
			"phase", p.ph.ID, "from", from, "resets", failure.ResetClock(f.Resets, r.now()))
		r.recorder.event(record.FallbackModel{Phase: p.ph.ID, Limit: f.LimitType, From: from, To: s.Model, Resets: f.Resets})
		why = fmt.Sprintf("the %s limit was reached; the phase goes on with %s", name, s.Model)
	}
	cp, err := p.checkpoint("resume", why, c)
	if err != nil {
		return "", err
	}
	if !fallback {
		if err := p.waitForReset(ctx, f.LimitType, f.Resets); err != nil {
			return "", err
		}
	}
	return p.withRejection(cp.Prompt(p.basePrompt)), nil
}

// waitForReset waits until a usage limit has reset, sending nothing to the
// API meanwhile, or ends the phase: ErrUsageLimit when the reset is
// further away than usage_limit_wait (or unknown), ErrInterrupted on
// Ctrl-C. The ledger names the reset while it waits and after such an
// end, so `status` shows it and a rerun before it waits again.
func (p *phaseRun) waitForReset(ctx context.Context, limit string, resets time.Time) error {
	r := p.r
	now := r.now()
	wait := r.limits.UsageLimitWait
	p.rec.WaitingUntil, p.rec.Limit = resets, limit
	name := failure.LimitName(limit)
	until, ok := policy.ResetWait(resets, now, wait)
	if !ok {
		err := &UsageLimitError{Phase: p.ph.ID, Limit: limit, Resets: resets, Wait: wait, Now: now}
		r.recorder.event(record.UsageLimit{Phase: p.ph.ID, Limit: limit, Resets: resets})
		r.log.Warn(fmt.Sprintf("%s limit reached; resets %s; not waiting (usage_limit_wait %s)", name, failure.ResetClock(resets, now), wait), "phase", p.ph.ID)
		p.recorded = true // no "failed" commit: nothing failed, the phase goes on after the reset
		eerr := p.endPhase(state.StatusInterrupted, err)
		code := r.ExitCode(eerr)
		p.announceUsageLimit(limit, notify.Event{Resets: resets, ExitCode: &code})
		return eerr
	}
	if err := r.recorder.savePhase(p.rec); err != nil {
		return err
	}
	r.recorder.event(record.UsageLimit{Phase: p.ph.ID, Limit: limit, Resets: resets, Waiting: true, Until: &until})
	p.announceUsageLimit(limit, notify.Event{Resets: resets, Waiting: true, Until: until})
	r.log.Warn(fmt.Sprintf("%s limit reached; resets %s; waiting — Ctrl-C stops, `debussy run …` resumes", name, failure.ResetClock(resets, now)),
		"phase", p.ph.ID)
	p.progress(p.rec.Sessions, estimator.Snapshot{}, true) // the live view shows the wait, or its end
	stopped := false
	t := time.NewTimer(until.Sub(now))
	select {
	case <-ctx.Done():
		stopped = true
	case <-t.C:
	}
	t.Stop()
	if stopped {
		return p.endPhase(state.StatusInterrupted, ErrInterrupted)
	}
	p.rec.WaitingUntil, p.rec.Limit = time.Time{}, ""
	if err := r.recorder.savePhase(p.rec); err != nil {
		return err
	}
	p.progress(p.rec.Sessions, estimator.Snapshot{}, true) // the live view shows the wait, or its end
	r.recorder.event(record.UsageLimitReset{Phase: p.ph.ID, Limit: limit})
	r.log.Info(fmt.Sprintf("%s limit reset: going on", name), "phase", p.ph.ID)
	return nil
}
