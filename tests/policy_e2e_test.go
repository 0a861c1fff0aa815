package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The response that runs `debussy done` also crosses the context threshold:
// the done signal wins, the phase completes in one session (exit 0). Once
// with the default handoff stage and once on a strict budget that the same
// response exhausts.
func TestPolicyDoneBeatsThreshold(t *testing.T) {
	claudetest.CLISensitive(t, "the order of the done signal and the usage in the stream")
	for _, tt := range []struct{ name, config string }{
		{"handoff stage", "model: claude-sonnet-4-5\n"},
		{"strict budget exhausted on the same response", "model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := fakeapi.Script{Conversations: []fakeapi.Conversation{
				{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(20000, fakeapi.Bash("echo work > work.txt")),
					turn(170000, done("1")),
					turn(171000, fakeapi.Text("Phase complete.")),
				}},
			}}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Done"}}, tt.config)
			r := h.run("run", "plan/MASTER_PLAN.md")
			if r.Code != 0 {
				t.Fatalf("want exit 0 (done beats the stop): %s", r)
			}
			if n := len(h.requestsOf(phaseMatch("1"))); n != 1 {
				t.Errorf("%d sessions, want 1", n)
			}
			if !h.exists("work.txt") || !strings.Contains(h.git("log", "-1", "--format=%B"), "Debussy-Event: completed") {
				t.Errorf("work.txt %v; last commit:\n%s", h.exists("work.txt"), h.git("log", "-1", "--format=%B"))
			}
			if ev := h.runFiles("events.jsonl"); !strings.Contains(ev, `"done_signal"`) {
				t.Error("events.jsonl lacks done_signal")
			}
		})
	}
}

// A handoff of 100 KiB, far above the runner's 64 KiB bound on kept tool
// inputs, is recognised by its path: the Write runs (not refused), ends the
// session, and the next prompt embeds it, bounded.
func TestPolicyLargeHandoff(t *testing.T) {
	claudetest.CLISensitive(t, "a large Write in the stream and the hooks")
	t.Parallel()
	big := "## Completed\nBIG-HANDOFF-MARKER-3e1\n" + strings.Repeat("detail line of the handoff, kept verbatim where it fits\n", 1900)
	if len(big) < 100<<10 {
		t.Fatalf("handoff is %d bytes, want >= 100 KiB", len(big))
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo early > early.txt")),
			turn(170000, fakeapi.Bash("echo late > late.txt")),
			turn(171000, fakeapi.Write(fakeapi.HandoffPath, big)),
			turn(172000, fakeapi.Text("never asked")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(20000, done("1")), turn(21000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Large handoff"}}, "model: claude-sonnet-4-5\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(sessions))
	}
	if len(sessions[0]) != 3 {
		t.Errorf("session 1 made %d requests, want 3 (none after the handoff write)", len(sessions[0]))
	}
	if !strings.Contains(sessions[1][0].FirstUser, "BIG-HANDOFF-MARKER-3e1") {
		t.Error("the next prompt lacks the large handoff")
	}
	if len(sessions[1][0].FirstUser) > 200<<10 {
		t.Errorf("the next prompt is %d bytes: the handoff is not bounded", len(sessions[1][0].FirstUser))
	}
	events := h.runFiles("events.jsonl")
	if !strings.Contains(events, `"handoff_written"`) || strings.Contains(events, `"emergency_stop"`) {
		t.Errorf("want handoff_written and no emergency_stop in events.jsonl")
	}
}

// A budget level crossed on the same event as a stop: the stopping answer
// carries no note, and the note reaches the next session instead.
func TestPolicyNoteCarriedOver(t *testing.T) {
	claudetest.OncePerSuite(t, "where a note goes when a stop wins the same event")
	t.Parallel()
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo a > a.txt")),
			// 190K processed of a 250K advisory budget (76 %) and 85 % of
			// the window: the budget's note and the stop on one event.
			turn(170000, fakeapi.Bash("echo b > b.txt")),
			turn(171000, fakeapi.Text("never asked")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo c > c.txt")),
			turn(21000, done("1")), turn(22000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Note"}},
		"model: claude-sonnet-4-5\nhandoff: false\nbudget:\n  phase: {tokens: 250000}\n  enforcement: advisory\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(sessions))
	}
	if got := bodies(sessions[0], "debussy: Budget"); len(got) > 0 {
		t.Errorf("session 1's requests %v carry the budget note: it was never heard there (the stop came with it)", got)
	}
	if got := bodies(sessions[1][1:], "debussy: Budget"); len(got) == 0 {
		t.Error("session 2 never heard the budget note session 1 could not deliver")
	}
}

// Under --parallel 2, phase 1's commit runs the user's 15 s pre-commit hook
// while phase 2's agent works, crosses the threshold and is asked for its
// handoff: every hook answer of phase 2 comes at once (no hook_slow, no
// default answer after the 10 s timeout), and the tool after the handoff
// request is refused, not run.
func TestPolicyHooksNeverWaitOnAnotherPhasesCommit(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's locks under --parallel")
	t.Parallel()
	marks := marksDir(t)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo one > one.txt")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(awaitMark(marks, "committing", 30*time.Second))),
			turn(21000, fakeapi.Bash("echo a >> two.txt")),
			turn(22000, fakeapi.Bash("echo b >> two.txt")),
			turn(23000, fakeapi.Bash("echo c >> two.txt")),
			turn(170000, fakeapi.Bash("echo late > late.txt")),
			turn(171000, writeHandoff("## Completed\\nwrote two.txt while phase 1 committed")),
			turn(172000, fakeapi.Text("never asked")),
		}},
		{Name: "p2b", Match: phaseMatch("2"), Turns: []fakeapi.Turn{turn(20000, done("2")), turn(21000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Commits slowly"}, {ID: "2", Title: "Works meanwhile"}},
		"model: claude-sonnet-4-5\n")
	hook := fmt.Sprintf("#!/bin/sh\ncase \"$(git rev-parse --abbrev-ref HEAD)\" in *phase-1*) touch %s/committing; sleep 15;; esac\nexit 0\n", marks)
	hookPath := filepath.Join(h.Repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hookPath, []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if _, err := os.Stat(filepath.Join(marks, "committing")); err != nil {
		t.Fatal("the slow pre-commit hook never ran: the test proves nothing")
	}
	events := h.runFiles("events.jsonl")
	if strings.Contains(events, `"hook_slow"`) {
		t.Errorf("a hook answer waited past the runner's timeout:\n%s", grepLines(events, "hook_slow"))
	}
	if h.exists("late.txt") {
		t.Error("the tool after the handoff request ran")
	}
	if !strings.Contains(events, `"handoff_written"`) {
		t.Error("no handoff_written in events.jsonl")
	}
}

// grepLines is the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
