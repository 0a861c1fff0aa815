package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// writeHandoff is the fake model writing its handoff where debussy asked:
// the run id is only known at run time, so the path comes from the
// environment debussy gives the session.
func writeHandoff(text string) fakeapi.Block {
	return fakeapi.Bash("printf '%s\\n' '" + text + "' > \"$DEBUSSY_STATE_DIR/runs/$DEBUSSY_RUN_ID/phase-$DEBUSSY_PHASE_ID/handoff-1.md\"")
}

// requestsOf returns the API requests of the session whose prompt
// contains match, in order.
func (h *harness) requestsOf(match string) [][]fakeapi.Request {
	var out [][]fakeapi.Request
	idx := map[int]int{}
	for _, r := range h.API.Requests() {
		if !strings.Contains(r.FirstUser, match) {
			continue
		}
		k, ok := idx[r.Session]
		if !ok {
			k = len(out)
			idx[r.Session] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], r)
	}
	return out
}

// runFiles concatenates the files under .debussy/runs matching pattern.
func (h *harness) runFiles(pattern string) string {
	h.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(h.Repo, ".debussy", "runs", "*", pattern))
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			h.t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// A session crossing the threshold is asked for its handoff: the tool of
// that response is refused, the fake model writes its handoff and the
// session ends cleanly with no further request; the next session's prompt
// carries the handoff.
func TestStagesHandoff(t *testing.T) {
	claudetest.CLISensitive(t, "the handoff stage: a refused tool and no request after it")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo early > early.txt")),
			turn(170000, fakeapi.Bash("echo late > late.txt")),
			turn(171000, writeHandoff("## Completed\nHANDOFF-MARKER-51c early.txt written")),
			turn(172000, fakeapi.Text("never asked")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, done("1")), turn(21000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Handoff"}}, "model: claude-sonnet-4-5\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(sessions))
	}
	s1 := sessions[0]
	// Requests: the prompt, after early.txt, after the refused tool, after
	// the handoff write — none after it.
	if len(s1) != 3 {
		t.Errorf("session 1 made %d requests, want 3 (none after the handoff write)", len(s1))
	}
	if len(s1) >= 3 && !strings.Contains(string(s1[2].Body), "handoff-1.md`") {
		t.Errorf("the refused tool's result does not carry the handoff request:\n%s", s1[2].Body)
	}
	if !h.exists("early.txt") || h.exists("late.txt") {
		t.Errorf("early.txt %v (want true), late.txt %v (want false: refused after the request)", h.exists("early.txt"), h.exists("late.txt"))
	}
	if !strings.Contains(sessions[1][0].FirstUser, "HANDOFF-MARKER-51c") {
		t.Errorf("the next session's prompt lacks the handoff:\n%s", sessions[1][0].FirstUser)
	}
	events := h.runFiles("events.jsonl")
	for _, e := range []string{`"handoff_requested"`, `"handoff_written"`, `"tool_denied"`} {
		if !strings.Contains(events, e) {
			t.Errorf("events.jsonl lacks %s", e)
		}
	}
	if !strings.Contains(h.runFiles("phase-1/session-1.jsonl"), "hook_stopped") {
		t.Error("session 1 did not end with terminal_reason hook_stopped")
	}
	// The real CLI shows the refusal as a failed tool; the checkpoint knows
	// it was debussy's and does not send the next agent after it.
	cp := h.runFiles("phase-1/checkpoint-1.md")
	if !strings.Contains(cp, "`echo late > late.txt` — refused by debussy (handoff requested") || strings.Contains(cp, "Failed commands") {
		t.Errorf("the checkpoint calls debussy's refusal a failure:\n%s", cp)
	}
	// logs puts it in place of the tool's result, and says why the session ended.
	if r := h.run("logs", "--phase", "1", "--session", "1"); !strings.Contains(r.Stdout, "← debussy refused Bash (the handoff comes first); it did not run") ||
		!strings.Contains(r.Stdout, "■ ended: stopped by debussy: context ") {
		t.Errorf("logs of session 1: %s", r)
	}
}

