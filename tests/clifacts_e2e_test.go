package tests

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The CLI's default model with default settings: a first response at 300K
// runs on when claude says its window is 1M (2.1.330's default is a model
// no table of debussy's knows), the first answer's breakdown is recorded,
// and the session's cost equals claude's own within 1 %.
func TestCLIWindowAndCost(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's default model, window and cost")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(300_000, fakeapi.Text("Writing a.txt."), fakeapi.Write("a.txt", "alpha\n")),
			turn(301_000, done("1")),
			turn(302_000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("%d sessions, want 1 (no restart at 300K of 1M)", n)
	}
	var breakdowns, ended []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(h.runFiles("events.jsonl")), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		switch ev["event"] {
		case "context_breakdown":
			breakdowns = append(breakdowns, ev)
		case "session_ended":
			ended = append(ended, ev)
		}
	}
	if len(breakdowns) != 1 || breakdowns[0]["window"] != float64(1_000_000) {
		t.Fatalf("context_breakdown events %v", breakdowns)
	}
	if cats, _ := breakdowns[0]["categories"].([]any); len(cats) < 3 {
		t.Errorf("categories %v", breakdowns[0]["categories"])
	}
	for _, ev := range ended {
		cost, _ := ev["cost_usd"].(float64)
		reported, _ := ev["reported_cost_usd"].(float64)
		if reported == 0 || math.Abs(cost-reported) > 0.01*reported {
			t.Errorf("session cost %v, claude's %v: more than 1 %% apart", cost, reported)
		}
	}
}
