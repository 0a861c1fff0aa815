package session

import (
	"cmp"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
)

// Effect is one thing the session's owner must do, in the order the
// session decided it: record, log, or bring the ledger up to date.
type Effect interface{ effect() }

// Record is one line of events.jsonl, stamped with the phase, the session
// and (for what happened on a turn) the turn.
type Record struct{ Event record.Event }

// Log is one line of the run's log; Args start with the phase.
type Log struct {
	Level policy.Level
	Msg   string
	Args  []any
}

// Observed is one stream event with the estimator's snapshot after it:
// the checkpoint's recorder and the live view read it. Live is the
// Meters' figures then (Config.Live).
type Observed struct {
	Event event.Event
	Snap  estimator.Snapshot
	Live  *Live
	// Running is the main thread's tool in flight after the event; nil
	// when none.
	Running *Running
}

// Tick is the duration budgets checked without an event; Snap is the
// latest snapshot, for the live view.
type Tick struct{ Snap estimator.Snapshot }

// ZoneChanged is the session's new zone.
type ZoneChanged struct{ Zone estimator.Zone }

// Nudged is an exploration or loop nudge to keep in the ledger.
type Nudged struct {
	Nudge estimator.Nudge
	At    time.Time
}

// HandoffKept is a handoff the agent wrote, to keep in the ledger.
type HandoffKept struct{ Path string }

// Emergency is a stop without the handoff that was due: counted.
type Emergency struct{}

// StopDecided is the policy ending the session (the runner was asked to
// stop at the next safe point).
type StopDecided struct {
	policy.StopDecision
	At time.Time
}

// SpendChanged says the Meters' figures moved in a way the ledger shows
// (a budget level, a quarter, what the agent is doing): record them.
type SpendChanged struct{}

func (Record) effect()       {}
func (Log) effect()          {}
func (Observed) effect()     {}
func (Tick) effect()         {}
func (ZoneChanged) effect()  {}
func (Nudged) effect()       {}
func (HandoffKept) effect()  {}
func (Emergency) effect()    {}
func (StopDecided) effect()  {}
func (SpendChanged) effect() {}

// perform turns what the policy decided into Effects, in stream order, and
// asks the runner to stop when the policy says so (the hook's answer is
// the clean stop; the runner's interrupt its fallback).
func (s *Session) perform() {
	for _, e := range s.pol.Effects() {
		switch e.Kind {
		case policy.EffStop:
			at, reason := s.now(), e.Stop.Reason
			switch {
			case s.over:
			case e.Stop.Emergency:
				s.log(policy.LevelWarn, "emergency stop: stopping the session at the next safe point", "reason", reason)
			case !threshold(e.Stop.Trigger):
				s.log(policy.LevelWarn, "stopping the session at the next safe point", "reason", reason)
			case len(s.rs.InFlight()) > 0:
				s.log(policy.LevelWarn, "threshold crossed: stopping after the running tool", "reason", reason)
			default:
				s.log(policy.LevelWarn, "threshold crossed: stopping at the next safe point", "reason", reason)
			}
			if !s.over {
				s.rs.RequestStop(reason)
			}
			if s.stopAt.IsZero() && !s.over {
				s.stopAt = at
			}
			s.q.push(StopDecided{StopDecision: *e.Stop, At: at})
		case policy.EffZone:
			s.q.push(ZoneChanged{Zone: e.Zone})
		case policy.EffNudge:
			s.q.push(Nudged{Nudge: *e.Nudge, At: s.now()})
		case policy.EffHandoffWritten:
			s.q.push(HandoffKept{Path: s.cfg.Facts.HandoffPath})
		case policy.EffNoHandoff:
			s.q.push(Emergency{})
		}
		if e.Event != "" {
			s.record(record.Policy{Name: e.Event, Session: s.stamp(true), Fields: e.Fields})
			if id := e.Fields.ToolUseID; e.Event == record.ToolDenied && id != nil && *id != "" {
				if s.refused == nil {
					s.refused = map[string]string{}
				}
				s.refused[*id] = cmp.Or(e.Fields.Why, "handoff")
			}
		}
		if e.Log != "" && e.Level != policy.LevelNone {
			s.log(e.Level, e.Log, e.Fields.LogAttrs()...)
		}
	}
}

// threshold reports whether trig is one of the session's thresholds
// (rather than a budget, a loop or a compaction).
func threshold(trig estimator.Trigger) bool {
	return trig == estimator.TriggerContext || trig == estimator.TriggerToolCalls || trig == policy.TriggerZone
}

// record queues a line of events.jsonl.
func (s *Session) record(ev record.Event) { s.q.push(Record{Event: ev}) }

// stamp is the phase, the session and (withTurn) the turn; on the
// session's goroutine only when withTurn.
func (s *Session) stamp(withTurn bool) record.Session {
	st := record.Session{Phase: s.cfg.Phase, Session: s.cfg.Number}
	if withTurn {
		turn := s.turn
		st.Turn = &turn
	}
	return st
}

// log queues a line of the run's log, naming the phase.
func (s *Session) log(level policy.Level, msg string, args ...any) {
	s.q.push(s.logOf(level, msg, args...))
}

// logOf is a line of the run's log, naming the phase.
func (s *Session) logOf(level policy.Level, msg string, args ...any) Log {
	return Log{Level: level, Msg: msg, Args: append([]any{"phase", s.cfg.Phase}, args...)}
}

// markLog is how a step of the runner's stop timeline is logged.
func (s *Session) markLog(m runner.Mark) Log {
	l := func(level policy.Level, msg string, args ...any) Log {
		return Log{Level: level, Msg: msg, Args: append([]any{"phase", s.cfg.Phase}, args...)}
	}
	name, f := string(m.Name), m.Fields
	switch m.Name {
	case runner.MarkToolDrained:
		if f.TimedOut != nil && *f.TimedOut {
			return l(policy.LevelWarn, "the running tool did not finish within stop_grace: interrupting it", "stop_grace", s.cfg.Spec.StopGrace)
		}
		return l(policy.LevelInfo, "safe point reached: interrupting the session")
	case runner.MarkSigkill:
		if f.By != nil && *f.By == "cancel_grace" {
			return l(policy.LevelWarn, "the running tool did not finish after the interrupt: killing the session", "grace", s.cfg.Spec.CancelGrace)
		}
		return l(policy.LevelInfo, "stopping the session", "step", name)
	case runner.MarkInterruptSent, runner.MarkSigint, runner.MarkSigterm, runner.MarkIdleTimeout:
		return l(policy.LevelInfo, "stopping the session", "step", name)
	}
	return l(policy.LevelDebug, "stop timeline", "step", name)
}
