package runner

import (
	"fmt"
	"log/slog"
	"slices"
	"syscall"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/record"
)

// The stop machine decides, from what the session observed and was asked,
// what to do next. It does no I/O and reads no clock: every input comes
// with the time it is handled at, and it answers with actions the session
// carries out (stop.go holds the decisions; supervise.go the effects).

// phase is where a session is on its way to the end.
type phase int

const (
	phaseRunning      phase = iota // a turn runs and nothing is asked of it
	phaseDraining                  // a stop or Send waits for tools in flight, at most StopGrace
	phaseHookWait                  // a stop waits for the next PostToolUse (or the result), at most StopGrace
	phaseHookStopped               // a PostToolUse was answered continue:false; waiting for the result, at most StopGrace
	phaseInterrupting              // interrupt sent; waiting for the turn's result, at most KillGrace
	phaseClosing                   // stdin closed; waiting for the exit, signalling the group at each deadline
	phaseExited                    // claude exited; waiting for stdout, stderr and the group to be gone
	phaseFinished                  // the outcome is out
)

var phaseNames = [...]string{"running", "draining", "hook-wait", "hook-stopped", "interrupting", "closing", "exited", "finished"}

func (p phase) String() string { return phaseNames[p] }

// responseSettle is how long a stop on the interrupt path (no hook
// callbacks, or Ctrl-C) waits after an assistant line for more blocks of
// the same response. Usage arrives on a response's first line, before its
// tool_use lines: without this wait a stop triggered by that usage would
// cancel the tools the model just asked for. The hook path needs no such
// guess: the CLI itself asks at each PostToolUse.
const responseSettle = 2 * time.Second

type inputKind int

const (
	inLine       inputKind = iota // a stdout line was read; event is nil when it was not stream-json
	inStop                        // RequestStop
	inCancel                      // Start's context is done
	inKill                        // Kill
	inSend                        // Send
	inExit                        // claude exited and its group was killed
	inStdoutEOF                   // the stdout reader is done
	inStderrEOF                   // the stderr reader is done
	inGroupGone                   // no process of the session is left
	inHookAnswer                  // HookCall.Answer
)

// input is one thing that happened to the session.
type input struct {
	kind   inputKind
	at     time.Time // inLine: when the line was read
	event  *Event    // inLine
	reason string    // inStop
	msg    string    // inSend
	exit   exitFacts // inExit
	reply  chan error
	reqID  string     // inHookAnswer
	answer HookAnswer // inHookAnswer
}

// exitFacts is what the machine needs of claude's exit.
type exitFacts struct {
	at, groupKilledAt time.Time
	code              int    // -1 when killed by a signal
	status            string // "exited with code 3", "was killed by killed" (exitStatus)
}

type actionKind int

const (
	actWrite         actionKind = iota // queue data on stdin; forSend: the pending Send's reply waits for this write
	actCloseStdin                      // close stdin after the queued writes: claude ends once its turn is over
	actCloseStdinNow                   // close stdin at once
	actSignal                          // signal the process group, then emit mark name with fields
	actReplySend                       // answer the pending Send with err
	actMark                            // emit a mark of the stop timeline
	actReadDeadline                    // stop reading stdout and stderr at at
	actLog                             // log msg with args at level
	actFinish                          // the session is over: outcome
)

// action is one thing the session must do.
type action struct {
	kind    actionKind
	data    []byte
	forSend bool
	sig     syscall.Signal
	err     error
	name    string // actLog's message
	mark    MarkName
	at      time.Time
	fields  record.MarkFields
	level   slog.Level
	args    []any
	outcome Outcome // actFinish: all but Stderr, Err and Marks
}

// stopConfig is the part of Spec the machine needs, with defaults applied.
type stopConfig struct {
	stopGrace, killGrace        time.Duration
	idleTimeout, sessionTimeout time.Duration
	cancelGrace                 time.Duration
	started                     time.Time
	hooks                       bool // the initialize request registering hook callbacks was sent
	hookTimeout                 time.Duration
	allowCompact                bool
	// unreachable, when set (Spec.FirstContact), names where claude
	// connects: connection retries before any answer end the session.
	unreachable string
}

// pendingHook is a hook call the consumer has not answered yet.
type pendingHook struct {
	reqID    string
	event    HookEvent
	tool     string
	toolID   string // the stream's tool_use id
	at       time.Time
	deadline time.Time
}

