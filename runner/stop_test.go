package runner

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// The stop machine without a process: inputs at fake times, the actions it
// answers with as a trace "<time> <what>".

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// step is what happens at one moment: after a delay, or when the machine's
// own next deadline comes (as the session's timer would fire).
type step struct {
	after time.Duration // since the previous step
	timer bool          // at m.next() instead
	in    []input
}

func at(d time.Duration, in ...input) step { return step{after: d, in: in} }
func timer() step                          { return step{timer: true} }

func line(ev Event) input { return input{kind: inLine, event: &ev} }

func toolUse(ids ...string) input { return toolUseIn("msg", ids...) }

// toolUseIn is a main-thread assistant line of response msg asking for ids.
func toolUseIn(msg string, ids ...string) input {
	a := &Assistant{MessageID: msg}
	for _, id := range ids {
		a.ToolUses = append(a.ToolUses, ToolUse{ID: id, Name: "Bash"})
	}
	return line(Event{Kind: KindAssistant, Assistant: a})
}

func assistantText() input {
	return line(Event{Kind: KindAssistant, Assistant: &Assistant{MessageID: "msg", Text: "hm"}})
}

func subagentToolUse(id string) input {
	return line(Event{Kind: KindAssistant, Assistant: &Assistant{ParentToolUseID: "task", ToolUses: []ToolUse{{ID: id}}}})
}

func toolResult(id string) input {
	return line(Event{Kind: KindToolResult, ToolResults: []ToolResult{{ToolUseID: id}}})
}

func ack(id string) input {
	return line(Event{Kind: KindControlResponse, Control: &ControlResponse{RequestID: id, Subtype: "success"}})
}

func result(subtype string, isError bool) input {
	return line(Event{Kind: KindResult, Result: &Result{Subtype: subtype, IsError: isError}})
}

func notJSON() input           { return input{kind: inLine} }
func stop(reason string) input { return input{kind: inStop, reason: reason} }
func send(msg string) input    { return input{kind: inSend, msg: msg} }
func exitCode(code int) input  { return exitWith(code, fmt.Sprintf("exited with code %d", code)) }
func exitSignalled() input     { return exitWith(-1, "was killed by killed") }
func exitWith(c int, s string) input {
	return input{kind: inExit, exit: exitFacts{code: c, status: s}}
}

// gone is what follows an exit: both readers at EOF, the group empty.
var gone = []input{{kind: inStdoutEOF}, {kind: inStderrEOF}, {kind: inGroupGone}}

func exitAndGone(exit input) []input { return append([]input{exit}, gone...) }

var (
	cancel = input{kind: inCancel}
	kill   = input{kind: inKill}
)

// run feeds steps to a machine and returns the trace and the outcome.
func run(t *testing.T, cfg stopConfig, steps []step) ([]string, *Outcome, *machine) {
	t.Helper()
	cfg.started = t0
	if cfg.stopGrace == 0 {
		cfg.stopGrace = 30 * time.Second
	}
	if cfg.killGrace == 0 {
		cfg.killGrace = 3 * time.Second
	}
	m := newMachine(cfg)
	now := t0
	var trace []string
	var out *Outcome
	for k, st := range steps {
		if st.timer {
			next, ok := m.next()
			if !ok {
				t.Fatalf("step %d: the machine has no deadline; trace so far:\n%s", k, strings.Join(trace, "\n"))
			}
			now = next
		} else {
			now = now.Add(st.after)
		}
		ins := slices.Clone(st.in)
		for i := range ins {
			if ins[i].kind == inLine {
				ins[i].at = now
			}
			if ins[i].kind == inExit {
				ins[i].exit.at, ins[i].exit.groupKilledAt = now, now
			}
		}
		for _, a := range m.step(now, ins...) {
			if s := describe(a); s != "" {
				trace = append(trace, fmt.Sprintf("%s %s", now.Sub(t0), s))
			}
			if a.kind == actFinish {
				o := a.outcome
				out = &o
			}
		}
	}
	return trace, out, m
}

