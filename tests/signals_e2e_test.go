package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Signals are facts: the agent's `debussy handoff` and `debussy done` are
// read from what the commands left for the session, however the agent
// typed them — chained after the commands that write the handoff, inside
// `bash -c`, env-prefixed.
func TestSignalsAsFacts(t *testing.T) {
	claudetest.CLISensitive(t, "signals read from what the commands left for the session")
	const chained = "mkdir -p notes && printf '## Completed\\nHANDOFF-MARKER-c41 a.txt written\\n' > notes/handoff.md && " +
		"debussy handoff --phase 1 --file notes/handoff.md"
	t.Run("chained handoff", func(t *testing.T) {
		script := fakeapi.Script{Conversations: []fakeapi.Conversation{
			{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
				turn(20000, fakeapi.Write("a.txt", "alpha\n")),
				turn(21000, fakeapi.Bash(chained)),
				turn(22000, fakeapi.Bash("echo never > after.txt")),
				turn(23000, fakeapi.Text("never asked")),
			}},
			{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(20000, done("1")), turn(21000, fakeapi.Text("Done."))}},
		}}
		h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
		r := h.run("run", "plan/MASTER_PLAN.md")
		if r.Code != 0 {
			t.Fatalf("want exit 0: %s", r)
		}
		sessions := h.requestsOf(phaseMatch("1"))
		if len(sessions) != 2 {
			t.Fatalf("want 2 sessions, got %d", len(sessions))
		}
		if n := len(sessions[0]); n != 2 {
			t.Errorf("session 1 made %d requests, want 2 (none after the chained debussy handoff)", n)
		}
		if h.exists("after.txt") {
			t.Error("the session went on after its handoff")
		}
		if next := sessions[1][0].FirstUser; !strings.Contains(next, "HANDOFF-MARKER-c41") {
			t.Errorf("the next session's prompt lacks the agent's handoff:\n%s", next)
		}
		if strings.Contains(r.Stderr, "without `debussy done`") {
			t.Errorf("the handoff was taken for a session that ended without done:\n%s", r.Stderr)
		}
		ph := h.status()["phases"].([]any)[0].(map[string]any)
		if ph["status"] != "completed" || ph["restarts"] != float64(1) || ph["attempts"] != float64(1) {
			t.Errorf("phase %v, %v restarts, %v attempts; want completed, 1 restart, 1 attempt", ph["status"], ph["restarts"], ph["attempts"])
		}
	})
	for _, tt := range []struct{ name, cmd string }{
		{"bash -c", "bash -c 'debussy done --phase 1'"},
		{"env-prefixed", "X=1 debussy done --phase 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
				turn(20000, fakeapi.Write("a.txt", "alpha\n")),
				turn(21000, fakeapi.Bash(tt.cmd)),
				turn(22000, fakeapi.Text("Done.")),
			}}}}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"a: `test -f a.txt`"}}}, "")
			r := h.run("run", "plan/MASTER_PLAN.md")
			if r.Code != 0 {
				t.Fatalf("want exit 0: %s", r)
			}
			if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
				t.Errorf("%d sessions, want 1", n)
			}
			if strings.Contains(r.Stderr, "without `debussy done`") || len(h.events("remediation")) > 0 {
				t.Errorf("the done signal was not heard:\n%s", r.Stderr)
			}
			if d := h.events("done_signal"); len(d) != 1 {
				t.Errorf("%d done_signal events, want 1", len(d))
			}
		})
	}
}

// debussy's allowance is for debussy's own executable: under acceptEdits
// a file merely named debussy in the repository (`./tools/debussy done`)
// is not allowed by debussy's hook, so its contents do not run unasked;
// the real `debussy done` still is.
func TestOwnCommandIsDebussyItself(t *testing.T) {
	claudetest.CLISensitive(t, "the permission hook under acceptEdits")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Bash("./tools/debussy done --phase 1")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "permission_mode: acceptEdits\n")
	h.Env = withoutSandbox(h.Env)
	impostor := filepath.Join(h.Repo, "tools", "debussy")
	if err := os.MkdirAll(filepath.Dir(impostor), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(impostor, []byte("#!/bin/sh\ntouch \"$(dirname \"$0\")/../PWNED\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.git("add", "-A")
	h.git("commit", "-q", "-m", "a helper named debussy")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if h.exists("PWNED") {
		t.Fatal("a file named debussy ran on debussy's allowance")
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

// The CLI's answer about its window is kept across runs (a day at most)
// for its version and model: the next run's session asks nothing.
func TestContextAnswerKeptAcrossRuns(t *testing.T) {
	conv := func(name string) fakeapi.Conversation {
		return fakeapi.Conversation{Name: name, Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(20000, done("1")), turn(21000, fakeapi.Text("Done."))}}
	}
	h := newHarness(t, fakeapi.Script{Conversations: []fakeapi.Conversation{conv("run1"), conv("run2")}}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	for i, args := range [][]string{{"run", "plan/MASTER_PLAN.md"}, {"run", "--restart", "plan/MASTER_PLAN.md"}} {
		if r := h.run(args...); r.Code != 0 {
			t.Fatalf("run %d: want exit 0: %s", i+1, r)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(h.Repo, ".debussy", "runs", "*", "phase-1", "session-1.jsonl"))
	if len(logs) != 2 {
		t.Fatalf("%d session logs, want 2", len(logs))
	}
	// Oldest first by the log's time: run ids of one minute sort by their
	// random suffix, not by when they ran.
	slices.SortFunc(logs, func(a, b string) int {
		ia, _ := os.Stat(a)
		ib, _ := os.Stat(b)
		return ia.ModTime().Compare(ib.ModTime())
	})
	asked := 0
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `"request_id":"ctx_`) {
			asked++
		} else if asked == 0 {
			t.Errorf("the first run did not ask claude about its window: %s", l)
		}
	}
	if asked != 1 {
		t.Errorf("%d runs asked claude about its window, want the first only", asked)
	}
	if !h.exists(".debussy/context-answers.json") {
		t.Error("no kept answers")
	}
}
