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

// When Claude Code cannot take its snapshot of the user's shell (here a
// ~/.bashrc that fails it; a slow one or a loaded machine does the same),
// it runs each command in a login shell, whose /etc/profile resets PATH.
// `debussy done` and `debussy progress` still work: debussy's
// CLAUDE_ENV_FILE puts its directory first on PATH again. Before, both were
// "command not found" and the finished phase went to remediation.
func TestAgentShellWithoutSnapshot(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's shell snapshot")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("debussy progress --phase 1 'shell checked'; echo \"PATH=$PATH\"")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Shell"}}, "")
	var home string
	for _, kv := range h.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	// The snapshot script sets SNAPSHOT_FILE, then sources ~/.bashrc.
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("[ -n \"$SNAPSHOT_FILE\" ] && exit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// bash whatever this machine's SHELL is, so the .bashrc above is read.
	h.Env = append(slices.DeleteFunc(h.Env, func(kv string) bool { return strings.HasPrefix(kv, "SHELL=") }), "SHELL=/bin/bash")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if n := len(h.requestsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("want 1 session, got %d", n)
	}
	if !strings.Contains(h.runFiles("progress.jsonl"), "shell checked") {
		t.Error("debussy progress did not reach progress.jsonl")
	}
	// The login shell did run the commands: its PATH is /etc/profile's
	// with debussy's directory put back in front.
	raw := h.runFiles("phase-1/session-1.jsonl")
	if !strings.Contains(raw, "PATH="+filepath.Dir(debussyBin)+":") || strings.Contains(raw, "command not found") {
		t.Errorf("the agent's shell:\n%s", grepLines(raw, "PATH="))
	}
}
