package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// slowHook is how long phase 1's pre-commit hook sleeps.
const slowHook = 30 * time.Second

// Under --parallel 2, phase 1's completing commit runs the user's 30 s
// pre-commit hook (only on phase 1's branch); phase 2, which starts its
// work once that hook runs, ends, commits and is recorded (its commit and
// phase_ended in events.jsonl) while the hook still sleeps: no phase waits
// on another's commit. Then the run completes with both phases merged.
func TestParallelOwnerSlowHookHoldsNoPhase(t *testing.T) {
	claudetest.OncePerSuite(t, "no lock held across a phase's commit under --parallel")
	marks := marksDir(t)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("echo one > one.txt")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(awaitMark(marks, "committing", time.Minute))),
			turn(21000, fakeapi.Bash("echo two > two.txt")),
			turn(22000, done("2")),
			turn(23000, fakeapi.Text("Phase 2 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Commits slowly"}, {ID: "2", Title: "Ends meanwhile"}}, "")
	// The hook notes when it starts and when it ends, in nanoseconds.
	hook := fmt.Sprintf("#!/bin/sh\ncase \"$(git rev-parse --abbrev-ref HEAD)\" in *phase-1*)\n"+
		"  date +%%s%%N > %[1]s/started; touch %[1]s/committing; sleep %[2]d; date +%%s%%N > %[1]s/ended;;\nesac\nexit 0\n",
		marks, int(slowHook.Seconds()))
	if err := os.WriteFile(filepath.Join(h.Repo, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	started, ended := nanoFile(t, marks, "started"), nanoFile(t, marks, "ended")

	// Phase 2's end, as the run recorded it, fell inside phase 1's hook.
	var phase2Ended, phase2Commit time.Time
	for _, line := range strings.Split(h.runFiles("events.jsonl"), "\n") {
		var ev struct {
			TS    time.Time `json:"ts"`
			Event string    `json:"event"`
			Phase string    `json:"phase"`
			Kind  string    `json:"kind"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Phase != "2" {
			continue
		}
		switch {
		case ev.Event == "phase_ended":
			phase2Ended = ev.TS
		case ev.Event == "commit" && ev.Kind == "completed":
			phase2Commit = ev.TS
		}
	}
	if phase2Ended.IsZero() || phase2Commit.IsZero() {
		t.Fatalf("phase 2's commit (%s) or phase_ended (%s) not in events.jsonl", phase2Commit, phase2Ended)
	}
	for what, at := range map[string]time.Time{"commit": phase2Commit, "phase_ended": phase2Ended} {
		if !at.After(started) || !at.Before(ended) {
			t.Errorf("phase 2's %s recorded at %s, not while phase 1's hook ran (%s – %s): it waited on phase 1's commit",
				what, at.Format(time.RFC3339Nano), started.Format(time.RFC3339Nano), ended.Format(time.RFC3339Nano))
		}
	}

	// Both phases are done and merged into the user's branch.
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(h.Repo, f)); err != nil {
			t.Errorf("%s not in the user's tree: %v", f, err)
		}
	}
	if merges := h.git("rev-list", "--merges", "--count", "HEAD"); merges != "2" {
		t.Errorf("%s merge commits, want 2", merges)
	}
	phases, _ := h.status()["phases"].([]any)
	if len(phases) != 2 {
		t.Fatalf("status --json has %d phases, want 2", len(phases))
	}
	for _, p := range phases {
		if m := p.(map[string]any); m["status"] != "completed" || m["merge"] == nil {
			t.Errorf("status --json: %v", m)
		}
	}
	h.noOrphans()
}

// nanoFile reads the time `date +%s%N` wrote in marks/name.
func nanoFile(t *testing.T, marks, name string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(marks, name))
	if err != nil {
		t.Fatalf("phase 1's hook did not write %s: %v", name, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return time.Unix(0, ns)
}
