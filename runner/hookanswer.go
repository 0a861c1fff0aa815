package runner

import (
	"github.com/debussy-dev/debussy/record"
	"log/slog"
	"slices"
	"time"
)

// The stop machine's side of hook calls: it carries the consumer's answers
// to the CLI, bounds their wait, answers with a default on a timeout or at
// a stop, and never answers a call twice. What the answer says is the
// consumer's (package policy, through the orchestrator).

// hookCall handles a hook call from the CLI: it waits for the consumer's
// Answer, at most HookTimeout, also once the session is ending — the
// consumer decides the answer and its wording; the runner only makes sure
// a PostToolUse after a stop carries the stop (answer).
func (m *machine) hookCall(h *HookCall, now time.Time) {
	m.hooksOn = true // whatever init said, the callbacks are live
	if m.phase >= phaseClosing {
		m.logf(slog.LevelDebug, "hook call after stdin was closed: not answered", "hook", h.Event, "request_id", h.RequestID)
		return
	}
	m.pending = append(m.pending, pendingHook{reqID: h.RequestID, event: h.Event, tool: h.ToolName, toolID: h.ToolUseID,
		at: now, deadline: now.Add(m.cfg.hookTimeout)})
}

// hookAnswered sends the consumer's answer, unless the runner already
// answered that call.
func (m *machine) hookAnswered(reqID string, a HookAnswer, now time.Time) {
	k := slices.IndexFunc(m.pending, func(p pendingHook) bool { return p.reqID == reqID })
	if k < 0 {
		m.logf(slog.LevelDebug, "hook answer after the runner answered: ignored", "request_id", reqID)
		return
	}
	p := m.pending[k]
	m.pending = slices.Delete(m.pending, k, k+1)
	if p.event != HookPostToolUse && a.StopReason != "" {
		m.answer(p, a, now)
		m.beginStop(OutcomeStopped, a.StopReason, now)
		return
	}
	m.answer(p, a, now)
}

// hookCancelled drops a hook call the CLI withdrew (control_cancel_request,
// 2.1.306+): it waits for no answer any more, so none is written, and the
// call counts in no latency. The consumer's answer, when it comes, finds
// no call and is ignored.
func (m *machine) hookCancelled(reqID string, now time.Time) {
	k := slices.IndexFunc(m.pending, func(p pendingHook) bool { return p.reqID == reqID })
	if k < 0 {
		return // answered already, or not a hook call
	}
	p := m.pending[k]
	m.pending = slices.Delete(m.pending, k, k+1)
	m.mark(MarkHookCancelled, now, record.MarkFields{Hook: ref(string(p.event)), RequestID: ref(reqID), Tool: ref(p.tool)})
}

// defaultAnswer is the runner's own answer to a hook.
func (m *machine) defaultAnswer(ev HookEvent) HookAnswer {
	switch {
	case ev == HookPreCompact && !m.cfg.allowCompact:
		return HookAnswer{Block: compactBlockReason}
	case ev == HookPostToolUse && m.cause != "":
		return HookAnswer{StopReason: m.reason}
	}
	return HookAnswer{}
}

// answer writes the answer to p. A PostToolUse answered with a stop reason
// ends the session cleanly: the CLI runs the response's other tools, sends
// no further request and ends the turn with terminal_reason hook_stopped.
func (m *machine) answer(p pendingHook, a HookAnswer, now time.Time) {
	if p.event == HookPostToolUse && m.cause != "" && a.StopReason == "" {
		a.StopReason = m.reason
	}
	if p.event == HookPreToolUse && m.afterStop[p.toolID] {
		a = HookAnswer{Deny: stoppedDenyReason + m.reason}
	}
	m.emit(action{kind: actWrite, data: hookResponse(p.reqID, p.event, a)})
	if m.hookWaits == nil {
		m.hookWaits = map[HookEvent][]time.Duration{}
	}
	m.hookWaits[p.event] = append(m.hookWaits[p.event], now.Sub(p.at))
	m.lastLine = maxTime(m.lastLine, now) // the CLI was waiting for us: idle from here
	if p.event != HookPostToolUse || a.StopReason == "" {
		return
	}
	if m.cause == "" {
		// The consumer's StopReason: a RequestStop with that reason.
		m.cause, m.reason = OutcomeStopped, a.StopReason
		m.mark(MarkStopRequested, now, record.MarkFields{Kind: ref(string(OutcomeStopped)), Reason: ref(a.StopReason),
			InFlight: inFlight(len(m.inflight)), By: ref("hook")})
		m.failSend(ErrSessionClosed)
		m.answerPending(now)
	}
	m.mark(MarkHookStopSent, now, record.MarkFields{RequestID: ref(p.reqID), Tool: ref(p.tool), Reason: ref(a.StopReason)})
	if !m.hookStopSent {
		m.stopMsg = m.lastMsg
	}
	m.hookStopSent = true
	switch m.phase {
	case phaseRunning, phaseDraining, phaseHookWait:
		m.phase, m.since, m.deadline = phaseHookStopped, now, now.Add(m.cfg.stopGrace)
	}
}

