package session

import (
	"os"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// An effect's typed fields reach events.jsonl as the map the policy used
// to hand over did (each want is what that map wrote): the same keys,
// zeros included, and the same numbers (a percent's float rounded as
// before, tokens beyond a float's 2^53 exact).
func TestFieldsMap(t *testing.T) {
	s, i, i64, f, b := "", 0, int64(9_007_199_254_740_993), 80.12345678901234567, false
	tests := []struct {
		name   string
		fields policy.Fields
		want   string
	}{
		{"zeros", policy.Fields{Tool: &s, ToolUseID: &s, Why: "budget"},
			`{"ts":"1970-01-01T00:00:00Z","event":"e","phase":"1","session":2,"tool":"","tool_use_id":"","why":"budget"}`},
		{"flag", policy.Fields{StopPending: &b}, `{"ts":"1970-01-01T00:00:00Z","event":"e","phase":"1","session":2,"stop_pending":false}`},
		{"counts", policy.Fields{Zone: "red", ToolCalls: &i, LargeReads: &i, Delegations: &i},
			`{"ts":"1970-01-01T00:00:00Z","event":"e","delegations":0,"large_reads":0,"phase":"1","session":2,"tool_calls":0,"zone":"red"}`},
		{"numbers", policy.Fields{Tokens: &i64, Percent: &f},
			`{"ts":"1970-01-01T00:00:00Z","event":"e","percent":80.123456789,"phase":"1","session":2,"tokens":9007199254740993}`},
		{"none", policy.Fields{}, `{"ts":"1970-01-01T00:00:00Z","event":"e","phase":"1","session":2}`},
	}
	clock := func() time.Time { return time.Unix(0, 0).UTC() }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := record.Policy{Name: "e", Session: record.Session{Phase: "1", Session: 2}, Fields: tt.fields}
			store := state.New(t.TempDir())
			log, err := store.OpenEvents("r", clock)
			if err != nil {
				t.Fatal(err)
			}
			if err := log.Record(ev); err != nil {
				t.Fatal(err)
			}
			if err := log.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(store.EventsPath("r"))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(data); got != tt.want+"\n" {
				t.Errorf("events\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