// machine is the state of one session's stop logic.
type machine struct {
	cfg   stopConfig
	phase phase
	out   []action // actions of the step under way

	cause  OutcomeKind // why the runner is ending the session; "" while it is not
	reason string

	inflight        []ToolUse // main-thread tool uses without a result
	inflightAtStop  []ToolUse
	responseOpen    bool // the last main-thread line was an assistant line: more blocks may follow
	lastAssistantAt time.Time
	lastLine        time.Time
	lastResult      *Result
	facts           failure.Facts // what the stream said about a failure, for Outcome.Failure
	settingsWarned  bool          // claude said the user's settings are not in effect: logged once

	sendPending bool
	sendMsg     string

	since, deadline time.Time // of draining and interrupting
	reqN            int
	interruptID     string

	sigLevel   int       // signals sent while closing: 1 SIGINT, 2 SIGTERM, 3 SIGKILL
	escalateAt time.Time // next signal; zero when none is due
	killAt     time.Time // cancelGrace after a cancel
	killed     bool

	hooksOn      bool // the CLI accepted the hook callbacks: a stop answers a PostToolUse
	pending      []pendingHook
	sessionID    string // the session's own, from its first init
	hookStopSent bool
	lastMsg      string                        // the message id of the last main-thread assistant line
	stopMsg      string                        // lastMsg when a PostToolUse was first answered continue:false
	afterStop    map[string]bool               // tool_use ids of main-thread responses the CLI asked for after that
	hookWaits    map[HookEvent][]time.Duration // from the call to its answer

	exit                            *exitFacts
	stdoutEOF, stderrEOF, groupGone bool
}

func newMachine(cfg stopConfig) *machine {
	return &machine{cfg: cfg, lastLine: cfg.started}
}

// step handles ins at now, then lets time act (watchdogs, drain and
// interrupt deadlines, signal escalation), and returns what to do.
func (m *machine) step(now time.Time, ins ...input) []action {
	m.out = nil
	for _, in := range ins {
		m.handle(in, now)
	}
	m.tick(now)
	if m.phase == phaseExited && m.stdoutEOF && m.stderrEOF && m.groupGone {
		m.finish()
	}
	return m.out
}

func (m *machine) handle(in input, now time.Time) {
	if m.phase == phaseFinished {
		if in.kind == inSend {
			m.emit(action{kind: actReplySend, err: ErrSessionClosed})
		}
		return
	}
	switch in.kind {
	case inLine:
		m.observe(in, now)
	case inStop:
		m.beginStop(OutcomeStopped, in.reason, now)
	case inCancel:
		if m.cfg.cancelGrace > 0 && m.killAt.IsZero() {
			m.killAt = now.Add(m.cfg.cancelGrace)
		}
		m.beginStop(OutcomeCancelled, "cancelled", now)
	case inKill:
		m.kill(now, "kill")
	case inSend:
		m.send(in.msg, now)
	case inHookAnswer:
		m.hookAnswered(in.reqID, in.answer, now)
	case inExit:
		m.exited(in.exit, now)
	case inStdoutEOF:
		m.stdoutEOF = true
	case inStderrEOF:
		m.stderrEOF = true
	case inGroupGone:
		m.groupGone = true
	}
}

func (m *machine) emit(a action) { m.out = append(m.out, a) }

func (m *machine) mark(name MarkName, at time.Time, fields record.MarkFields) {
	m.emit(action{kind: actMark, mark: name, at: at, fields: fields})
}

func (m *machine) logf(level slog.Level, msg string, args ...any) {
	m.emit(action{kind: actLog, level: level, name: msg, args: args})
}

// ending reports whether the session is already on its way out.
func (m *machine) ending() bool { return m.cause != "" || m.phase >= phaseClosing }

