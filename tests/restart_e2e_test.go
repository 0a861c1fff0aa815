package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// overflowing is a conversation whose first turn already sits above 80 % of
// a 200K window: every session of it crosses the threshold.
func overflowing(name, match, file string) fakeapi.Conversation {
	return fakeapi.Conversation{Name: name, Match: match, Turns: []fakeapi.Turn{
		turn(175000, fakeapi.Bash("echo "+name+" > "+file)),
		turn(176000, fakeapi.Text("still going")),
	}}
}

// Every session crosses the threshold: after max_restarts the run fails
// with exit 1, says so, and every session's work is committed.
func TestRunMaxRestartsExceeded(t *testing.T) {
	claudetest.OncePerSuite(t, "max_restarts and the commits of every session")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		overflowing("s1", phaseMatch("1"), "s1.txt"),
		overflowing("s2", phaseMatch("1"), "s2.txt"),
		overflowing("s3", phaseMatch("1"), "s3.txt"),
	}}
	// handoff: false — plain restarts; stages_e2e_test.go has the handoff.
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Endless"}, {ID: "2", Title: "Never", Deps: []string{"1"}}},
		"model: claude-sonnet-4-5\nhandoff: false\n")
	r := h.run("run", "plan/MASTER_PLAN.md", "--max-restarts", "2")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if !strings.Contains(r.Stderr, "max restarts (2) exceeded") {
		t.Errorf("stderr does not say max restarts were exceeded:\n%s", r.Stderr)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 3 {
		t.Errorf("want 3 sessions (1 + 2 restarts), got %d", n)
	}
	if len(h.sessionsOf(phaseMatch("2"))) != 0 {
		t.Error("phase 2 ran after phase 1 failed")
	}
	tracked := h.git("ls-files")
	for _, f := range []string{"s1.txt", "s2.txt", "s3.txt"} {
		if !strings.Contains(tracked, f) {
			t.Errorf("%s not committed; tracked: %s", f, tracked)
		}
	}
	if st := h.git("status", "--porcelain"); st != "" {
		t.Errorf("work left uncommitted: %q", st)
	}
}

// --tool-call-threshold triggers a restart on its own.
func TestRunToolCallThresholdRestarts(t *testing.T) {
	claudetest.OncePerSuite(t, "the --tool-call-threshold flag")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "busy", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo 1 > t1.txt")),
			turn(11000, fakeapi.Bash("echo 2 > t2.txt")),
			turn(12000, fakeapi.Bash("echo 3 > t3.txt")),
			turn(13000, fakeapi.Bash("echo 4 > t4.txt")),
		}},
		{Name: "fresh", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Busy"}}, "handoff: false\n")
	r := h.run("run", "plan/MASTER_PLAN.md", "--tool-call-threshold", "2")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "tool calls 2") {
		t.Errorf("stderr does not name the tool-call trigger:\n%s", r.Stderr)
	}
	if h.exists("t4.txt") {
		t.Error("tools kept running after the tool-call trigger")
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 2 {
		t.Errorf("want 2 sessions, got %d", n)
	}
}

// The triggers can be disabled: --context-threshold 100, --max-restarts 0.
// The first row, without either, restarts at the same context: it shows
// the other two would restart but for their flag. The context stays above
// the 80 % threshold and below ~177K, where every supported CLI lets the
// session go on (2.1.112 ends it itself with "Prompt is too long" at 185K
// on this 200K model; 2.1.197 and 2.1.332 do not), so the test is about
// debussy's flags alone. Without a handoff stage, the restart comes right
// after the tool that crossed (with one, the agent's done came first and
// no row restarted).
func TestRunRestartsDisabled(t *testing.T) {
	claudetest.OncePerSuite(t, "the flags that disable restarts")
	for _, tc := range []struct {
		flags    []string
		sessions int
	}{
		{nil, 2},
		{[]string{"--context-threshold", "100"}, 1},
		{[]string{"--max-restarts", "0"}, 1},
	} {
		t.Run(strings.Join(append([]string{"flags"}, tc.flags...), "="), func(t *testing.T) {
			script := fakeapi.Script{Conversations: []fakeapi.Conversation{
				{Name: "full", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(168000, fakeapi.Bash("echo a > a.txt")),
					turn(169000, fakeapi.Bash("echo b > b.txt")),
					turn(170000, done("1")),
					turn(171000, fakeapi.Text("ok")),
				}},
				{Name: "fresh", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(10000, fakeapi.Bash("echo b > b.txt")),
					turn(11000, done("1")),
					turn(12000, fakeapi.Text("ok")),
				}},
			}}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Full"}}, "model: claude-sonnet-4-5\nhandoff: false\n")
			r := h.run(append([]string{"run", "plan/MASTER_PLAN.md"}, tc.flags...)...)
			if r.Code != 0 {
				t.Fatalf("want exit 0: %s", r)
			}
			if n := len(h.API.Sessions()); n != tc.sessions {
				t.Errorf("want %d sessions, got %d", tc.sessions, n)
			}
			if !h.exists("b.txt") {
				t.Error("b.txt was not written")
			}
		})
	}
}

// The window follows the model: a 1M-window model at 300K tokens does not
// restart; a 200K model at 170K does.
func TestRunWindowFollowsModel(t *testing.T) {
	claudetest.CLISensitive(t, "the model's window as the CLI reports it")
	cases := []struct {
		name, model string
		tokens      int64
		sessions    int
	}{
		{"1M window at 300K", "", 300000, 1}, // the CLI's default model has a 1M window
		{"200K window at 170K", "claude-sonnet-4-5", 170000, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := fakeapi.Script{Conversations: []fakeapi.Conversation{
				// The handoff write ends a session asked for it (the 200K
				// window); the 1M window asks for none and goes on to done.
				{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(tc.tokens, fakeapi.Bash("echo a > a.txt")),
					turn(tc.tokens+1000, writeHandoff("## Completed\\nwindow test")),
					turn(tc.tokens+1500, done("1")),
					turn(tc.tokens+2000, fakeapi.Text("ok")),
				}},
				{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
					turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
				}},
			}}
			cfg := ""
			if tc.model != "" {
				cfg = "model: " + tc.model + "\n"
			}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Window"}}, cfg)
			r := h.run("run", "plan/MASTER_PLAN.md")
			if r.Code != 0 {
				t.Fatalf("want exit 0: %s", r)
			}
			if n := len(h.API.Sessions()); n != tc.sessions {
				t.Errorf("want %d sessions, got %d", tc.sessions, n)
			}
		})
	}
}

// "Prompt is too long" (a 400 the CLI reports as success + is_error, after a
// failed reactive compaction) means the context filled before a trigger
// fired: debussy restarts from a checkpoint rather than retrying the same
// overfull session.
func TestRunPromptTooLongRestarts(t *testing.T) {
	claudetest.CLISensitive(t, "\"Prompt is too long\" as the CLI reports it")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "full", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo a > a.txt")),
			{Status: 400},
		}},
		{Name: "fresh", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Full"}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 || !strings.Contains(s[1], "a.txt") || !strings.Contains(s[1], "prompt too long") {
		t.Errorf("want a restart from a checkpoint naming a.txt and why; sessions %d", len(s))
	}
	if log := h.git("log", "--format=%s"); !strings.Contains(log, "checkpoint before restart 1/3") {
		t.Errorf("no restart commit:\n%s", log)
	}
}
