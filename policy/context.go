package policy

import (
	"fmt"

	"github.com/debussy-dev/debussy/estimator"
)

// The context's limits are compared here and nowhere else: the estimator
// only measures (tokens, window, whether the window is known yet).

// ContextLimit is where a session's context asks for its handoff: the
// lower of context_threshold (percent of a window that may be judged) and
// context_max_tokens (an absolute cap). At is 0 when neither applies. The
// report draws it with the same numbers (ContextLimitOf).
type ContextLimit struct {
	At     int64 // tokens at which the handoff is due
	WarnAt int64 // tokens at which the agent is told to wrap up
	ByCap  bool  // the cap is the lower limit
}

// judged reports whether snap's window may be decided on: known, or
// assumed with no answer from the CLI to come. A window only the model
// table guessed while the CLI's answer is pending is not (2.1.332's 1M
// default read as "125 % of 200K" stopped sessions at 250K).
func judged(snap estimator.Snapshot) bool { return snap.Window > 0 && !snap.WindowPending }

func (p *Policy) contextLimit(snap estimator.Snapshot) ContextLimit {
	var window int64
	if judged(snap) {
		window = snap.Window
	}
	return ContextLimitOf(p.cfg.ContextThreshold, p.cfg.ContextMaxTokens, window)
}

// ContextLimitOf is the limit that acts for context_threshold threshold
// (percent; 0 or >= 100 off), context_max_tokens maxTokens (0 off) and a
// window of window tokens (0: not known yet, only the cap applies).
func ContextLimitOf(threshold int, maxTokens, window int64) ContextLimit {
	var l ContextLimit
	if window > 0 && threshold > 0 && threshold < 100 {
		l.At = window * int64(threshold) / 100
		l.WarnAt = window * int64(max(threshold-WarnBelow, 0)) / 100
	}
	if c := maxTokens; c > 0 && (l.At == 0 || c < l.At) {
		// The warning comes as many points before the cap as before the
		// threshold: 350K for a 400K cap at the default 80 %.
		pct := int64(threshold)
		if pct <= 0 || pct >= 100 {
			pct = 100
		}
		l = ContextLimit{At: c, WarnAt: c * max(pct-WarnBelow, 0) / pct, ByCap: true}
	}
	return l
}

// Words names the limit as the log and the report say it: "the cap
// context_max_tokens 400K (40 % of 1M; the 80 % threshold is 800K)", or
// "context_threshold 80 % (160K of 200K)".
func (l ContextLimit) Words(threshold int, window int64) string {
	switch {
	case l.At == 0:
		return "no context limit"
	case l.ByCap && window > 0:
		s := fmt.Sprintf("the cap context_max_tokens %s (%s of %s", estimator.FormatTokens(l.At), estimator.FormatPercent(100*float64(l.At)/float64(window))+" %", estimator.FormatTokens(window))
		if threshold > 0 && threshold < 100 {
			s += fmt.Sprintf("; the %d %% threshold is %s", threshold, estimator.FormatTokens(window*int64(threshold)/100))
		}
		return s + ")"
	case l.ByCap:
		return fmt.Sprintf("the cap context_max_tokens %s (window not known yet)", estimator.FormatTokens(l.At))
	}
	return fmt.Sprintf("context_threshold %d %% (%s of %s)", threshold, estimator.FormatTokens(l.At), estimator.FormatTokens(window))
}

// due reports whether snap reached the limit. The threshold compares
// percent exactly as it is shown (83.4 % ≥ 80 %), the cap tokens.
func (l ContextLimit) due(snap estimator.Snapshot, thr int) bool {
	switch {
	case l.At == 0:
		return false
	case l.ByCap:
		return snap.Tokens >= l.At
	}
	return snap.Percent >= float64(thr)
}

// contextReason words the limit reached: "context 81 % of 200K ≥ 80 %", or
// "context 401K reached the cap context_max_tokens 400K (window 1M)".
func (p *Policy) contextReason(snap estimator.Snapshot, l ContextLimit) string {
	if !l.ByCap {
		return fmt.Sprintf("context %s %% of %s ≥ %d %%", percentOf(snap), estimator.FormatTokens(snap.Window), p.cfg.ContextThreshold)
	}
	tok := estimator.FormatTokens(snap.Tokens)
	if snap.Estimated {
		tok = "~" + tok
	}
	return fmt.Sprintf("context %s reached the cap context_max_tokens %s (%s)", tok, estimator.FormatTokens(l.At), windowWords(snap))
}

// contextWarning is the note at the warning point.
func (p *Policy) contextWarning(snap estimator.Snapshot, l ContextLimit) string {
	next := "Finish the current step, then record what you did and what remains with `debussy progress --phase " + p.cfg.Phase + " \"...\"`."
	if p.cfg.MaxRestarts > 0 {
		// The agent may end the session itself at a task boundary rather
		// than be stopped mid-task at the threshold.
		next = fmt.Sprintf("Finish the task at hand, then write your handoff to `%s` and run `debussy handoff --phase %s`: "+
			"a fresh session goes on from it. Record progress with `debussy progress --phase %s \"...\"`.", p.cfg.HandoffPath, p.cfg.Phase, p.cfg.Phase)
	}
	if l.ByCap {
		return fmt.Sprintf("debussy: your context is at %s tokens; at %s (context_max_tokens) you will be asked for a handoff and this session will end. %s",
			estimator.FormatTokens(snap.Tokens), estimator.FormatTokens(l.At), next)
	}
	return fmt.Sprintf("debussy: your context is at %d%% of the window; at %d%% you will be asked for a handoff and this session will end. %s",
		int(snap.Percent), p.cfg.ContextThreshold, next)
}

// windowWords names the window beside the cap.
func windowWords(snap estimator.Snapshot) string {
	if !judged(snap) {
		return "window not known yet"
	}
	return "window " + estimator.FormatTokens(snap.Window)
}

// percentOf is snap's percent as a reason shows it, "~" for an estimate.
func percentOf(snap estimator.Snapshot) string {
	if snap.Estimated {
		return "~" + estimator.FormatPercent(snap.Percent)
	}
	return estimator.FormatPercent(snap.Percent)
}

// emergencyOn reports whether the window's end is watched: any context
// limit is on and the window may be judged.
func (p *Policy) emergencyOn(snap estimator.Snapshot) bool {
	thr := p.cfg.ContextThreshold
	return judged(snap) && ((thr > 0 && thr < 100) || p.cfg.ContextMaxTokens > 0)
}

func emergencyReason(snap estimator.Snapshot) string {
	return fmt.Sprintf("context %d %% of %s ≥ %d %%", int(snap.Percent), estimator.FormatTokens(snap.Window), EmergencyPercent)
}