// A secret a tool printed and the agent copied into its handoff reaches no
// restart prompt and no checkpoint file.
func TestStagesSecretRedacted(t *testing.T) {
	claudetest.OncePerSuite(t, "redaction of the handoff and checkpoint")
	const secret = "AKIAIOSFODNN7EXAMPLE"
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo aws_key="+secret)),
			turn(170000, fakeapi.Text("Noted the key.")),
			turn(171000, writeHandoff("## Critical context\nthe key is "+secret+" and DB_PASSWORD=hunter2hunter2")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, done("1")), turn(21000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Secret"}}, "model: claude-sonnet-4-5\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(sessions))
	}
	prompt := sessions[1][0].FirstUser
	if !strings.Contains(prompt, "the key is") {
		t.Errorf("the handoff is not in the next prompt:\n%s", prompt)
	}
	checkpoints := h.runFiles("phase-1/checkpoint-*")
	if checkpoints == "" {
		t.Fatal("no checkpoint file")
	}
	for _, s := range []string{secret, "hunter2hunter2"} {
		if strings.Contains(prompt, s) {
			t.Errorf("the restart prompt carries %s", s)
		}
		if strings.Contains(checkpoints, s) {
			t.Errorf("a checkpoint file carries %s", s)
		}
	}
}

// A session whose agent ends its turn without `debussy done` is told so by
// the Stop hook and completes in the same session.
func TestStagesStopHookAsksForDone(t *testing.T) {
	claudetest.CLISensitive(t, "the Stop hook")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			turn(21000, fakeapi.Text("All done, I think.")),
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Signalled.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Forgetful"}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 1 {
		t.Fatalf("want 1 session, got %d", len(sessions))
	}
	s1 := sessions[0]
	if len(s1) < 3 || !s1[2].Carries("debussy done --phase 1") {
		t.Errorf("the request after the early stop does not carry the Stop hook's feedback: %+v", s1)
	}
	if !strings.Contains(h.runFiles("events.jsonl"), `"stop_blocked"`) {
		t.Error("events.jsonl lacks stop_blocked")
	}
}

// The third identical call produces a nudge the API receives; the first
// and second do not. Zones and nudges reach events.jsonl and status --json.
func TestStagesNudgeAndZone(t *testing.T) {
	claudetest.CLISensitive(t, "a nudge reaching the API")
	same := fakeapi.Bash("ls plan")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, same), turn(21000, same), turn(22000, same),
			turn(23000, done("1")), turn(24000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Loop"}}, "zone_tool_calls_yellow: 2\nzone_tool_calls_red: 10\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	s := h.requestsOf(phaseMatch("1"))
	if len(s) != 1 || len(s[0]) < 4 {
		t.Fatalf("want 1 session of at least 4 requests, got %v", s)
	}
	const nudge = "with the same arguments 3 times"
	for i, req := range s[0][:4] {
		// Request i follows the i-th call.
		if got, want := strings.Contains(string(req.Body), nudge), i == 3; got != want {
			t.Errorf("request %d carries the nudge: %v, want %v", i, got, want)
		}
	}
	if !strings.Contains(string(s[0][2].Body), "yellow zone") {
		t.Error("the request after the second call lacks the yellow zone note")
	}
	events := h.runFiles("events.jsonl")
	for _, e := range []string{`"nudge"`, `"zone"`} {
		if !strings.Contains(events, e) {
			t.Errorf("events.jsonl lacks %s", e)
		}
	}
	st := h.status()
	phases, _ := st["phases"].([]any)
	if len(phases) != 1 {
		t.Fatalf("status phases: %v", st)
	}
	p, _ := phases[0].(map[string]any)
	nudges, _ := p["nudges"].([]any)
	if p["zone"] != "yellow" || len(nudges) != 1 {
		t.Errorf("status --json phase: zone %v, nudges %v", p["zone"], p["nudges"])
	}
}

