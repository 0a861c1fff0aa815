package runner

import (
	"strings"
	"testing"
	"time"
)

func hooksOK() input { return ack(initRequestID) }

func hook(ev HookEvent, reqID, toolID string) input {
	return line(Event{Kind: KindHook, Hook: &HookCall{Event: ev, ToolName: "Bash", ToolUseID: toolID, RequestID: reqID}})
}

func answerHook(reqID string, a HookAnswer) input {
	return input{kind: inHookAnswer, reqID: reqID, answer: a}
}

func TestStopMachineHooks(t *testing.T) {
	hooks := stopConfig{hooks: true, hookTimeout: 10 * time.Second}
	tests := []struct {
		name     string
		cfg      stopConfig
		steps    []step
		want     []string
		inFlight []string
	}{
		{
			name: "a stop answers the next PostToolUse with continue:false; the response's other tools run",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A", "B")), at(0, stop("context at 80%")),
				at(time.Second, hook(HookPostToolUse, "h1", "A")), at(0, answerHook("h1", HookAnswer{})), at(0, toolResult("A")),
				at(0, hook(HookPreToolUse, "h2", "B")), at(0, answerHook("h2", HookAnswer{})),
				at(time.Second, hook(HookPostToolUse, "h3", "B")), at(0, answerHook("h3", HookAnswer{})), at(0, toolResult("B")),
				at(0, result("success", false)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"0s stop_requested stopped",
				`1s answer h1 {"continue":false,"stopReason":"context at 80%"}`, "1s hook_stop_sent h1",
				"1s answer h2 {}",
				`2s answer h3 {"continue":false,"stopReason":"context at 80%"}`, "2s hook_stop_sent h3",
				"2s result_received", "2s close stdin", "2s stdin_closed",
			}, ending("2s", "finish stopped: context at 80%")...),
		},
		{
			name: "a response the CLI asks for after the stop: its tools are refused, its turn interrupted",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUseIn("m1", "A")), at(0, stop("budget exhausted")),
				at(time.Second, hook(HookPostToolUse, "h1", "A")), at(0, answerHook("h1", HookAnswer{})), at(0, toolResult("A")),
				at(time.Second, toolUseIn("m2", "B")),
				at(0, hook(HookPreToolUse, "h2", "B")), at(0, answerHook("h2", HookAnswer{Allow: "the consumer's"})),
				at(0, ack("req_1"), result("error_during_execution", true)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"0s stop_requested stopped",
				`1s answer h1 {"continue":false,"stopReason":"budget exhausted"}`, "1s hook_stop_sent h1",
				"2s mark hook_stop_ignored", "2s write interrupt req_1",
				"2s interrupt_sent",
				`2s answer h2 {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"debussy stopped this session before this tool: budget exhausted"}}`,
				"2s interrupt_acked", "2s result_received", "2s close stdin", "2s stdin_closed",
			}, ending("2s", "finish stopped: budget exhausted")...),
		},
		{
			name: "a PostToolUse the consumer has not answered yet ends the session at the stop",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(time.Second, hook(HookPostToolUse, "h1", "A")),
				at(time.Second, stop("tool calls")), at(0, answerHook("h1", HookAnswer{Note: "too late"})),
			},
			want: []string{
				"2s stop_requested stopped",
				`2s answer h1 {"continue":false,"stopReason":"tool calls"}`, "2s hook_stop_sent h1",
			},
		},
		{
			name: "the consumer's answers are written as hook output",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")),
				at(0, hook(HookPreToolUse, "h1", "A")), at(0, answerHook("h1", HookAnswer{Deny: "write the handoff first"})),
				at(0, hook(HookPostToolUse, "h2", "A")), at(0, answerHook("h2", HookAnswer{Note: "context at 70%"})),
				at(0, hook(HookStop, "h3", "")), at(0, answerHook("h3", HookAnswer{Block: "run debussy done"})),
				at(0, hook(HookPreCompact, "h4", "")), at(0, answerHook("h4", HookAnswer{Block: "no"})),
			},
			want: []string{
				`0s answer h1 {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"write the handoff first"}}`,
				`0s answer h2 {"hookSpecificOutput":{"additionalContext":"context at 70%","hookEventName":"PostToolUse"}}`,
				`0s answer h3 {"decision":"block","reason":"run debussy done"}`,
				`0s answer h4 {"decision":"block","reason":"no"}`,
			},
		},
		{
			name: "a consumer's StopReason is a RequestStop with that reason",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(time.Second, hook(HookPostToolUse, "h1", "A")),
				at(0, answerHook("h1", HookAnswer{Note: "bye", StopReason: "handoff written"})),
				at(0, stop("ignored: already stopping")),
				at(time.Second, result("success", false)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				`1s answer h1 {"continue":false,"hookSpecificOutput":{"additionalContext":"bye","hookEventName":"PostToolUse"},"stopReason":"handoff written"}`,
				"1s stop_requested stopped", "1s hook_stop_sent h1",
				"2s result_received", "2s close stdin", "2s stdin_closed",
			}, ending("2s", "finish stopped: handoff written")...),
		},
		{
			name: "a StopReason on another hook stops at the next PostToolUse",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(0, hook(HookPreToolUse, "h1", "A")),
				at(0, answerHook("h1", HookAnswer{StopReason: "emergency"})), at(time.Second, hook(HookPostToolUse, "h2", "A")),
				at(0, answerHook("h2", HookAnswer{})),
			},
			want: []string{
				"0s answer h1 {}", "0s stop_requested stopped",
				`1s answer h2 {"continue":false,"stopReason":"emergency"}`, "1s hook_stop_sent h2",
			},
		},
		{
			name: "no PostToolUse within StopGrace (a long text answer): the interrupt",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), assistantText()), at(time.Second, stop("context at 80%")), timer(),
				at(0, ack("req_1"), result("error_during_execution", true)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested stopped",
				"31s tool_drained timed_out=false", "31s write interrupt req_1", "31s interrupt_sent",
				"31s interrupt_acked", "31s result_received", "31s close stdin", "31s stdin_closed",
			}, ending("31s", "finish stopped: context at 80%")...),
		},
		{
			name: "a text-only turn ends with its result: no interrupt",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), assistantText()), at(time.Second, stop("context at 80%")),
				at(time.Second, result("success", false)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested stopped", "2s result_received", "2s close stdin", "2s stdin_closed",
			}, ending("2s", "finish stopped: context at 80%")...),
		},
		{
			name: "a hung tool after the hook stop: the interrupt after StopGrace",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A", "B")), at(0, stop("context at 80%")),
				at(time.Second, hook(HookPostToolUse, "h1", "A")), at(0, answerHook("h1", HookAnswer{})), at(0, toolResult("A")), timer(),
			},
			want: []string{
				"0s stop_requested stopped",
				`1s answer h1 {"continue":false,"stopReason":"context at 80%"}`, "1s hook_stop_sent h1",
				"31s tool_drained timed_out=true", "31s write interrupt req_1", "31s interrupt_sent",
			},
		},
		{
			name: "an unanswered hook gets the default after HookTimeout; a late answer is dropped",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(0, hook(HookPreToolUse, "h1", "A")), timer(),
				at(time.Second, answerHook("h1", HookAnswer{Deny: "late"})),
				at(0, hook(HookPreCompact, "h2", "")), timer(),
			},
			want: []string{
				"10s hook_slow PreToolUse h1", "10s warn hook call not answered in time: default answer sent", "10s answer h1 {}",
				"21s hook_slow PreCompact h2", "21s warn hook call not answered in time: default answer sent",
				`21s answer h2 {"decision":"block","reason":"` + compactBlockReason + `"}`,
			},
		},
		{
			name: "the idle clock stops while a hook call waits for the consumer",
			cfg:  stopConfig{hooks: true, hookTimeout: 10 * time.Second, idleTimeout: 3 * time.Second},
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(time.Second, hook(HookPreToolUse, "h1", "A")),
				at(5*time.Second, answerHook("h1", HookAnswer{})), timer(),
			},
			want: []string{
				"6s answer h1 {}",
				"9s idle_timeout", "9s close stdin", "9s stdin_closed", "9s close stdin now", "9s sigint",
			},
			inFlight: []string{"A"},
		},
		{
			name:  "AllowCompact: the default PreCompact answer lets the CLI compact",
			cfg:   stopConfig{hooks: true, hookTimeout: time.Second, allowCompact: true},
			steps: []step{at(0, hooksOK(), hook(HookPreCompact, "h1", "")), timer()},
			want: []string{
				"1s hook_slow PreCompact h1", "1s warn hook call not answered in time: default answer sent", "1s answer h1 {}",
			},
		},
		{
			name: "init not answered yet: a stop takes the interrupt path",
			cfg:  hooks,
			steps: []step{
				at(0, toolUse("A"), toolResult("A")), at(time.Second, stop("context at 81%")),
			},
			want: []string{"1s stop_requested stopped", "1s write interrupt req_1", "1s interrupt_sent"},
		},
		{
			name: "init refused: warned, and a stop takes the interrupt path",
			cfg:  hooks,
			steps: []step{
				at(0, line(Event{Kind: KindControlResponse, Control: &ControlResponse{RequestID: initRequestID, Subtype: "error", Error: "no"}})),
				at(0, toolUse("A"), toolResult("A")), at(time.Second, stop("context at 81%")),
			},
			want: []string{
				"0s warn claude refused the hook callbacks: stops use the interrupt",
				"1s stop_requested stopped", "1s write interrupt req_1", "1s interrupt_sent",
			},
		},
		{
			name: "Ctrl-C drains as before, and a PostToolUse meanwhile ends the turn cleanly",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(time.Second, cancel),
				at(time.Second, hook(HookPostToolUse, "h1", "A")), at(0, answerHook("h1", HookAnswer{})), at(0, toolResult("A")),
				at(0, result("success", false)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested cancelled",
				`2s answer h1 {"continue":false,"stopReason":"cancelled"}`, "2s hook_stop_sent h1",
				"2s result_received", "2s close stdin", "2s stdin_closed",
			}, ending("2s", "finish cancelled: cancelled")...),
		},
		{
			name: "pending hooks are answered before an interrupt",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), toolUse("A")), at(0, hook(HookPreToolUse, "h1", "A")),
				at(0, toolResult("A")), at(time.Second, cancel),
			},
			want: []string{"1s stop_requested cancelled", "1s answer h1 {}", "1s write interrupt req_1", "1s interrupt_sent"},
		},
		{
			name: "a control request the runner does not serve is refused",
			cfg:  hooks,
			steps: []step{
				at(0, line(Event{Kind: KindUnknown, Type: "control_request", Subtype: "", ControlRequestID: "r9"})),
			},
			want: []string{
				"0s answer r9 error: unsupported control request ",
				"0s warn claude sent a control request the runner does not serve",
			},
		},
		{
			name: "a hook call after stdin was closed is not answered",
			cfg:  hooks,
			steps: []step{
				at(0, hooksOK(), result("success", false)), at(0, hook(HookStop, "h1", "")),
			},
			want: []string{"0s close stdin", "0s stdin_closed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace, out, _ := run(t, tt.cfg, tt.steps)
			if strings.Join(trace, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("trace:\n%s\nwant:\n%s", strings.Join(trace, "\n"), strings.Join(tt.want, "\n"))
			}
			if out != nil {
				var ids []string
				for _, tu := range out.InFlightAtStop {
					ids = append(ids, tu.ID)
				}
				if strings.Join(ids, ",") != strings.Join(tt.inFlight, ",") {
					t.Errorf("InFlightAtStop = %v, want %v", ids, tt.inFlight)
				}
			}
		})
	}
}