func (m *machine) observe(in input, now time.Time) {
	m.lastLine = in.at
	ev := in.event
	if ev == nil {
		return
	}
	m.refuseOnAuth(ev, now)
	m.settingsNotInEffect(ev, now)
	m.giveUpUnreachable(ev, now)
	m.noteFacts(ev)
	switch ev.Kind {
	case KindAssistant:
		if a := ev.Assistant; a.MainThread() {
			m.responseOpen, m.lastAssistantAt = true, in.at
			m.inflight = append(m.inflight, a.ToolUses...)
			m.lastMsg = a.MessageID
			m.stopIgnored(a, now)
		}
	case KindToolResult, KindUser:
		m.responseOpen = false
		for _, tr := range ev.ToolResults {
			m.inflight = slices.DeleteFunc(m.inflight, func(tu ToolUse) bool { return tu.ID == tr.ToolUseID })
		}
	case KindHook:
		m.hookCall(ev.Hook, now)
	case KindControlResponse:
		if ev.Control.RequestID == initRequestID && m.cfg.hooks {
			if ev.Control.Subtype == "success" {
				m.hooksOn = true
			} else {
				m.logf(slog.LevelWarn, "claude refused the hook callbacks: stops use the interrupt", "error", ev.Control.Error)
			}
		}
		if ev.Control.RequestID != "" && ev.Control.RequestID == m.interruptID {
			m.mark(MarkInterruptAcked, now, record.MarkFields{
				RequestID: ref(ev.Control.RequestID), Subtype: ref(ev.Control.Subtype), Error: ref(ev.Control.Error)})
		}
	case KindInit:
		if m.sessionID == "" {
			m.sessionID = ev.Init.SessionID
		}
	case KindResult:
		if r := ev.Result; m.sessionID != "" && r.SessionID != "" && r.SessionID != m.sessionID {
			// Another session's (a subagent's): not the end of this turn.
			m.logf(slog.LevelDebug, "a result of another session: not this session's end", "session_id", r.SessionID)
			return
		}
		m.result(ev.Result, now)
	case KindSubagentResult:
	case KindControlCancel:
		m.hookCancelled(ev.ControlRequestID, now)
	default:
		if ev.ControlRequestID != "" && m.phase < phaseClosing {
			// A request we do not serve (no permission prompt tool is set):
			// refuse it rather than leave the CLI waiting.
			m.emit(action{kind: actWrite, data: controlErrorResponse(ev.ControlRequestID, "unsupported control request "+ev.Subtype)})
			m.logf(slog.LevelWarn, "claude sent a control request the runner does not serve", "subtype", ev.Subtype, "request_id", ev.ControlRequestID)
		}
	}
}

// result ends a turn: a stop under way closes stdin, a pending Send
// becomes the next turn, and otherwise the session is done.
func (m *machine) result(r *Result, now time.Time) {
	m.lastResult = r
	m.responseOpen = false
	m.inflight = nil
	awaited := m.phase == phaseDraining || m.phase == phaseInterrupting || m.phase == phaseHookWait || m.phase == phaseHookStopped
	if awaited {
		m.phase = phaseRunning
	}
	if awaited || m.cause != "" {
		m.mark(MarkResultReceived, now, record.MarkFields{
			Subtype: ref(r.Subtype), IsError: ref(r.IsError), TerminalReason: ref(r.TerminalReason)})
	}
	switch {
	case m.cause != "":
		m.closeStdin(now)
	case m.phase >= phaseClosing:
	case m.sendPending:
		m.sendPending = false
		m.emit(action{kind: actWrite, data: userMessage(m.sendMsg), forSend: true})
		m.mark(MarkFollowUpSent, now, record.MarkFields{Bytes: ref(len(m.sendMsg))})
	default:
		m.closeStdin(now)
	}
}

// beginStop starts a safe-point stop; the first cause wins. A session that
// already closed stdin after its last result ends on its own and keeps the
// outcome of that result.
func (m *machine) beginStop(kind OutcomeKind, reason string, now time.Time) {
	if m.ending() {
		m.logf(slog.LevelDebug, "stop ignored: session already ending", "kind", kind, "reason", reason)
		return
	}
	m.cause, m.reason = kind, reason
	m.mark(MarkStopRequested, now, record.MarkFields{Kind: ref(string(kind)), Reason: ref(reason), InFlight: inFlight(len(m.inflight))})
	m.failSend(ErrSessionClosed)
	m.answerPending(now) // with the stop's defaults: a pending PostToolUse ends the session
	if m.phase != phaseRunning {
		return
	}
	if m.hooksOn && kind != OutcomeCancelled {
		// The CLI asks at the next PostToolUse, after the tool ran and before
		// it sends the next request; a text-only turn ends with its result.
		m.phase, m.since, m.deadline = phaseHookWait, now, now.Add(m.cfg.stopGrace)
		return
	}
	m.quiesce(now)
}

func (m *machine) send(msg string, now time.Time) {
	if m.ending() {
		m.emit(action{kind: actReplySend, err: ErrSessionClosed})
		return
	}
	m.sendPending, m.sendMsg = true, msg
	if m.phase == phaseRunning {
		m.quiesce(now)
	}
}

