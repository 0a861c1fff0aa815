package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// A strict budget spent on a terminal is put to the user; a yes extends it
// by its amount and the phase goes on in a new session from a checkpoint,
// to completion. The whole path with the real CLI: the question, the
// account's extension (spend.Extension), the resumed session.
func TestBudgetExtendedOnTerminal(t *testing.T) {
	claudetest.OncePerSuite(t, "a budget extended on a terminal")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "spend", Match: phaseMatch("1"), Turns: climb()},
		{Name: "extended", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(5000, done("1")), turn(5000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Spend"}},
		"model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n  max_extensions: 1\n")
	out, err := h.onTerminal(t, map[string]string{"Extend the phase budget by tokens 100K": "y\r"}, "run", "plan/MASTER_PLAN.md")
	if err != nil {
		t.Fatalf("debussy run on a terminal: %v", err)
	}
	if !strings.Contains(stripANSI(out), "budget extended by the user") {
		t.Error("the log does not say the budget was extended")
	}
	if sessions := h.requestsOf(phaseMatch("1")); len(sessions) != 2 {
		t.Errorf("phase 1 ran %d sessions, want 2 (the extension's fresh one)", len(sessions))
	}
	ext := h.events("budget_extension")
	if len(ext) != 1 || ext[0]["granted"] != true || ext[0]["scope"] != "phase" {
		t.Errorf("budget_extension events %v", ext)
	}
	st := h.status()
	p1 := st["phases"].([]any)[0].(map[string]any)
	e := phaseEconomics(t, st, 0)
	limits, _ := e["limits"].(map[string]any)
	if p1["status"] != "completed" || e["extensions"] != float64(1) || limits["tokens"] != float64(200000) {
		t.Errorf("phase 1 %v, economics %v", p1["status"], e)
	}
}
