package tests

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// A two-phase plan completes: each phase's session does its work and signals
// done, the gates pass, each phase ends in a commit, exit 0.
func TestRunTwoPhasesComplete(t *testing.T) {
	claudetest.CLISensitive(t, "a whole session: stream, hooks, done")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Text("Writing a.txt."), fakeapi.Write("a.txt", "alpha\n")),
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat a.txt > b.txt && debussy done --phase 2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}},
		{ID: "2", Title: "Beta", Deps: []string{"1"}, Gates: []string{"copied: `grep -q alpha b.txt`"}},
	}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	// Without a terminal: plain log lines, no live panel, no colours.
	if strings.Contains(r.Stderr+r.Stdout, "\x1b[") || strings.Contains(r.Stderr, " · session ") {
		t.Errorf("escapes or a panel without a terminal:\n%s", r)
	}
	log := h.git("log", "--format=%s%n%(trailers:key=Debussy-Event,valueonly)")
	for _, want := range []string{`phase 1 "Alpha" — completed`, `phase 2 "Beta" — completed`} {
		if !strings.Contains(log, want) {
			t.Errorf("git log lacks %q:\n%s", want, log)
		}
	}
	if files := h.git("show", "--name-only", "--format=", "HEAD~1"); !strings.Contains(files, "a.txt") {
		t.Errorf("phase 1 commit should hold the new file a.txt, has: %q", files)
	}
	if st := h.git("status", "--porcelain"); st != "" {
		t.Errorf("tree not clean after the run: %q", st)
	}
	// Phase 2's prompt names its own phase and the exact completion command.
	p2 := h.sessionsOf(phaseMatch("2"))
	if len(p2) != 1 || !strings.Contains(p2[0], "debussy done --phase 2") {
		t.Errorf("phase 2 sessions: %q", p2)
	}
	h.noOrphans()
}

// The product: phase 1's first session writes files, then its context climbs
// past 80 % while a slow Bash tool runs. The tool finishes (its file is
// committed), no further tool runs, the commit carries the trailers, the
// second session's prompt names every file the first wrote, it signals done,
// phase 2 runs, exit 0.
func TestRunRestartsBeforeContextFills(t *testing.T) {
	claudetest.CLISensitive(t, "a restart during a slow tool")
	slow := fakeapi.Turn{Usage: usage(170000), Blocks: []fakeapi.Block{
		fakeapi.Text("A slow check."), fakeapi.Bash(pause("2") + " && echo checked > slow.txt")}}
	never := fakeapi.Turn{Usage: usage(171000), Delay: fakeapi.Duration(3e9), Blocks: []fakeapi.Block{
		fakeapi.Bash("echo must not run > never.txt")}}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1-s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(30000, fakeapi.Write("src/one.txt", "one\n"), fakeapi.Write("two.txt", "two\n")),
			turn(90000, fakeapi.Bash("debussy progress --phase 1 'one and two written'")),
			slow, never,
		}},
		{Name: "p1-s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(15000, done("1")),
			turn(16000, fakeapi.Text("Done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(15000, done("2")),
			turn(16000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Files", Gates: []string{"slow: `test -f slow.txt`"}},
		{ID: "2", Title: "After", Deps: []string{"1"}},
	}, "model: claude-sonnet-4-5\nhandoff: false\n") // plain restart; stages_e2e_test.go has the handoff
	r := h.run("run", "plan/MASTER_PLAN.md", "--context-threshold", "80")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !h.exists("slow.txt") {
		t.Error("the tool running when the threshold was crossed did not finish")
	}
	if h.exists("never.txt") {
		t.Error("a tool ran after the stop was requested")
	}
	if !strings.Contains(r.Stderr, "threshold crossed") || !strings.Contains(r.Stderr, "stopping") {
		t.Errorf("stderr does not report the threshold: %s", r.Stderr)
	}
	// The checkpoint commit holds the files and carries the trailers.
	ck := h.git("log", "--grep", "checkpoint before restart 1/3", "--format=%H")
	if ck == "" {
		t.Fatalf("no checkpoint commit:\n%s", h.git("log", "--format=%s"))
	}
	files := h.git("show", "--name-only", "--format=", ck)
	for _, f := range []string{"src/one.txt", "two.txt", "slow.txt"} {
		if !strings.Contains(files, f) {
			t.Errorf("checkpoint commit lacks %s: %q", f, files)
		}
	}
	trailers := h.git("show", "-s", "--format=%(trailers)", ck)
	for _, want := range []string{"Debussy-Run:", "Debussy-Phase: 1", "Debussy-Event: restart", "Debussy-Session: 1"} {
		if !strings.Contains(trailers, want) {
			t.Errorf("checkpoint commit trailers lack %q:\n%s", want, trailers)
		}
	}
	// The second session starts from the checkpoint.
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 {
		t.Fatalf("want 2 sessions of phase 1, got %d", len(s))
	}
	for _, want := range []string{"src/one.txt", "two.txt", "slow.txt", "one and two written", "restart 1"} {
		if !strings.Contains(s[1], want) {
			t.Errorf("restarted session's prompt lacks %q:\n%s", want, s[1])
		}
	}
	if len(h.sessionsOf(phaseMatch("2"))) != 1 {
		t.Error("phase 2 did not run once")
	}
	st := h.status()
	phases := st["phases"].([]any)
	p1 := phases[0].(map[string]any)
	if p1["restarts"].(float64) != 1 || p1["status"] != "completed" {
		t.Errorf("status of phase 1: %v", p1)
	}
	h.noOrphans()
}
