package orchestrator

import (
	"strings"
	"testing"
)

// The first get_context_usage answer of each session is recorded as
// context_breakdown; a refused request is logged and the session runs on.
func TestContextBreakdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ctx     string
		want    bool // a context_breakdown per session
		logSays string
	}{
		{"answered", "ctx claude-sonnet-4-6 200000 33000", true, "by=\"MCP tools 40K, System tools 19.2K"},
		{"refused", "ctx refuse", false, "claude did not report its context window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {{tt.ctx, "usage 30000", "write a.txt", "usage 35000", "done", "result"}}})
			if err := f.run(t.Context()); err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			var got []map[string]any
			for _, ev := range f.eventRecords() {
				if ev["event"] == "context_breakdown" {
					got = append(got, ev)
				}
			}
			if !tt.want {
				if len(got) != 0 {
					t.Errorf("context_breakdown %v", got)
				}
			} else {
				if len(got) != 1 {
					t.Fatalf("%d context_breakdown events", len(got))
				}
				ev := got[0]
				cats, _ := ev["categories"].([]any)
				if ev["model"] != "claude-sonnet-4-6" || ev["window"] != float64(200_000) || ev["compact_at"] != float64(167_000) || len(cats) != 6 {
					t.Errorf("context_breakdown %v", ev)
				}
				if c, _ := cats[2].(map[string]any); c["name"] != "MCP tools" || c["tokens"] != float64(40_000) {
					t.Errorf("category %v", cats[2])
				}
			}
			if !strings.Contains(f.log.String(), tt.logSays) {
				t.Errorf("log does not say %q:\n%s", tt.logSays, f.log)
			}
		})
	}
}

// The run asks once per CLI version and model: a restarted session starts
// from the first session's answer (its breakdown recorded as reused) and
// writes no get_context_usage request; an answer about another model than
// init's (a fallback) is not reused.
func TestContextAnswerReused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ctx    string
		reused bool
	}{
		{"the same CLI and model", "ctx claude-sonnet-4-5 200000 0", true},
		{"an answer about another model", "ctx claude-sonnet-4-6 200000 33000", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {{tt.ctx, "write a.txt", "usage 60000"}, {tt.ctx, "write b.txt", "done", "result"}}})
			if err := f.run(t.Context()); err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			var got []map[string]any
			for _, ev := range f.eventRecords() {
				if ev["event"] == "context_breakdown" {
					got = append(got, ev)
				}
			}
			if len(got) != 2 || got[0]["reused"] != nil || (got[1]["reused"] == true) != tt.reused {
				t.Fatalf("context_breakdown events %v, want 2, the second reused: %v", got, tt.reused)
			}
			asked := strings.Contains(f.readFile(".debussy/runs/"+f.lastRun().ID+"/phase-1/session-2.jsonl"), `"request_id":"ctx_`)
			if asked == tt.reused {
				t.Errorf("session 2 asked get_context_usage: %v, want %v", asked, !tt.reused)
			}
		})
	}
}
