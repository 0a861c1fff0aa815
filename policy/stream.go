package policy

import (
	"fmt"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/record"
)

// Observe follows the stream: zones, exploration nudges and the context's
// stages. It runs for every event before a hook on it is answered, with the
// estimator's snapshot after that event.
func (p *Policy) Observe(ev event.Event, snap estimator.Snapshot) {
	p.observeZone(snap)
	for _, nd := range p.nudger.Observe(ev) {
		p.nudge(nd)
	}
	emergency := p.emergencyOn(snap) && snap.Percent >= EmergencyPercent
	if p.state == Stopping || p.state == Done {
		// The emergency outranks a budget's stop already decided.
		if p.state == Stopping && p.trigger == TriggerBudget && emergency {
			p.emergency(estimator.TriggerContext, emergencyReason(snap))
		}
		return
	}
	lim := p.contextLimit(snap)
	switch {
	case emergency:
		p.emergency(estimator.TriggerContext, emergencyReason(snap))
	case snap.Trigger == estimator.TriggerCompaction && !p.cfg.AllowCompaction:
		// The CLI compacted although PreCompact was blocked (another
		// client, an older CLI): restart from a checkpoint as before.
		p.StopFor(snap.Trigger, snap.Reason)
	case p.state == HandoffRequested:
	case lim.due(snap, p.cfg.ContextThreshold):
		p.limit(estimator.TriggerContext, p.contextReason(snap, lim), snap)
	case p.toolCallLimit(snap) > 0 && snap.ToolCalls >= p.toolCallLimit(snap):
		p.limit(estimator.TriggerToolCalls, fmt.Sprintf("tool calls %d ≥ %d", snap.ToolCalls, p.toolCallLimit(snap)), snap)
	case p.zone == estimator.ZoneRed && p.cfg.ZoneAction == ZoneHandoff:
		p.limit(TriggerZone, fmt.Sprintf("red zone: %d tool calls, %d large reads, %d delegations", snap.ToolCalls, snap.LargeReads, snap.Delegations), snap)
	case p.state == Working && lim.At > 0 && snap.Tokens >= lim.WarnAt:
		p.state = Warned
		p.Note(p.contextWarning(snap, lim))
		f := Fields{Threshold: ref(p.cfg.ContextThreshold), Tokens: ref(snap.Tokens), At: ref(lim.At)}
		var window int64
		if judged(snap) {
			f.Percent = ref(snap.Percent) // not of a window still pending
			window = snap.Window
		}
		if lim.ByCap {
			f.By = "context_max_tokens"
		}
		// The log names the limit that acts, in tokens: on a 1M window
		// the cap stops at 40 %, and "percent=35" alone reads as wrong.
		p.record(record.ContextWarning, f, LevelInfo, fmt.Sprintf("context warning sent to the agent at %s; the handoff is due at %s",
			estimator.FormatTokens(snap.Tokens), lim.Words(p.cfg.ContextThreshold, window)))
	}
}

// toolCallLimit is the tool-call count that ends the session: the user's
// tool_call_threshold always; without it, FallbackToolCalls only when the
// context is a character estimate (no usage in the stream).
func (p *Policy) toolCallLimit(snap estimator.Snapshot) int {
	switch {
	case p.cfg.ToolCallThreshold > 0:
		return p.cfg.ToolCallThreshold
	case p.cfg.ToolCallThreshold == 0 && snap.Estimated:
		return FallbackToolCalls
	}
	return 0
}

func (p *Policy) observeZone(snap estimator.Snapshot) {
	z := estimator.ZoneOf(snap, p.cfg.Zones)
	if z == p.zone {
		return
	}
	p.zone = z
	p.emit(Effect{Kind: EffZone, Zone: z, Event: record.Zone, Level: LevelInfo, Log: "zone", Fields: Fields{
		Zone: string(z), ToolCalls: ref(snap.ToolCalls), LargeReads: ref(snap.LargeReads), Delegations: ref(snap.Delegations)}})
	counts := fmt.Sprintf("%d tool calls, %d large reads, %d delegations", snap.ToolCalls, snap.LargeReads, snap.Delegations)
	switch {
	case z == estimator.ZoneYellow:
		p.Note(fmt.Sprintf("debussy: this session is in the yellow zone (%s). "+
			"Assess the remaining work: prefer delegating self-contained parts to a subagent (Task) over reading more yourself, "+
			"and record progress with `debussy progress --phase %s \"...\"`.", counts, p.cfg.Phase))
	case z == estimator.ZoneRed && p.cfg.ZoneAction == ZoneNote:
		p.Note(fmt.Sprintf("debussy: this session is in the red zone (%s). Your context decides when the session ends, "+
			"not this count; keep each step small and record progress with `debussy progress --phase %s \"...\"`.", counts, p.cfg.Phase))
	}
}