func describe(a action) string {
	switch a.kind {
	case actWrite:
		s := strings.TrimSpace(string(a.data))
		switch {
		case strings.Contains(s, `"interrupt"`):
			return "write interrupt " + strings.Split(s, `"`)[7]
		case a.forSend:
			return "write follow-up"
		case strings.Contains(s, `"control_response"`):
			var w struct {
				Response struct {
					Subtype   string          `json:"subtype"`
					RequestID string          `json:"request_id"`
					Response  json.RawMessage `json:"response"`
					Error     string          `json:"error"`
				} `json:"response"`
			}
			if err := json.Unmarshal(a.data, &w); err != nil {
				return "write bad control_response " + s
			}
			if w.Response.Subtype != "success" {
				return fmt.Sprintf("answer %s %s: %s", w.Response.RequestID, w.Response.Subtype, w.Response.Error)
			}
			return fmt.Sprintf("answer %s %s", w.Response.RequestID, w.Response.Response)
		}
		return "write " + s
	case actCloseStdin:
		return "close stdin"
	case actCloseStdinNow:
		return "close stdin now"
	case actSignal:
		if by := a.fields.By; by != nil {
			return fmt.Sprintf("%s by %s", a.mark, *by)
		}
		return string(a.mark)
	case actReplySend:
		return fmt.Sprintf("reply %v", a.err)
	case actMark:
		f := a.fields
		switch a.mark {
		case MarkToolDrained:
			return fmt.Sprintf("tool_drained timed_out=%v", *f.TimedOut)
		case MarkStopRequested:
			return fmt.Sprintf("stop_requested %s", *f.Kind)
		case MarkExited, MarkGroupKilled, MarkResultReceived, MarkInterruptAcked, MarkFollowUpSent, MarkStdinClosed, MarkInterruptSent, MarkIdleTimeout:
			return string(a.mark)
		case MarkHookStopSent:
			return fmt.Sprintf("hook_stop_sent %s", *f.RequestID)
		case MarkHookSlow:
			return fmt.Sprintf("hook_slow %s %s", *f.Hook, *f.RequestID)
		}
		return "mark " + string(a.mark)
	case actReadDeadline:
		return "read deadline"
	case actLog:
		if a.level < slog.LevelWarn {
			return ""
		}
		return "warn " + a.name
	case actFinish:
		if a.outcome.Reason == "" {
			return "finish " + string(a.outcome.Kind)
		}
		return fmt.Sprintf("finish %s: %s", a.outcome.Kind, a.outcome.Reason)
	}
	return fmt.Sprintf("action %d", a.kind)
}

// ending is the common tail once claude exits: the exit marks, stdin closed
// (again), a read deadline for escapees holding the pipes, then the outcome.
func ending(at, finish string) []string {
	return []string{at + " exited", at + " group_killed", at + " close stdin now", at + " read deadline", at + " " + finish}
}