// A plain threshold restart (handoff: false) ends the session with
// hook_stopped: both tools of the crossing response run, and the API gets
// no request after the stop. With handoffs on, the emergency path (no
// handoff within handoff_grace_calls) ends the same way.
func TestStagesPlainStopRunsEveryTool(t *testing.T) {
	claudetest.CLISensitive(t, "hook_stopped after every tool of a response")
	for _, tc := range []struct{ name, config string }{
		{"handoff disabled", "model: claude-sonnet-4-5\nhandoff: false\n"},
		{"emergency at 98 %", "model: claude-sonnet-4-5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tokens := int64(170000)
			if tc.name != "handoff disabled" {
				tokens = 197000
			}
			script := fakeapi.Script{Conversations: []fakeapi.Conversation{
				{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(tokens, fakeapi.Bash("echo one > one.txt"), fakeapi.Bash(pause("1")+"; echo two > two.txt")),
					turn(tokens+1000, fakeapi.Bash("echo never > never.txt")),
				}},
				{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(20000, done("1")), turn(21000, fakeapi.Text("ok")),
				}},
			}}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Plain"}}, tc.config)
			r := h.run("run", "plan/MASTER_PLAN.md")
			if r.Code != 0 {
				t.Fatalf("want exit 0: %s", r)
			}
			if !h.exists("one.txt") || !h.exists("two.txt") || h.exists("never.txt") {
				t.Errorf("one.txt %v, two.txt %v (want both), never.txt %v (want none)", h.exists("one.txt"), h.exists("two.txt"), h.exists("never.txt"))
			}
			sessions := h.requestsOf(phaseMatch("1"))
			if len(sessions) != 2 || len(sessions[0]) != 1 {
				t.Errorf("want 2 sessions, the first with 1 request (none after the stop); got %d", len(sessions))
			}
			if !strings.Contains(h.runFiles("phase-1/session-1.jsonl"), `"terminal_reason":"hook_stopped"`) {
				t.Error("session 1 did not end with terminal_reason hook_stopped")
			}
		})
	}
}

// With a model whose window the CLI compacts at 167K, a session climbing
// past that point is not compacted (PreCompact blocked): debussy asks for
// the handoff at its own threshold and restarts the session itself. A
// threshold above the compaction point is warned about at start. The
// script stays under the CLI's "prompt too long" point (~177K of 200K).
func TestStagesCompactionBlocked(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's compaction and PreCompact")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(150000, fakeapi.Bash("echo a > a.txt")),
			turn(168000, fakeapi.Bash("echo b > b.txt")), // past the CLI's compaction point (167K)
			turn(172000, fakeapi.Bash("echo c > c.txt")), // past context_threshold (170K): refused
			turn(174000, writeHandoff("## Completed\na.txt b.txt")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, done("1")), turn(21000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Compact"}}, "model: claude-sonnet-4-6\ncontext_threshold: 85\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "compaction point") {
		t.Errorf("no warning that context_threshold lies above the CLI's compaction point:\n%s", r.Stderr)
	}
	for _, req := range h.API.Requests() {
		if strings.Contains(string(req.Body), "detailed summary of the conversation") {
			t.Fatalf("the CLI sent a compaction request (turn %d)", req.Turn)
		}
	}
	if n := len(h.requestsOf(phaseMatch("1"))); n != 2 {
		t.Errorf("want 2 sessions (debussy's restart), got %d", n)
	}
	if !h.exists("b.txt") || h.exists("c.txt") {
		t.Errorf("b.txt %v (want true), c.txt %v (want false: refused after the handoff request)", h.exists("b.txt"), h.exists("c.txt"))
	}
	events := h.runFiles("events.jsonl")
	if !strings.Contains(events, `"compaction_blocked"`) {
		t.Errorf("events.jsonl does not record the blocked compaction:\n%s", events)
	}
}
