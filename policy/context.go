package policy

import (
	"fmt"

	"github.com/debussy-dev/debussy/estimator"
)

// The context's limits are compared here and nowhere else: the estimator
// only measures (tokens, window, whether the window is known yet).

// contextLimit is where a session's context asks for its handoff: the
// lower of context_threshold (percent of a window that may be judged) and
// context_max_tokens (an absolute cap). at is 0 when neither applies.
type contextLimit struct {
	at     int64 // tokens at which the handoff is due
	warnAt int64 // tokens at which the agent is told to wrap up
	byCap  bool  // the cap is the lower limit
}

// judged reports whether snap's window may be decided on: known, or
// assumed with no answer from the CLI to come. A window only the model
// table guessed while the CLI's answer is pending is not (2.1.332's 1M
// default read as "125 % of 200K" stopped sessions at 250K).
func judged(snap estimator.Snapshot) bool { return snap.Window > 0 && !snap.WindowPending }

func (p *Policy) contextLimit(snap estimator.Snapshot) contextLimit {
	thr := p.cfg.ContextThreshold
	at, byCap := HandoffPoint(snap, thr, p.cfg.ContextMaxTokens)
	switch {
	case at == 0:
		return contextLimit{}
	case byCap:
		// The warning comes as many points before the cap as before the
		// threshold: 350K for a 400K cap at the default 80 %.
		pct := int64(thr)
		if pct <= 0 || pct >= 100 {
			pct = 100
		}
		return contextLimit{at: at, warnAt: at * max(pct-WarnBelow, 0) / pct, byCap: true}
	}
	return contextLimit{at: at, warnAt: snap.Window * int64(max(thr-WarnBelow, 0)) / 100}
}

// HandoffPoint is the context, in tokens, at which a session hands off:
// the lower of threshold percent of a window that may be judged and the
// cap maxTokens (context_max_tokens), 0 when neither applies; byCap says
// the cap is the lower. The session's check of the CLI's compaction
// points asks it too, so the point is computed here alone.
func HandoffPoint(snap estimator.Snapshot, threshold int, maxTokens int64) (at int64, byCap bool) {
	if judged(snap) && threshold > 0 && threshold < 100 {
		at = snap.Window * int64(threshold) / 100
	}
	if maxTokens > 0 && (at == 0 || maxTokens < at) {
		return maxTokens, true
	}
	return at, false
}

// due reports whether snap reached the limit. The threshold compares
// percent exactly as it is shown (83.4 % ≥ 80 %), the cap tokens.
func (l contextLimit) due(snap estimator.Snapshot, thr int) bool {
	switch {
	case l.at == 0:
		return false
	case l.byCap:
		return snap.Tokens >= l.at
	}
	return snap.Percent >= float64(thr)
}

// contextReason words the limit reached: "context 81 % of 200K ≥ 80 %", or
// "context 401K reached the cap context_max_tokens 400K (window 1M)".
func (p *Policy) contextReason(snap estimator.Snapshot, l contextLimit) string {
	if !l.byCap {
		return fmt.Sprintf("context %s %% of %s ≥ %d %%", percentOf(snap), estimator.FormatTokens(snap.Window), p.cfg.ContextThreshold)
	}
	tok := estimator.FormatTokens(snap.Tokens)
	if snap.Estimated {
		tok = "~" + tok
	}
	return fmt.Sprintf("context %s reached the cap context_max_tokens %s (%s)", tok, estimator.FormatTokens(l.at), windowWords(snap))
}

// contextWarning is the note at the warning point.
func (p *Policy) contextWarning(snap estimator.Snapshot, l contextLimit) string {
	next := "Finish the current step, then record what you did and what remains with `debussy progress --phase " + p.cfg.Phase + " \"...\"`."
	if p.cfg.MaxRestarts > 0 {
		// The agent may end the session itself at a task boundary rather
		// than be stopped mid-task at the threshold.
		next = fmt.Sprintf("Finish the task at hand, then write your handoff to `%s` and run `debussy handoff --phase %s`: "+
			"a fresh session goes on from it. Record progress with `debussy progress --phase %s \"...\"`.", p.cfg.HandoffPath, p.cfg.Phase, p.cfg.Phase)
	}
	if l.byCap {
		return fmt.Sprintf("debussy: your context is at %s tokens; at %s (context_max_tokens) you will be asked for a handoff and this session will end. %s",
			estimator.FormatTokens(snap.Tokens), estimator.FormatTokens(l.at), next)
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