func TestStopMachine(t *testing.T) {
	tests := []struct {
		name     string
		cfg      stopConfig
		steps    []step
		want     []string
		inFlight []string // Outcome.InFlightAtStop
	}{
		{
			name: "completes on its own",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, toolResult("A")), at(time.Second, result("success", false)),
				at(time.Second, exitAndGone(exitCode(0))...),
			},
			want: append([]string{"2s close stdin", "2s stdin_closed"}, ending("3s", "finish completed")...),
		},
		{
			name: "stop between tools interrupts at once",
			steps: []step{
				at(0, toolUse("A"), toolResult("A")), at(time.Second, stop("context at 81%")),
				at(100*time.Millisecond, ack("req_1")), at(100*time.Millisecond, result("error_during_execution", true)),
				at(100*time.Millisecond, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested stopped", "1s write interrupt req_1", "1s interrupt_sent",
				"1.1s interrupt_acked", "1.2s result_received", "1.2s close stdin", "1.2s stdin_closed",
			}, ending("1.3s", "finish stopped: context at 81%")...),
		},
		{
			name: "stop with a tool in flight drains it, then interrupts",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, stop("tool calls")), at(5*time.Second, toolResult("A")),
				at(0, ack("req_1")), at(0, result("error_during_execution", true)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested stopped",
				"6s tool_drained timed_out=false", "6s write interrupt req_1", "6s interrupt_sent",
				"6s interrupt_acked", "6s result_received", "6s close stdin", "6s stdin_closed",
			}, ending("6s", "finish stopped: tool calls")...),
		},
		{
			name: "a tool that outlasts StopGrace is interrupted and reported",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, stop("tool calls")), timer(),
				at(0, ack("req_1"), result("error_during_execution", true)), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"1s stop_requested stopped",
				"31s tool_drained timed_out=true", "31s write interrupt req_1", "31s interrupt_sent",
				"31s interrupt_acked", "31s result_received", "31s close stdin", "31s stdin_closed",
			}, ending("31s", "finish stopped: tool calls")...),
			inFlight: []string{"A"},
		},
		{
			name: "no result after the interrupt: stdin closed, then SIGINT, SIGTERM, SIGKILL",
			steps: []step{
				at(0, assistantText()), at(5*time.Second, stop("test")),
				timer(), timer(), timer(), timer(), at(time.Second, exitAndGone(exitSignalled())...),
			},
			want: append([]string{
				"5s stop_requested stopped", "5s write interrupt req_1", "5s interrupt_sent",
				"8s warn claude sent no result after an interrupt", "8s close stdin", "8s stdin_closed",
				"11s close stdin now", "11s sigint",
				"14s close stdin now", "14s sigterm",
				"17s close stdin now", "17s sigkill",
			}, ending("18s", "finish stopped: test")...),
		},
		{
			name: "the response settles before a stop interrupts it",
			steps: []step{
				// Usage comes on the response's first line; its tool_use
				// follows: a stop in between must not cancel that tool.
				at(0, assistantText()), at(0, stop("context at 80%")), at(500*time.Millisecond, toolUse("A")),
				at(10*time.Second, toolResult("A")),
			},
			want: []string{
				"0s stop_requested stopped",
				"10.5s tool_drained timed_out=false", "10.5s write interrupt req_1", "10.5s interrupt_sent",
			},
		},
		{
			name:  "a settled response is interrupted when the settle window ends",
			steps: []step{at(0, assistantText()), at(time.Second, stop("context at 80%")), timer()},
			want: []string{
				"1s stop_requested stopped",
				"2s tool_drained timed_out=false", "2s write interrupt req_1", "2s interrupt_sent",
			},
		},
		{
			name:  "subagent tools are not waited for",
			steps: []step{at(0, subagentToolUse("S")), at(5*time.Second, stop("x"))},
			want:  []string{"5s stop_requested stopped", "5s write interrupt req_1", "5s interrupt_sent"},
		},
		{
			name:  "an ack for another request is not ours",
			steps: []step{at(0, stop("x")), at(0, ack("req_9"))},
			want:  []string{"0s stop_requested stopped", "0s write interrupt req_1", "0s interrupt_sent"},
		},
		{
			name: "kill with a tool in flight",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, kill), at(0, kill), at(100*time.Millisecond, exitAndGone(exitSignalled())...),
			},
			want:     append([]string{"1s sigkill by kill", "1s close stdin now"}, ending("1.1s", "finish killed: killed")...),
			inFlight: []string{"A"},
		},
		{
			name: "kill during a stop overrides its cause",
			steps: []step{
				at(0, toolUse("A")), at(0, stop("x")), at(time.Second, kill), at(0, exitAndGone(exitSignalled())...),
			},
			want: append([]string{"0s stop_requested stopped", "1s sigkill by kill", "1s close stdin now"},
				ending("1s", "finish killed: killed")...),
			inFlight: []string{"A"},
		},
		{
			name: "idle timeout signals at once",
			cfg:  stopConfig{idleTimeout: 10 * time.Second},
			steps: []step{
				at(0, toolUse("A")), at(5*time.Second, notJSON()), timer(), timer(), at(0, exitAndGone(exitSignalled())...),
			},
			want: append([]string{
				"15s idle_timeout", "15s close stdin", "15s stdin_closed", "15s close stdin now", "15s sigint",
				"18s close stdin now", "18s sigterm",
			}, ending("18s", "finish idle_timeout: no output from claude for 10s")...),
			inFlight: []string{"A"},
		},
		{
			name: "session timeout stops at a safe point",
			cfg:  stopConfig{sessionTimeout: time.Minute},
			steps: []step{
				at(0, toolUse("A")), timer(), at(time.Second, toolResult("A")),
			},
			want: []string{
				"1m0s stop_requested session_timeout",
				"1m1s tool_drained timed_out=false", "1m1s write interrupt req_1", "1m1s interrupt_sent",
			},
		},
		{
			name:  "crash without a result",
			steps: []step{at(0, assistantText()), at(time.Second, exitAndGone(exitCode(3))...)},
			want:  ending("1s", "finish crashed: claude exited with code 3 without a result"),
		},
		{
			name: "the last result may be read after the exit",
			steps: []step{
				at(0, exitCode(0)), at(0, result("success", false)), at(0, gone...),
			},
			want: []string{"0s exited", "0s group_killed", "0s close stdin now", "0s read deadline", "0s finish completed"},
		},
		{
			name:  "the outcome waits for both readers and the group",
			steps: []step{at(0, exitCode(1), input{kind: inStdoutEOF}), at(0, input{kind: inGroupGone}), at(time.Second, input{kind: inStderrEOF})},
			want:  append(ending("0s", "")[:4], "1s finish crashed: claude exited with code 1 without a result"),
		},
		{
			name: "a stop after the last result keeps the result's outcome",
			steps: []step{
				at(0, result("success", false)), at(0, stop("late")), at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{"0s close stdin", "0s stdin_closed"}, ending("0s", "finish completed")...),
		},
		{
			name: "cancel stops like a stop",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, cancel), at(time.Second, toolResult("A")),
			},
			want: []string{
				"1s stop_requested cancelled",
				"2s tool_drained timed_out=false", "2s write interrupt req_1", "2s interrupt_sent",
			},
		},
		{
			name: "cancel grace kills a stop that takes too long",
			cfg:  stopConfig{cancelGrace: 10 * time.Second},
			steps: []step{
				at(0, toolUse("A")), at(time.Second, cancel), timer(), at(time.Second, exitAndGone(exitSignalled())...),
			},
			want: append([]string{
				"1s stop_requested cancelled",
				"11s sigkill by cancel_grace", "11s close stdin now",
			}, ending("12s", "finish killed: cancel_grace")...),
			inFlight: []string{"A"},
		},
		{
			name: "cancel during a stop keeps the first cause but bounds it",
			cfg:  stopConfig{cancelGrace: 10 * time.Second},
			steps: []step{
				at(0, toolUse("A")), at(0, stop("context")), at(time.Second, cancel), timer(),
			},
			want: []string{
				"0s stop_requested stopped",
				"11s sigkill by cancel_grace", "11s close stdin now",
			},
		},
		{
			name: "send mid-tool: drain, interrupt, then the follow-up",
			steps: []step{
				at(0, toolUse("A")), at(time.Second, send("write HANDOFF.md")), at(time.Second, toolResult("A")),
				at(0, ack("req_1")), at(0, result("error_during_execution", true)), at(time.Second, result("success", false)),
				at(0, exitAndGone(exitCode(0))...),
			},
			want: append([]string{
				"2s tool_drained timed_out=false", "2s write interrupt req_1", "2s interrupt_sent",
				"2s interrupt_acked", "2s result_received", "2s write follow-up", "2s follow_up_sent",
				"3s close stdin", "3s stdin_closed",
			}, ending("3s", "finish completed")...),
		},
		{
			name: "send with no result after the interrupt fails, the turn goes on",
			steps: []step{
				at(0, toolUse("A"), toolResult("A")), at(time.Second, send("hi")), timer(), at(time.Second, result("success", false)),
			},
			want: []string{
				"1s write interrupt req_1", "1s interrupt_sent",
				"4s warn claude sent no result after an interrupt", "4s reply no result within 3s of the interrupt",
				"5s close stdin", "5s stdin_closed",
			},
		},
		{
			name:  "send while the session ends is refused",
			steps: []step{at(0, stop("x")), at(0, send("hi"))},
			want:  []string{"0s stop_requested stopped", "0s write interrupt req_1", "0s interrupt_sent", "0s reply " + ErrSessionClosed.Error()},
		},
		{
			name: "a stop during a send's drain fails the send and takes over",
			steps: []step{
				at(0, toolUse("A")), at(0, send("hi")), at(time.Second, stop("context")), at(time.Second, toolResult("A")),
				at(0, result("error_during_execution", true)),
			},
			want: []string{
				"1s stop_requested stopped", "1s reply " + ErrSessionClosed.Error(),
				"2s tool_drained timed_out=false", "2s write interrupt req_1", "2s interrupt_sent",
				"2s result_received", "2s close stdin", "2s stdin_closed",
			},
		},
		{
			name: "the exit fails a pending send",
			steps: []step{
				at(0, toolUse("A")), at(0, send("hi")), at(time.Second, exitAndGone(exitCode(1))...),
			},
			want: []string{"1s exited", "1s group_killed", "1s close stdin now", "1s reply " + ErrSessionClosed.Error(),
				"1s read deadline", "1s finish crashed: claude exited with code 1 without a result"},
		},
		{
			name:  "a send after the end is refused",
			steps: []step{at(0, exitAndGone(exitCode(0))...), at(0, send("hi"))},
			want: append(ending("0s", "finish crashed: claude exited with code 0 without a result"),
				"0s reply "+ErrSessionClosed.Error()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace, out, _ := run(t, tt.cfg, tt.steps)
			if !slices.Equal(trace, tt.want) {
				t.Errorf("trace:\n  %s\nwant:\n  %s", strings.Join(trace, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if out != nil {
				var ids []string
				for _, tu := range out.InFlightAtStop {
					ids = append(ids, tu.ID)
				}
				if !slices.Equal(ids, tt.inFlight) {
					t.Errorf("InFlightAtStop = %v, want %v", ids, tt.inFlight)
				}
			}
		})
	}
}

// The session's timer is set from next(): no deadline while nothing waits,
// and none once claude has exited.
func TestStopMachineNext(t *testing.T) {
	tests := []struct {
		name  string
		cfg   stopConfig
		steps []step
		want  time.Duration // since t0; -1 for none
	}{
		{"nothing to wait for", stopConfig{}, []step{at(0, toolUse("A"))}, -1},
		{"idle timeout from the last line", stopConfig{idleTimeout: 10 * time.Second}, []step{at(4*time.Second, notJSON())}, 14 * time.Second},
		{"session timeout", stopConfig{sessionTimeout: time.Minute, idleTimeout: time.Hour}, []step{at(0)}, time.Minute},
		{"drain deadline", stopConfig{}, []step{at(0, toolUse("A")), at(time.Second, stop("x"))}, 31 * time.Second},
		{"settle before the drain deadline", stopConfig{}, []step{at(0, assistantText()), at(time.Second, stop("x"))}, 2 * time.Second},
		{"interrupt deadline", stopConfig{}, []step{at(time.Second, stop("x"))}, 4 * time.Second},
		{"no watchdogs once stopping", stopConfig{idleTimeout: time.Second}, []step{at(0, result("success", false))}, 3 * time.Second},
		{"none after the exit", stopConfig{idleTimeout: time.Second}, []step{at(0, stop("x")), at(0, exitCode(0))}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, m := run(t, tt.cfg, tt.steps)
			next, ok := m.next()
			got := next.Sub(t0)
			if !ok {
				got = -1
			}
			if got != tt.want {
				t.Errorf("next = %v, want %v (phase %s)", got, tt.want, m.phase)
			}
		})
	}
}

