package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// In CI: --log-format json gives one JSON object per stderr line, the exit
// code is the contract, and GITHUB_STEP_SUMMARY gets a markdown summary.
func TestRunCIJSONLogAndStepSummary(t *testing.T) {
	claudetest.OncePerSuite(t, "the JSON log and the CI step summary")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo ok > ok.txt && debussy done --phase 1")), turn(11000, fakeapi.Text("ok")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash(`debussy done --phase 2 --status failed --reason "cannot"`)), turn(11000, fakeapi.Text("no")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Good", Gates: []string{"ok: `test -f ok.txt`"}},
		{ID: "2", Title: "Bad", Deps: []string{"1"}, Gates: []string{"never: `false`"}},
	}, "")
	summary := filepath.Join(t.TempDir(), "summary.md")
	h.Env = append(h.Env, "GITHUB_STEP_SUMMARY="+summary)
	r := h.run("run", "plan/MASTER_PLAN.md", "--log-format", "json", "--max-retries", "0")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for i, line := range strings.Split(strings.TrimSpace(r.Stderr), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("stderr line %d is not JSON: %q", i+1, line)
		}
		if _, ok := obj["time"]; !ok {
			t.Errorf("line %d has no time: %q", i+1, line)
		}
	}
	if strings.Contains(r.Stderr, "\x1b[") {
		t.Error("colour escapes on stderr without a TTY")
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("no step summary: %v", err)
	}
	for _, want := range []string{"| 1 | Good | completed |", "| 2 | Bad | failed |", "cannot"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}
}

// A second Ctrl-C kills the session at once; state is still saved, exit 130,
// no orphans.
func TestRunSecondInterruptKills(t *testing.T) {
	claudetest.CLISensitive(t, "how the CLI ends on a second interrupt")
	h, cmd, stdout, stderr := startLongTool(t)
	_ = cmd.Process.Signal(syscall.SIGINT)
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "Ctrl-C again") }, 10*time.Second)
	sent := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	r := h.wait(cmd, stdout, stderr, time.Minute)
	if r.Code != 130 {
		t.Fatalf("want exit 130: %s", r)
	}
	if took := time.Since(sent); took > 8*time.Second {
		t.Errorf("second Ctrl-C took %s", took)
	}
	st := h.status()
	if st["status"] != "interrupted" {
		t.Errorf("run status %v, want interrupted", st["status"])
	}
	if !strings.Contains(h.git("ls-files"), "kept.txt") {
		t.Error("work not committed")
	}
	h.noOrphans()
}

// --phase runs from that phase; its unfinished dependencies are an error
// naming them, before any session starts.
func TestRunPhaseFlag(t *testing.T) {
	script := fakeapi.Script{Default: &fakeapi.Conversation{Turns: []fakeapi.Turn{
		turn(10000, fakeapi.Bash("debussy done --phase 2")), turn(11000, fakeapi.Text("ok")),
	}}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "First"},
		{ID: "2", Title: "Second", Deps: []string{"1"}},
		{ID: "3", Title: "Other", Status: "✅ Done"},
	}, "")
	r := h.run("run", "plan/MASTER_PLAN.md", "--phase", "2")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unfinished phase 1") {
		t.Fatalf("want exit 2 naming phase 1: %s", r)
	}
	if n := len(h.API.Requests()); n != 0 {
		t.Fatalf("a session started: %d requests", n)
	}
	// Once phase 1 is marked done in the table, --phase 2 runs just phase 2.
	h.write("plan/MASTER_PLAN.md", strings.Replace(readFile(t, filepath.Join(h.Repo, "plan/MASTER_PLAN.md")),
		"| 1 | [First](phase-1.md) | test | Low | Not Started |", "| 1 | [First](phase-1.md) | test | Low | Done |", 1))
	h.git("commit", "-qam", "phase 1 done")
	r = h.run("run", "plan/MASTER_PLAN.md", "--phase", "2")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if n := len(h.API.Sessions()); n != 1 || !strings.Contains(h.API.Sessions()[0], phaseMatch("2")) {
		t.Errorf("want one session, of phase 2; got %d", n)
	}
	if !strings.Contains(r.Stderr, `phase skipped phase=3 why="completed in the plan's table"`) {
		t.Errorf("phase 3 not reported as skipped:\n%s", r.Stderr)
	}
	// A rerun skips what the ledger says is completed.
	r = h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 || !strings.Contains(r.Stderr, `phase skipped phase=2 why="completed in run`) {
		t.Errorf("rerun should skip phase 2 as completed: %s", r)
	}
	if n := len(h.API.Sessions()); n != 1 {
		t.Errorf("the rerun started a session: %d sessions in all", n)
	}
}