func (m *machine) failSend(err error) {
	if m.sendPending {
		m.sendPending = false
		m.emit(action{kind: actReplySend, err: err})
	}
}

// settling reports whether the current response may still add tool uses.
func (m *machine) settling(now time.Time) bool {
	return m.responseOpen && now.Before(m.settleUntil())
}

func (m *machine) settleUntil() time.Time {
	return m.lastAssistantAt.Add(min(responseSettle, m.cfg.stopGrace))
}

// quiesce brings the running turn to an end at a safe point: first the
// tools in flight, then an interrupt.
func (m *machine) quiesce(now time.Time) {
	if len(m.inflight) > 0 || m.settling(now) {
		m.phase, m.since, m.deadline = phaseDraining, now, now.Add(m.cfg.stopGrace)
		return
	}
	m.interrupt(now)
}

func (m *machine) interrupt(now time.Time) {
	// An unanswered hook would hold the CLI before it reads the interrupt.
	m.answerPending(now)
	m.reqN++
	m.interruptID = fmt.Sprintf("req_%d", m.reqN)
	if m.cause != "" && len(m.inflight) > 0 {
		m.noteInFlightAtStop()
	}
	m.emit(action{kind: actWrite, data: interruptRequest(m.interruptID)})
	m.mark(MarkInterruptSent, now, record.MarkFields{RequestID: ref(m.interruptID), InFlight: inFlight(len(m.inflight))})
	m.phase, m.deadline = phaseInterrupting, now.Add(m.cfg.killGrace)
}

// noteInFlightAtStop records the tools a stop cut in half, once.
func (m *machine) noteInFlightAtStop() {
	if m.inflightAtStop == nil {
		m.inflightAtStop = slices.Clone(m.inflight)
	}
}

// closeStdin tells claude to exit once its turn is over; if it has not
// after KillGrace the group is signalled.
func (m *machine) closeStdin(now time.Time) {
	if m.phase >= phaseClosing {
		return
	}
	m.phase = phaseClosing
	m.pending = nil // stdin is closed: no answer can reach claude
	m.failSend(ErrSessionClosed)
	m.emit(action{kind: actCloseStdin})
	m.mark(MarkStdinClosed, now, record.MarkFields{})
	m.escalateAt = now.Add(m.cfg.killGrace)
}

// kill sends SIGKILL to the group now; by says who asked.
func (m *machine) kill(now time.Time, by string) {
	if m.phase >= phaseExited || m.killed {
		return
	}
	m.killed = true
	m.noteInFlightAtStop()
	// The reason says what the kind does not: Describe prints
	// "killed: cancel_grace", never "killed: killed: cancel_grace".
	m.cause, m.reason = OutcomeKilled, "killed"
	if by != "kill" {
		m.reason = by
	}
	m.phase, m.sigLevel, m.escalateAt = phaseClosing, 3, time.Time{}
	m.emit(action{kind: actSignal, sig: syscall.SIGKILL, mark: MarkSigkill, at: now, fields: record.MarkFields{By: ref(by)}})
	m.emit(action{kind: actCloseStdinNow})
	m.failSend(ErrSessionClosed)
}

func (m *machine) exited(ex exitFacts, now time.Time) {
	if m.exit != nil {
		return
	}
	m.exit = &ex
	m.phase = phaseExited
	m.mark(MarkExited, ex.at, record.MarkFields{ExitCode: ref(ex.code), Status: ref(ex.status)})
	m.mark(MarkGroupKilled, ex.groupKilledAt, record.MarkFields{})
	m.emit(action{kind: actCloseStdinNow})
	m.failSend(ErrSessionClosed)
	// A process that left the group may still hold the pipes open; stop
	// reading once what is buffered has surely been read.
	m.emit(action{kind: actReadDeadline, at: now.Add(m.cfg.killGrace)})
}

func (m *machine) finish() {
	m.phase = phaseFinished
	m.failSend(ErrSessionClosed)
	kind, reason := m.cause, m.reason
	if kind == "" {
		kind, reason = classify(m.lastResult, m.exit.status)
	}
	m.emit(action{kind: actFinish, outcome: Outcome{
		facts:          m.finalFacts(),
		Kind:           kind,
		Reason:         reason,
		Result:         m.lastResult,
		ExitCode:       m.exit.code,
		InFlightAtStop: m.inflightAtStop,
		HookLatency:    latencies(m.hookWaits),
	}})
}