func TestStopMachineRepliesToEverySend(t *testing.T) {
	// Each Send gets exactly one answer, whatever ends the session.
	endings := map[string][]step{
		"stop":   {at(0, stop("x"))},
		"kill":   {at(0, kill)},
		"exit":   {at(0, exitCode(0))},
		"result": {at(0, result("success", false)), at(0, result("success", false))},
	}
	for name, end := range endings {
		t.Run(name, func(t *testing.T) {
			steps := append([]step{at(0, toolUse("A")), at(0, send("hi"))}, end...)
			trace, _, _ := run(t, stopConfig{}, steps)
			n := 0
			for _, l := range trace {
				if strings.Contains(l, " reply ") || strings.HasSuffix(l, "write follow-up") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d answers to one Send:\n%s", n, strings.Join(trace, "\n"))
			}
		})
	}
}

func TestPhaseString(t *testing.T) {
	if got := phaseClosing.String(); got != "closing" {
		t.Errorf("phaseClosing = %q", got)
	}
}

// An outcome says its kind once: a session killed at the end of the
// cancel grace reads "killed: cancel_grace", not "killed: killed:
// cancel_grace" (in the log, `logs` and the report alike).
func TestKilledOutcomeSaysKilledOnce(t *testing.T) {
	for _, by := range []string{"cancel_grace", "kill"} {
		m := &machine{}
		m.kill(time.Now(), by)
		got := Outcome{Kind: m.cause, Reason: m.reason}.Describe()
		if strings.Count(got, "killed") != 1 {
			t.Errorf("killed by %s: %q", by, got)
		}
	}
}
