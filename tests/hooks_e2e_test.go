package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Real-CLI tests of the hook callbacks: the runner registers PreToolUse,
// PostToolUse, Stop and PreCompact callbacks and answers them on stdin.

// answerAll answers every hook call with {} except what pick returns.
func answerAll(pick func(h *runner.HookCall) runner.HookAnswer) func(*runner.Session, runner.Event) {
	return func(_ *runner.Session, ev runner.Event) {
		if ev.Kind != runner.KindHook {
			return
		}
		var a runner.HookAnswer
		if pick != nil {
			a = pick(ev.Hook)
		}
		ev.Hook.Answer(a)
	}
}

// stopAtFirstBash requests a stop with reason as the first Bash tool use
// is seen, and answers every hook call with {}.
func stopAtFirstBash(reason string) func(*runner.Session, runner.Event) {
	var once sync.Once
	return func(s *runner.Session, ev runner.Event) {
		if _, ok := firstToolUse(ev, "Bash"); ok {
			once.Do(func() { s.RequestStop(reason) })
		}
		answerAll(nil)(s, ev)
	}
}

func hookCalls(evs []runner.Event, ev runner.HookEvent) []*runner.HookCall {
	var out []*runner.HookCall
	for _, e := range evs {
		if e.Kind == runner.KindHook && e.Hook.Event == ev {
			out = append(out, e.Hook)
		}
	}
	return out
}

func hasMark(out runner.Outcome, name runner.MarkName) bool {
	return slices.ContainsFunc(out.Marks, func(m runner.Mark) bool { return m.Name == name })
}

// A threshold stop on the hook path: RequestStop as the response's first
// tool is seen; the runner answers the next PostToolUse with continue:false.
// Every tool of the response runs, the CLI ends with hook_stopped and sends
// no request after the stop.
func TestRunnerHookStopRunsEveryTool(t *testing.T) {
	claudetest.CLISensitive(t, "the PostToolUse hook and hook_stopped")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "two tools",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{
				fakeapi.Bash("echo one > one.txt"),
				fakeapi.Bash(pause("1") + "; echo two > two.txt"),
			}},
			{Blocks: []fakeapi.Block{fakeapi.Text("never asked")}},
		},
	}}})
	evs, out := e.start("two tools, then more", stopAtFirstBash("context 80%")).wait(t)

	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Errorf("%s: %v: the stop cut a tool of the response", f, err)
		}
	}
	if out.Kind != runner.OutcomeStopped || out.Reason != "context 80%" {
		t.Errorf("outcome %s %q, want stopped", out.Kind, out.Reason)
	}
	if out.Result == nil || out.Result.TerminalReason != "hook_stopped" {
		t.Errorf("result %+v, want terminal_reason hook_stopped", out.Result)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d API requests, want 1: none after the stop", n)
	}
	if !hasMark(out, runner.MarkHookStopSent) || hasMark(out, runner.MarkInterruptSent) || hasMark(out, runner.MarkSigint) {
		t.Errorf("marks %s: want hook_stop_sent and no interrupt or signal", markNames(out.Marks))
	}
	if len(out.InFlightAtStop) != 0 || out.ExitCode != 0 {
		t.Errorf("in flight at stop %+v, exit %d", out.InFlightAtStop, out.ExitCode)
	}
	if n := len(hookCalls(evs, runner.HookPostToolUse)); n != 2 {
		t.Errorf("%d PostToolUse calls, want 2", n)
	}
}