func (p *Policy) nudge(nd estimator.Nudge) {
	args := checkpoint.Redact(nd.Args)
	kept := nd
	kept.Args = args
	p.emit(Effect{Kind: EffNudge, Nudge: &kept, Event: record.Nudge, Level: LevelWarn, Log: "nudge", Fields: Fields{
		Kind: nd.Kind, Tool: ref(nd.Tool), Args: ref(args), Count: ref(nd.Count), Restart: ref(nd.Restart)}})
	switch {
	case nd.Restart && p.cfg.MaxRestarts > 0 && p.state != Stopping && p.state != Done:
		p.avoid = append(p.avoid, nd.Tool+" "+args)
		if p.state == HandoffRequested && p.handoff == "" {
			p.noHandoff = "the session was stopped in a loop before the agent wrote its handoff"
		}
		p.stop(TriggerDoomLoop, fmt.Sprintf("doom loop: %s called %d times with the same arguments and the same result", nd.Tool, nd.Count))
	case nd.Kind == estimator.NudgeDoomLoop:
		p.Note(fmt.Sprintf("debussy: you have called %s with the same arguments %d times and got the same result each time (%s). "+
			"Repeating it will not change the result: step back, read the error, and try a different approach.", nd.Tool, nd.Count, args))
	default:
		p.Note(fmt.Sprintf("debussy: %d reads in a row without an edit. You likely know enough to act: make the change now, "+
			"or record what blocks you with `debussy progress --phase %s \"...\"`.", nd.Count, p.cfg.Phase))
	}
}

// limit is the session reaching a threshold: the handoff stage, or a
// plain stop without handoffs.
func (p *Policy) limit(trig estimator.Trigger, reason string, snap estimator.Snapshot) {
	if p.cfg.MaxRestarts == 0 {
		p.stop(trig, reason) // only warns
		return
	}
	p.record(record.Trigger, Fields{Trigger: ref(string(trig)), Reason: ref(reason), Tokens: ref(snap.Tokens),
		Window: ref(snap.Window), ToolCalls: ref(snap.ToolCalls), Zone: string(p.zone)}, LevelNone, "")
	if !p.cfg.Handoff {
		p.stop(trig, reason)
		return
	}
	p.state, p.trigger, p.reason = HandoffRequested, trig, reason
	p.request = fmt.Sprintf("debussy: %s. Write your handoff NOW to `%s` (the Write tool, that exact absolute path); "+
		"every other tool is refused until you have. The next session starts from it, so be concrete. Use this template:\n\n%s",
		reason, p.cfg.HandoffPath, checkpoint.HandoffTemplate())
	p.record(record.HandoffRequested, Fields{Path: ref(p.cfg.HandoffPath), Reason: ref(reason)},
		LevelWarn, "threshold crossed: asking the agent for its handoff")
}

// StopFor ends the session at the next PostToolUse (or by the runner's
// fallback when no tool comes): a budget, an adaptive restart, a compaction.
func (p *Policy) StopFor(trig estimator.Trigger, reason string) { p.stop(trig, reason) }

func (p *Policy) stop(trig estimator.Trigger, reason string) {
	if p.state == Stopping || p.stopAfterDone {
		return
	}
	// With restarts off, a threshold only warns; a budget's stop, and the
	// agent's own handoff (it was told to end its turn), end the phase all
	// the same.
	if p.cfg.MaxRestarts == 0 && trig != TriggerBudget && trig != TriggerAgentHandoff {
		if p.trigger == "" {
			p.trigger = trig // once: the warning is not repeated
			p.record("", Fields{}, LevelWarn, "threshold crossed, but restarts are disabled (max_restarts 0): continuing: "+reason)
		}
		return
	}
	if p.state == HandoffRequested && p.handoff == "" && p.noHandoff == "" {
		p.noHandoff = "the session was stopped before the agent wrote its handoff: " + reason
	}
	p.trigger, p.reason = trig, reason
	if p.state == Done {
		// Done beats the stop: the session still ends at the next
		// PostToolUse, and the phase goes on to its gates.
		p.stopAfterDone = true
	} else {
		p.state = Stopping
	}
	p.emit(Effect{Kind: EffStop, Stop: &StopDecision{Trigger: trig, Reason: reason}, Event: record.StopDecided,
		Fields: Fields{Trigger: ref(string(trig)), Reason: ref(reason)}})
}

// emergency ends a session that has no handoff and no time left. It
// outranks a budget's stop already decided: the restart it asks for is
// about the context, and a budget extension must not hide it.
func (p *Policy) emergency(trig estimator.Trigger, why string) {
	if p.cfg.MaxRestarts == 0 || p.state == Done {
		return
	}
	if trig == "" {
		trig = estimator.TriggerContext
	}
	p.record(record.EmergencyStop, Fields{Reason: ref(why)}, LevelWarn, "emergency stop")
	if p.cfg.Handoff && p.handoff == "" {
		p.noHandoff = "no handoff was written: " + why
		p.emit(Effect{Kind: EffNoHandoff})
	}
	if p.state == Stopping && p.trigger == TriggerBudget {
		p.trigger, p.reason = trig, why
		return
	}
	p.stop(trig, why)
	if n := len(p.effects); n > 0 && p.effects[n-1].Kind == EffStop {
		p.effects[n-1].Stop.Emergency = true // logged as what it is, not as a threshold
	}
}

// GraceExpired is the handoff's time running out.
func (p *Policy) GraceExpired(grace string) {
	if p.state == HandoffRequested {
		p.emergency(p.trigger, "the agent did not write its handoff within "+grace)
	}
}
