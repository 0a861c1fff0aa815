package runner

import (
	"strings"
	"testing"
	"time"
)

// A hook call the CLI withdraws (control_cancel_request, 2.1.306+) is
// dropped: the consumer's late answer is not written, the runner's
// timeout sends no default, and the call counts in no latency.
func TestStopMachineHookCancelled(t *testing.T) {
	cancel := line(Event{Kind: KindControlCancel, ControlRequestID: "h1"})
	trace, _, m := run(t, stopConfig{hooks: true, hookTimeout: 10 * time.Second}, []step{
		at(0, hooksOK(), toolUse("A")),
		at(time.Second, hook(HookPreToolUse, "h1", "A")),
		at(time.Second, cancel),
		at(time.Second, answerHook("h1", HookAnswer{Deny: "late"})),
		at(20*time.Second, hook(HookPostToolUse, "h2", "A")), at(0, answerHook("h2", HookAnswer{})),
	})
	joined := strings.Join(trace, "\n")
	if strings.Contains(joined, "answer h1") || strings.Contains(joined, "hook_slow") {
		t.Errorf("a withdrawn call was answered:\n%s", joined)
	}
	if !strings.Contains(joined, "2s mark hook_cancelled") || !strings.Contains(joined, "answer h2") {
		t.Errorf("trace:\n%s", joined)
	}
	if l := latencies(m.hookWaits); l[HookPreToolUse].N != 0 || l[HookPostToolUse].N != 1 {
		t.Errorf("latencies %v: the withdrawn call was counted", l)
	}
}

// Only the session's own result ends its turn: a subagent's (its
// parent_tool_use_id set, or another session id) does not.
func TestStopMachineOwnResultOnly(t *testing.T) {
	initLine := line(Event{Kind: KindInit, Init: &Init{SessionID: "main"}})
	sub := line(Event{Kind: KindSubagentResult, Result: &Result{Subtype: "success", ParentToolUseID: "task1"}})
	other := line(Event{Kind: KindResult, Result: &Result{Subtype: "success", SessionID: "another"}})
	trace, _, _ := run(t, stopConfig{hooks: true}, []step{
		at(0, hooksOK(), initLine, toolUse("A")), at(0, stop("context")),
		at(time.Second, sub), at(time.Second, other),
	})
	if joined := strings.Join(trace, "\n"); strings.Contains(joined, "result_received") || strings.Contains(joined, "close stdin") {
		t.Errorf("another session's result taken for this one's end:\n%s", joined)
	}
}

func TestParseControlCancelAndSubagentResult(t *testing.T) {
	ev, err := Parse([]byte(`{"type":"control_cancel_request","request_id":"req_7"}`))
	if err != nil || ev.Kind != KindControlCancel || ev.ControlRequestID != "req_7" {
		t.Errorf("control_cancel_request: %+v, %v", ev, err)
	}
	ev, err = Parse([]byte(`{"type":"result","subtype":"success","parent_tool_use_id":"toolu_1","session_id":"s"}`))
	if err != nil || ev.Kind != KindSubagentResult || ev.Result == nil || ev.Result.ParentToolUseID != "toolu_1" {
		t.Errorf("subagent result: %+v, %v", ev, err)
	}
	ev, _ = Parse([]byte(`{"type":"result","subtype":"success","parent_tool_use_id":null,"session_id":"s"}`))
	if ev.Kind != KindResult {
		t.Errorf("main result: %v", ev.Kind)
	}
}
