package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The quick start in a repository that tracks .gitignore: `debussy init`
// adds debussy's line to it, and the next step, `debussy run`, goes ahead
// (it refused "uncommitted changes to tracked files: .gitignore"); the
// phase's commit takes the line in and the tree ends clean.
func TestQuickStartTrackedGitignore(t *testing.T) {
	claudetest.OncePerSuite(t, "init then run in a repository that tracks .gitignore")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "alpha\n")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}}}, "")
	h.write(".gitignore", "node_modules/\n")
	h.git("commit", "-q", "-am", "the project's own .gitignore")

	if r := h.run("init"); r.Code != 0 || !strings.Contains(r.Stdout, "added .debussy/") {
		t.Fatalf("init: %s", r)
	}
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("run after init: %s", r)
	}
	if files := h.git("show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, ".gitignore") || !strings.Contains(files, "a.txt") {
		t.Errorf("the phase's commit does not take in .gitignore and the work: %q", files)
	}
	if st := h.git("status", "--porcelain", "--untracked-files=no"); strings.TrimSpace(st) != "" {
		t.Errorf("tracked files left changed: %q", st)
	}
}

// The README's starter plan, pasted into a fresh repository, runs: its
// shell part writes and commits the plan, `debussy init` then `debussy run`
// finish the phase with the real CLI (the fake model does the task).
func TestReadmeStarterPlanRuns(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```sh\nmkdir -p plan\n")
	block, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("README has no starter plan block")
	}
	var shell strings.Builder
	shell.WriteString("mkdir -p plan\n")
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		if r, isDebussy := strings.CutPrefix(line, "debussy "); isDebussy {
			r, _, _ = strings.Cut(r, "#")
			cmds = append(cmds, strings.Fields(r))
			continue
		}
		shell.WriteString(line + "\n")
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "hello", Match: "phase-1.md", Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("hello.txt", "hello from debussy\n")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, nil, "")
	sh := exec.Command("sh", "-e", "-c", shell.String())
	sh.Dir = h.Repo
	sh.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the starter plan's shell part: %v\n%s", err, out)
	}
	for _, args := range cmds {
		if r := h.run(args...); r.Code != 0 {
			t.Fatalf("debussy %v: %s", args, r)
		}
	}
	if !h.exists("hello.txt") || len(cmds) != 2 {
		t.Errorf("the starter plan did not run: commands %v", cmds)
	}
}
