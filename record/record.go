// Package record holds the typed lines of a run's events.jsonl: one Go
// type per event, whose json tags are the line's keys. The log
// (state.EventLog) writes them with "ts" and "event" first and the other
// keys sorted; readers (status, report, logs) decode a line into its type,
// so a renamed key is a compile error, not a silent empty field.
//
// It is a leaf: the session (which may not import state) builds records
// too.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Event is one line of events.jsonl: its name, and its fields as a struct
// (the keys "ts" and "event" are the log's).
type Event interface{ EventName() string }

// Session stamps what a session records: its phase, its number and, for
// what happened on a turn, the turn.
type Session struct {
	Phase   string `json:"phase"`
	Session int    `json:"session"`
	Turn    *int   `json:"turn,omitempty"`
}

// Line is one line read back: its time, its name, its phase and session
// (which readers filter on; Session nil for a line without one), and the
// rest for As.
type Line struct {
	TS      time.Time
	Event   string
	Phase   string
	Session *int
	raw     json.RawMessage
}

// Parse reads one events.jsonl line.
func Parse(data []byte) (Line, error) {
	var head struct {
		TS      string          `json:"ts"`
		Event   string          `json:"event"`
		Phase   json.RawMessage `json:"phase"`
		Session json.RawMessage `json:"session"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Line{}, err
	}
	l := Line{Event: head.Event, raw: bytes.Clone(data)}
	l.TS, _ = time.Parse(time.RFC3339Nano, head.TS) // a line without one still reads
	// A key of another type (a user's tool wrote the line) is no phase or
	// session, not a bad line.
	_ = json.Unmarshal(head.Phase, &l.Phase)
	var n int
	if json.Unmarshal(head.Session, &n) == nil && head.Session != nil {
		l.Session = &n
	}
	return l, nil
}

// Decode reads l's fields into v, whatever l's name.
func (l Line) Decode(v any) error {
	if err := json.Unmarshal(l.raw, v); err != nil {
		return fmt.Errorf("decode event %s: %w", l.Event, err)
	}
	return nil
}

// Policy is l as what the policy recorded (a Policy event: its fields
// are Fields').
func (l Line) Policy() (Policy, error) {
	p := Policy{Name: PolicyEvent(l.Event)}
	err := l.Decode(&p)
	return p, err
}

// As is l as a T when l is a T's line (by name); false for another event
// or a line whose fields do not fit T.
func As[T Event](l Line) (T, bool) {
	var v T
	if l.Event != v.EventName() {
		return v, false
	}
	if l.Decode(&v) != nil {
		return v, false
	}
	return v, true
}
