package runner

import (
	"fmt"
	"github.com/debussy-dev/debussy/record"
	"log/slog"
	"syscall"
	"time"
)

// The stop machine's clock: watchdogs, the drain and interrupt deadlines,
// signal escalation, and when the machine next needs a tick.

// tick applies the passing of time.
func (m *machine) tick(now time.Time) {
	if m.phase >= phaseExited {
		return
	}
	if !m.killAt.IsZero() && !now.Before(m.killAt) && !m.killed {
		// Debug: the sigkill mark (by cancel_grace) is how callers hear of it.
		m.logf(slog.LevelDebug, "claude did not stop within the cancel grace: killing it", "grace", m.cfg.cancelGrace)
		m.kill(now, "cancel_grace")
	}
	m.hookTimeouts(now)
	m.watchdogs(now)
	switch m.phase {
	case phaseDraining:
		m.drain(now)
	case phaseHookWait, phaseHookStopped:
		if !now.Before(m.deadline) {
			// No PostToolUse came (a long text answer, a hung tool), or the
			// response's other tools did not finish: fall back to the interrupt.
			m.mark(MarkToolDrained, now, record.MarkFields{Waited: ref(now.Sub(m.since)), TimedOut: ref(len(m.inflight) > 0),
				InFlight: inFlight(len(m.inflight)), HookStopSent: ref(m.hookStopSent)})
			m.interrupt(now)
		}
	case phaseInterrupting:
		if !now.Before(m.deadline) {
			m.phase = phaseRunning
			m.logf(slog.LevelWarn, "claude sent no result after an interrupt", "request_id", m.interruptID, "waited", m.cfg.killGrace)
			if m.cause != "" {
				m.closeStdin(now)
			} else {
				m.failSend(fmt.Errorf("no result within %s of the interrupt", m.cfg.killGrace))
			}
		}
	}
	m.escalate(now)
}

func (m *machine) watchdogs(now time.Time) {
	if m.ending() {
		return
	}
	// While a hook call waits for our answer the CLI is silent by design:
	// the idle clock runs from the answer, not from the call.
	if d := m.cfg.idleTimeout; d > 0 && len(m.pending) == 0 && now.Sub(m.lastLine) >= d {
		// No point in a safe point: a hung claude answers nothing.
		m.cause, m.reason = OutcomeIdleTimeout, fmt.Sprintf("no output from claude for %s", d)
		m.mark(MarkIdleTimeout, now, record.MarkFields{LastLine: ref(m.lastLine)})
		m.noteInFlightAtStop()
		m.closeStdin(now)
		m.escalateAt = now
		return
	}
	if d := m.cfg.sessionTimeout; d > 0 && now.Sub(m.cfg.started) >= d {
		m.beginStop(OutcomeSessionTimeout, fmt.Sprintf("session ran longer than %s", d), now)
	}
}

// drain interrupts once the tools in flight are done (and the response
// has settled), or when StopGrace is over.
func (m *machine) drain(now time.Time) {
	switch {
	case len(m.inflight) == 0 && m.settling(now) && now.Before(m.deadline):
		// The response may still ask for a tool: let it, then drain it.
	case len(m.inflight) == 0:
		m.mark(MarkToolDrained, now, record.MarkFields{Waited: ref(now.Sub(m.since)), TimedOut: ref(false)})
		m.interrupt(now)
	case !now.Before(m.deadline):
		ids := make([]string, len(m.inflight))
		for k, tu := range m.inflight {
			ids[k] = tu.ID
		}
		m.mark(MarkToolDrained, now, record.MarkFields{Waited: ref(now.Sub(m.since)), TimedOut: ref(true), InFlight: &record.InFlight{N: len(ids), IDs: ids}})
		m.interrupt(now)
	}
}

// escalate signals a claude that lingers after stdin was closed: SIGINT,
// then SIGTERM, then SIGKILL, KillGrace apart.
func (m *machine) escalate(now time.Time) {
	if m.phase != phaseClosing || m.escalateAt.IsZero() || now.Before(m.escalateAt) {
		return
	}
	m.emit(action{kind: actCloseStdinNow})
	if m.cause != "" {
		m.noteInFlightAtStop()
	}
	sig, name := syscall.SIGINT, MarkSigint
	switch m.sigLevel {
	case 1:
		sig, name = syscall.SIGTERM, MarkSigterm
	case 2:
		sig, name = syscall.SIGKILL, MarkSigkill
	}
	m.emit(action{kind: actSignal, sig: sig, mark: name, at: now})
	m.sigLevel++
	m.escalateAt = time.Time{}
	if m.sigLevel < 3 {
		m.escalateAt = now.Add(m.cfg.killGrace)
	}
}

// next is when the machine next needs a step without any input.
func (m *machine) next() (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if m.phase < phaseClosing {
		for _, p := range m.pending {
			consider(p.deadline)
		}
	}
	switch m.phase {
	case phaseHookWait, phaseHookStopped:
		consider(m.deadline)
	case phaseDraining:
		consider(m.deadline)
		if m.responseOpen && len(m.inflight) == 0 {
			consider(m.settleUntil()) // with tools in flight only their results matter
		}
	case phaseInterrupting:
		consider(m.deadline)
	case phaseClosing:
		consider(m.escalateAt)
	}
	if m.phase < phaseExited && !m.killed {
		consider(m.killAt)
	}
	if !m.ending() {
		if d := m.cfg.idleTimeout; d > 0 && len(m.pending) == 0 {
			consider(m.lastLine.Add(d))
		}
		if d := m.cfg.sessionTimeout; d > 0 {
			consider(m.cfg.started.Add(d))
		}
	}
	return next, !next.IsZero()
}
