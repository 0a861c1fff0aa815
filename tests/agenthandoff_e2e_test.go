package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The agent, told near the threshold that it may, finishes its task,
// writes its handoff and runs `debussy handoff`: the session ends cleanly
// after that call (no further request), the work is committed, and the
// next session starts from the handoff, counted as a restart.
func TestAgentHandoff(t *testing.T) {
	claudetest.CLISensitive(t, "the handoff command read from the session and no request after it")
	// The session after the handoff is replayPhase's fresh one: done.
	h, r := replayPhase(t, fakeapi.Conversation{Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("feature.txt", "the feature\n")),
		// Past the warning point (70 % of 200K): the note comes with
		// this call's result.
		turn(145000, writeHandoff("## Completed\nHANDOFF-MARKER-7d2 feature.txt written")),
		turn(146000, fakeapi.Bash("debussy handoff --phase 1")),
		turn(147000, fakeapi.Text("never asked")),
	}}, shapeModel)
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(sessions))
	}
	// Requests: the prompt, after the feature, after the handoff's write —
	// none after `debussy handoff`.
	s1 := sessions[0]
	if len(s1) != 3 {
		t.Errorf("session 1 made %d requests, want 3 (none after debussy handoff)", len(s1))
	}
	if len(s1) >= 3 && !s1[2].Carries("run `debussy handoff --phase 1`") {
		t.Errorf("the warning does not offer debussy handoff:\n%s", s1[2].Body)
	}
	next := sessions[1][0].FirstUser
	if !strings.Contains(next, "HANDOFF-MARKER-7d2") || !strings.Contains(next, "The agent handed off at a task boundary") {
		t.Errorf("the next session's prompt lacks the handoff or its reason:\n%s", next)
	}
	if !strings.Contains(h.runFiles("phase-1/session-1.jsonl"), "hook_stopped") {
		t.Error("session 1 did not end with terminal_reason hook_stopped")
	}
	events := h.runFiles("events.jsonl")
	for _, e := range []string{`"agent_handoff"`, `"trigger":"agent_handoff"`, `"handoff_written"`} {
		if !strings.Contains(events, e) {
			t.Errorf("events.jsonl lacks %s", e)
		}
	}
	ph := h.status()["phases"].([]any)[0].(map[string]any)
	if ph["status"] != "completed" || ph["restarts"] != float64(1) {
		t.Errorf("phase %v %v restarts; want completed with 1 restart", ph["status"], ph["restarts"])
	}
	if log := h.git("log", "--format=%s", "--name-only"); !strings.Contains(log, "restart 1/") || !strings.Contains(log, "feature.txt") {
		t.Errorf("the work before the handoff is not committed at the restart:\n%s", log)
	}
}
