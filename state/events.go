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
	"sync"
	"time"

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

// Append writes one event. fields may not use the keys "ts" and "event".
func (e *EventLog) Append(event string, fields map[string]any) error {
	for _, k := range []string{"ts", "event"} {
		if _, ok := fields[k]; ok {
			return fmt.Errorf("append event %s: field %q is reserved", event, k)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.f == nil {
		return fmt.Errorf("append event %s: %w", event, fs.ErrClosed)
	}
	line, err := encodeEvent(e.clock(), event, fields)
	if err != nil {
		return fmt.Errorf("append event %s: %w", event, err)
	}
	line = secrets.Default().JSON(line)
	if _, err := e.f.Write(line); err != nil {
		return fmt.Errorf("append event %s: %w", event, err)
	}
	return nil
}

// encodeEvent writes ts and event first, then the fields in key order, so
// the log reads well with plain tools.
func encodeEvent(ts time.Time, event string, fields map[string]any) ([]byte, error) {
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
		if f, ok := v.(float64); ok {
			v = Clean(f) // no 0.27780000000000005 in the log
		}
		vJSON, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		b.WriteByte(',')
		b.Write(kJSON)
		b.WriteByte(':')
		b.Write(vJSON)
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

// ReadEvents reads an events.jsonl file. A torn last line (a crash mid-write)
// is dropped; a bad line elsewhere is an error naming the file and line.
func ReadEvents(path string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	var out []map[string]any
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			if i == len(lines)-1 { // no trailing newline: unfinished write
				break
			}
			return nil, fmt.Errorf("read events %s:%d: %w", path, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}