// A stop answered at a PostToolUse while the tool's response still
// streams (the model lingers after its tool_use; a quick tool is done
// first). 2.1.197 then sends the next request anyway; 2.1.112 and 2.1.332
// do not. Either way nothing the model asks for after the stop runs: the
// runner refuses the late response's tools and interrupts its turn.
func TestRunnerHookStopInsideTheResponse(t *testing.T) {
	claudetest.CLISensitive(t, "a PostToolUse continue:false answered before the response ends")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "lingering response",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Bash("echo one > one.txt")}, Linger: fakeapi.Duration(800 * time.Millisecond)},
			{Blocks: []fakeapi.Block{fakeapi.Bash("echo two > two.txt")}},
			{Blocks: []fakeapi.Block{fakeapi.Text("never asked")}},
		},
	}}})
	_, out := e.start("lingering response", stopAtFirstBash("budget exhausted")).wait(t)

	if _, err := os.Stat(filepath.Join(e.dir, "one.txt")); err != nil {
		t.Errorf("one.txt: %v: the stop cut the response's tool", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "two.txt")); err == nil {
		t.Error("two.txt exists: a tool asked for after the stop ran")
	}
	if out.Kind != runner.OutcomeStopped || out.Reason != "budget exhausted" {
		t.Errorf("outcome %s %q, want stopped", out.Kind, out.Reason)
	}
	if len(out.InFlightAtStop) != 0 {
		t.Errorf("in flight at stop %+v: a refused tool is not one a stop cut", out.InFlightAtStop)
	}
	switch n := len(e.srv.Requests()); n {
	case 1: // the CLI honoured the stop
		if hasMark(out, runner.MarkHookStopIgnored) || out.Result == nil || out.Result.TerminalReason != "hook_stopped" {
			t.Errorf("1 request, marks %s, result %+v: want hook_stopped", markNames(out.Marks), out.Result)
		}
	case 2: // it went on: the late tool refused, the turn interrupted
		t.Logf("this CLI sent a request after continue:false")
		if !hasMark(out, runner.MarkHookStopIgnored) || !hasMark(out, runner.MarkInterruptSent) {
			t.Errorf("marks %s: want hook_stop_ignored and interrupt_sent", markNames(out.Marks))
		}
	default:
		t.Errorf("%d API requests, want at most 2", n)
	}
}

// The consumer's answers reach the CLI: a PostToolUse note is in the next
// request, a PreToolUse deny keeps the tool from running, a Stop block
// continues the session with the feedback.
func TestRunnerHookAnswers(t *testing.T) {
	claudetest.CLISensitive(t, "the hooks' answers reaching the CLI")
	tests := []struct {
		name   string
		blocks []fakeapi.Block
		pick   func(h *runner.HookCall) runner.HookAnswer
		check  func(t *testing.T, e *e2e, evs []runner.Event, reqs []fakeapi.Request)
	}{
		{
			name:   "post tool note",
			blocks: []fakeapi.Block{fakeapi.Bash("echo hi")},
			pick: func(h *runner.HookCall) runner.HookAnswer {
				if h.Event == runner.HookPostToolUse {
					return runner.HookAnswer{Note: "NOTE-7f3 context at 72%"}
				}
				return runner.HookAnswer{}
			},
			check: func(t *testing.T, e *e2e, evs []runner.Event, reqs []fakeapi.Request) {
				// 2.1.197 sends the note beside the tool_result, 2.1.330
				// inside it: HookContext finds either.
				if len(reqs) < 2 || !slices.Contains(reqs[1].HookContext, "NOTE-7f3 context at 72%") {
					t.Errorf("the second request does not carry the note")
				} else if !slices.Equal(reqs[1].ToolResults, []string{"hi"}) {
					t.Errorf("tool results %q, want the command's output alone", reqs[1].ToolResults)
				}
				post := hookCalls(evs, runner.HookPostToolUse)
				if len(post) != 1 || post[0].ToolName != "Bash" || post[0].ToolUseID == "" || !strings.Contains(post[0].ToolResponse, "hi") {
					t.Errorf("PostToolUse calls %+v", post)
				}
			},
		},
		{
			name:   "pre tool deny",
			blocks: []fakeapi.Block{fakeapi.Bash("echo x > denied.txt")},
			pick: func(h *runner.HookCall) runner.HookAnswer {
				if h.Event == runner.HookPreToolUse && h.ToolName == "Bash" {
					return runner.HookAnswer{Deny: "DENY-51c write your handoff first"}
				}
				return runner.HookAnswer{}
			},
			check: func(t *testing.T, e *e2e, evs []runner.Event, reqs []fakeapi.Request) {
				if _, err := os.Stat(filepath.Join(e.dir, "denied.txt")); !os.IsNotExist(err) {
					t.Errorf("denied.txt: %v, want it absent: the denied tool ran", err)
				}
				if len(reqs) < 2 || !slices.ContainsFunc(reqs[1].ToolResults, func(s string) bool { return strings.Contains(s, "DENY-51c") }) {
					t.Errorf("the agent did not get the reason: %+v", reqs)
				}
				pre := hookCalls(evs, runner.HookPreToolUse)
				if len(pre) != 1 || !bytes.Contains(pre[0].ToolInput, []byte("denied.txt")) {
					t.Errorf("PreToolUse calls %+v", pre)
				}
			},
		},
		{
			name:   "stop block",
			blocks: []fakeapi.Block{fakeapi.Text("I am finished.")},
			pick: func(h *runner.HookCall) runner.HookAnswer {
				if h.Event == runner.HookStop && !h.StopHookActive {
					return runner.HookAnswer{Block: "STOP-9a2 run `debussy done --phase 1` first"}
				}
				return runner.HookAnswer{}
			},
			check: func(t *testing.T, e *e2e, evs []runner.Event, reqs []fakeapi.Request) {
				// Where the CLI puts the feedback moves between releases
				// (user text, a reminder, a system message): Carries looks
				// at everything the request added.
				if len(reqs) != 2 || !reqs[1].Carries("STOP-9a2 run `debussy done --phase 1` first") {
					t.Errorf("requests %d; the second should carry the Stop hook feedback", len(reqs))
				}
				stops := hookCalls(evs, runner.HookStop)
				if len(stops) != 2 || stops[0].StopHookActive || !stops[1].StopHookActive {
					t.Errorf("Stop calls %+v, want two, the second with stop_hook_active", stops)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
				Match: "hook answers",
				Turns: []fakeapi.Turn{{Blocks: tt.blocks}, {Blocks: []fakeapi.Block{fakeapi.Text("done")}}},
			}}})
			evs, out := e.start("hook answers", answerAll(tt.pick)).wait(t)
			if out.Kind != runner.OutcomeCompleted {
				t.Errorf("outcome %s %q, want completed", out.Kind, out.Reason)
			}
			if hasMark(out, runner.MarkHookSlow) {
				t.Errorf("marks %s: a hook waited for the timeout", markNames(out.Marks))
			}
			reqs := e.srv.Requests()
			if len(reqs) > 0 {
				t.Logf("last request LastUser %q", reqs[len(reqs)-1].LastUser)
			}
			tt.check(t, e, evs, reqs)
		})
	}
}