// stoppedDenyReason begins the refusal of a tool the CLI asked for after
// the session was stopped.
const stoppedDenyReason = "debussy stopped this session before this tool: "

// stopIgnored handles a main-thread response that began after a PostToolUse
// was answered continue:false, which the CLI should not have asked for
// (measured: 2.1.197 asks when the stopped tool ends before its response
// has, 2.1.112 and 2.1.332 do not). None of its tools runs — a PreToolUse
// for one is denied, so an agent's `debussy done` in it cannot outvote the
// stop — and the turn is interrupted rather than left to the stop's grace.
func (m *machine) stopIgnored(a *Assistant, now time.Time) {
	if !m.hookStopSent || m.stopMsg == "" || a.MessageID == "" || a.MessageID == m.stopMsg {
		return
	}
	first := m.afterStop == nil
	if first {
		m.afterStop = map[string]bool{}
	}
	for _, tu := range a.ToolUses {
		m.afterStop[tu.ID] = true
	}
	// Refused, they are not tools a stop cuts in half.
	m.inflight = slices.DeleteFunc(m.inflight, func(tu ToolUse) bool { return m.afterStop[tu.ID] })
	if !first {
		return
	}
	m.mark(MarkHookStopIgnored, now, record.MarkFields{Reason: ref(m.reason), InFlight: inFlight(len(m.inflight))})
	m.logf(slog.LevelInfo, "claude went on after debussy's stop at a tool: its next tools are refused and the turn interrupted",
		"reason", m.reason)
	if m.phase == phaseHookStopped {
		m.interrupt(now)
	}
}

// answerPending answers every pending hook call with the runner's default.
func (m *machine) answerPending(now time.Time) {
	for len(m.pending) > 0 {
		p := m.pending[0]
		m.pending = m.pending[1:]
		m.answer(p, m.defaultAnswer(p.event), now)
	}
}

// hookTimeouts answers, with the default, the calls the consumer left
// unanswered for HookTimeout: the CLI must never hang on debussy.
func (m *machine) hookTimeouts(now time.Time) {
	if m.phase >= phaseClosing {
		return
	}
	for k := 0; k < len(m.pending); {
		p := m.pending[k]
		if now.Before(p.deadline) {
			k++
			continue
		}
		m.pending = slices.Delete(m.pending, k, k+1)
		m.mark(MarkHookSlow, now, record.MarkFields{Hook: ref(string(p.event)), RequestID: ref(p.reqID), Tool: ref(p.tool), Waited: ref(now.Sub(p.at))})
		m.logf(slog.LevelWarn, "hook call not answered in time: default answer sent", "hook", p.event, "tool", p.tool, "waited", now.Sub(p.at))
		m.answer(p, m.defaultAnswer(p.event), now)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Latency is how long the CLI waited for debussy's answers to one hook.
type Latency struct {
	N             int
	P50, P99, Max time.Duration
}

// latencies sums up the waits per hook; nil without hook calls.
func latencies(waits map[HookEvent][]time.Duration) map[HookEvent]Latency {
	if len(waits) == 0 {
		return nil
	}
	out := make(map[HookEvent]Latency, len(waits))
	for ev, ds := range waits {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		rank := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
		out[ev] = Latency{N: len(ds), P50: rank(0.50), P99: rank(0.99), Max: ds[len(ds)-1]}
	}
	return out
}

// hookAnswerer is how a hook call's answer reaches the stop machine: as an
// input of the session, in order with everything else it handles.
func (s *Session) hookAnswerer(reqID string) func(HookAnswer) {
	return func(a HookAnswer) { s.push(input{kind: inHookAnswer, reqID: reqID, answer: a}) }
}
