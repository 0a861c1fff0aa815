package session

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// An effect's typed fields reach events.jsonl as the map the policy used
// to hand over did: the same keys, zeros included, and the same numbers (a
// percent's float rounded as before, tokens beyond a float's 2^53 exact),
// written typed (EventLog.Record) or through the transitional map
// (Record.Fields, record.Map) orchestrator writes today.
func TestFieldsMap(t *testing.T) {
	s, i, i64, f, b := "", 0, int64(9_007_199_254_740_993), 80.12345678901234567, false
	tests := []struct {
		name   string
		fields policy.Fields
		old    map[string]any // what the policy's map held
	}{
		{"zeros", policy.Fields{Tool: &s, ToolUseID: &s, Why: "budget"}, map[string]any{"tool": "", "tool_use_id": "", "why": "budget"}},
		{"flag", policy.Fields{StopPending: &b}, map[string]any{"stop_pending": false}},
		{"counts", policy.Fields{Zone: "red", ToolCalls: &i, LargeReads: &i, Delegations: &i},
			map[string]any{"zone": "red", "tool_calls": 0, "large_reads": 0, "delegations": 0}},
		{"numbers", policy.Fields{Tokens: &i64, Percent: &f}, map[string]any{"tokens": i64, "percent": f}},
		{"none", policy.Fields{}, map[string]any{}},
	}
	clock := func() time.Time { return time.Unix(0, 0).UTC() }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := record.Policy{Name: "e", Session: record.Session{Phase: "1", Session: 2}, Fields: tt.fields}
			m, err := record.Map(ev)
			if err != nil {
				t.Fatal(err)
			}
			tt.old["phase"], tt.old["session"] = "1", 2
			store := state.New(t.TempDir())
			log, err := store.OpenEvents("r", clock)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []map[string]any{tt.old, m} {
				if err := log.Append("e", f); err != nil {
					t.Fatal(err)
				}
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
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if len(lines) != 3 || lines[0] != lines[1] || lines[0] != lines[2] {
				t.Fatalf("events\n%s", data)
			}
		})
	}
}