func TestParseHookCallback(t *testing.T) {
	big := strings.Repeat("x", MaxTextBytes+10)
	tests := []struct {
		name string
		line string
		want *HookCall
		kind Kind
	}{
		{
			name: "PostToolUse with an object tool_response",
			line: `{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback","callback_id":"post","input":{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\nb","stderr":""},"duration_ms":3}}}`,
			want: &HookCall{Event: HookPostToolUse, ToolName: "Bash", ToolUseID: "toolu_1", ToolInput: []byte(`{"command":"ls"}`),
				ToolResponse: `{"stdout":"a\nb","stderr":""}`, RequestID: "r1"},
			kind: KindHook,
		},
		{
			name: "a string tool_response is its text, bounded",
			line: `{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback","callback_id":"post","input":{"hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"` + big + `"}}}`,
			want: &HookCall{Event: HookPostToolUse, ToolName: "Read", ToolResponse: big[:MaxTextBytes], RequestID: "r2"},
			kind: KindHook,
		},
		{
			name: "Stop without hook_event_name: the callback id names it",
			line: `{"type":"control_request","request_id":"r3","request":{"subtype":"hook_callback","callback_id":"stop","input":{"stop_hook_active":true}}}`,
			want: &HookCall{Event: HookStop, StopHookActive: true, RequestID: "r3"},
			kind: KindHook,
		},
		{
			name: "PreCompact",
			line: `{"type":"control_request","request_id":"r4","request":{"subtype":"hook_callback","callback_id":"compact","input":{"hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}}}`,
			want: &HookCall{Event: HookPreCompact, Trigger: "auto", RequestID: "r4"},
			kind: KindHook,
		},
		{
			name: "another control request is no hook, but keeps its id to be refused",
			line: `{"type":"control_request","request_id":"r5","request":{"subtype":"can_use_tool","tool_name":"Bash"}}`,
			kind: KindUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != tt.kind || ev.ControlRequestID == "" {
				t.Fatalf("kind %s, request id %q", ev.Kind, ev.ControlRequestID)
			}
			if tt.kind != KindHook {
				if ev.Hook != nil {
					t.Errorf("Hook = %+v", ev.Hook)
				}
				return
			}
			h := ev.Hook
			if h.Event != tt.want.Event || h.ToolName != tt.want.ToolName || h.ToolUseID != tt.want.ToolUseID ||
				string(h.ToolInput) != string(tt.want.ToolInput) || h.ToolResponse != tt.want.ToolResponse ||
				h.StopHookActive != tt.want.StopHookActive || h.Trigger != tt.want.Trigger || h.RequestID != tt.want.RequestID {
				t.Errorf("got %+v\nwant %+v", h, tt.want)
			}
			h.Answer(HookAnswer{}) // without a session: a no-op, never a panic
		})
	}
}
