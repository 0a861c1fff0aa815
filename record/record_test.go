package record

import (
	"encoding/json"
	"testing"
)

// A line reads back as its type by name, its phase and session whatever
// the event; a key of another type (a user's tool wrote the line) is no
// phase, not a bad line.
func TestParseAs(t *testing.T) {
	tests := []struct {
		line    string
		phase   string
		session int // -1: none
		ended   bool
	}{
		{`{"ts":"2026-11-27T17:00:00Z","event":"session_ended","phase":"1","session":2,"outcome":"stopped","tokens":597500}`, "1", 2, true},
		{`{"ts":"2026-11-27T17:00:00Z","event":"commit","phase":"2","commit":"abc","files":3}`, "2", -1, false},
		{`{"event":"session_ended","phase":7,"session":"x"}`, "", -1, false}, // does not fit SessionEnded
	}
	for _, tt := range tests {
		l, err := Parse([]byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		if l.Phase != tt.phase || (l.Session == nil) != (tt.session < 0) || (l.Session != nil && *l.Session != tt.session) {
			t.Errorf("%s: phase %q session %v", tt.line, l.Phase, l.Session)
		}
		ev, ok := As[SessionEnded](l)
		if ok != tt.ended {
			t.Errorf("%s: As[SessionEnded] %v", tt.line, ok)
		}
		if ok && ev.Tokens != 597500 {
			t.Errorf("%s: tokens %d", tt.line, ev.Tokens)
		}
		if _, ok := As[Commit](l); ok != (l.Event == "commit") {
			t.Errorf("%s: As[Commit] %v", tt.line, ok)
		}
	}
}

// in_flight is a count, or the ids of the tools a drain timed out on.
func TestInFlight(t *testing.T) {
	for _, tt := range []struct {
		f    InFlight
		json string
	}{{InFlight{N: 2}, `2`}, {InFlight{N: 2, IDs: []string{"a", "b"}}, `["a","b"]`}, {InFlight{}, `0`}} {
		data, err := json.Marshal(tt.f)
		if err != nil || string(data) != tt.json {
			t.Errorf("%+v: %s, %v; want %s", tt.f, data, err, tt.json)
		}
		var back InFlight
		if err := json.Unmarshal(data, &back); err != nil || back.N != tt.f.N || len(back.IDs) != len(tt.f.IDs) {
			t.Errorf("%s read back as %+v, %v", data, back, err)
		}
	}
}