// With a model whose window the CLI compacts at 167K, a session climbing
// past it is not compacted: the runner's default PreCompact answer (the
// consumer leaves it unanswered) blocks it. AllowCompact lets it happen,
// which shows the scenario does reach the CLI's compaction.
func TestRunnerHookPreCompactBlocked(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's compaction and PreCompact")
	tests := []struct {
		name         string
		allowCompact bool
	}{
		{name: "blocked by default"},
		{name: "allowed", allowCompact: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
				Match: "climb",
				Turns: []fakeapi.Turn{
					{Usage: fakeapi.Usage{Input: 2000, CacheRead: 100000, Output: 50}, Blocks: []fakeapi.Block{fakeapi.Bash("echo a > a.txt")}},
					{Usage: fakeapi.Usage{Input: 2000, CacheRead: 172000, Output: 50}, Blocks: []fakeapi.Block{fakeapi.Bash("echo b > b.txt")}},
					{Usage: fakeapi.Usage{Input: 2000, CacheRead: 175000, Output: 50}, Blocks: []fakeapi.Block{fakeapi.Text("done climbing")}},
				},
			}}})
			e.spec.Model = "claude-sonnet-4-6"
			e.spec.AllowCompact = tt.allowCompact
			e.spec.HookTimeout = 500 * time.Millisecond
			e.leaveHooks = true
			evs, out := e.start("climb past the compaction point", func(s *runner.Session, ev runner.Event) {
				if ev.Kind == runner.KindHook && ev.Hook.Event != runner.HookPreCompact {
					ev.Hook.Answer(runner.HookAnswer{})
				}
			}).wait(t)

			compacted := 0
			for _, r := range e.srv.Requests() {
				if bytes.Contains(r.Body, []byte("create a detailed summary of the conversation")) {
					compacted++
				}
			}
			calls := hookCalls(evs, runner.HookPreCompact)
			t.Logf("PreCompact calls %d, compaction requests %d", len(calls), compacted)
			if len(calls) == 0 || calls[0].Trigger != "auto" {
				t.Fatalf("PreCompact calls %+v, want an auto one", calls)
			}
			if tt.allowCompact != (compacted > 0) {
				t.Errorf("%d compaction requests with AllowCompact %v", compacted, tt.allowCompact)
			}
			if !tt.allowCompact && out.Kind != runner.OutcomeCompleted {
				t.Errorf("outcome %s %q, want completed without compaction", out.Kind, out.Reason)
			}
		})
	}
}
