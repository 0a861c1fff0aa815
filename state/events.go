package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/secrets"
)

// EventLog appends the orchestrator's own events to runs/<run>/events.jsonl,
// one JSON object per line starting with "ts" (RFC 3339, nanoseconds) and
// "event". It is safe for concurrent use.
type EventLog struct {
	mu    sync.Mutex
	f     *os.File
	clock func() time.Time
}

// OpenEvents opens (creating or appending to) the run's event log. clock
// stamps each event; nil means time.Now.
func (s *Store) OpenEvents(runID string, clock func() time.Time) (*EventLog, error) {
	path := s.EventsPath(runID)
	f, err := OpenAppend(path)
	if err != nil {
		return nil, fmt.Errorf("open events: %w", err)
	}
	if clock == nil {
		clock = time.Now
	}
	return &EventLog{f: f, clock: clock}, nil
}

// Record writes one event: its keys may not be "ts" and "event", which
// the log stamps; the line is redacted.
func (e *EventLog) Record(ev record.Event) error { return e.RecordAt(time.Time{}, ev) }

// RecordAt is Record with the time the event happened (zero: the log's
// clock now).
func (e *EventLog) RecordAt(at time.Time, ev record.Event) error {
	name := ev.EventName()
	fields, err := recordFields(ev)
	if err != nil {
		return fmt.Errorf("append event %s: %w", name, err)
	}
	for _, k := range []string{"ts", "event"} {
		if _, ok := fields[k]; ok {
			return fmt.Errorf("append event %s: field %q is reserved", name, k)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return fmt.Errorf("append event %s: %w", name, fs.ErrClosed)
	}
	if at.IsZero() {
		at = e.clock()
	}
	line, err := encodeRaw(at, name, fields)
	if err != nil {
		return fmt.Errorf("append event %s: %w", name, err)
	}
	if _, err := e.f.Write(secrets.Default().JSON(line)); err != nil {
		return fmt.Errorf("append event %s: %w", name, err)
	}
	return nil
}

// EncodeEvent is ev as a line of events.jsonl at at, redacted: what
// RecordAt writes.
func EncodeEvent(at time.Time, ev record.Event) ([]byte, error) {
	fields, err := recordFields(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.EventName(), err)
	}
	line, err := encodeRaw(at, ev.EventName(), fields)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.EventName(), err)
	}
	return secrets.Default().JSON(line), nil
}

// recordFields is ev's keys, each with its JSON.
func recordFields(ev record.Event) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// encodeRaw writes ts and event first, then the fields in key order, so
// the log reads well with plain tools; a fractional number among them is
// rounded (Clean): no 0.27780000000000005 in the log.
func encodeRaw(ts time.Time, event string, fields map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"ts":`)
	tsJSON, _ := json.Marshal(ts.Format(time.RFC3339Nano))
	b.Write(tsJSON)
	b.WriteString(`,"event":`)
	evJSON, err := json.Marshal(event)
	if err != nil {
		return nil, err
	}
	b.Write(evJSON)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		kJSON, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		v := fields[k]
		if bytes.ContainsAny(v, ".eE") && !bytes.HasPrefix(v, []byte(`"`)) && !bytes.ContainsAny(v, "{[") {
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				if v, err = json.Marshal(Clean(f)); err != nil {
					return nil, fmt.Errorf("field %s: %w", k, err)
				}
			}
		}
		b.WriteByte(',')
		b.Write(kJSON)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// Close flushes the log to disk and closes it. Closing twice is a no-op.
func (e *EventLog) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return nil
	}
	f := e.f
	e.f = nil
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("close events: %w", err)
	}
	return nil
}

// ReadLog reads an events.jsonl file, each line for record.As. A torn
// last line (a crash mid-write) is dropped; a bad line elsewhere is an
// error naming the file and line.
func ReadLog(path string) ([]record.Line, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	var out []record.Line
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		l, err := record.Parse(line)
		if err != nil {
			if i == len(lines)-1 { // no trailing newline: unfinished write
				break
			}
			return nil, fmt.Errorf("read events %s:%d: %w", path, i+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}
