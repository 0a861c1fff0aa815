package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Ctrl-C while the user's pre-commit hook hangs (sleep 120) at the phase's
// final commit: the hook's process group dies with the run, debussy exits
// 130 within 10 s, the work is still in the tree, nothing is committed and
// the index is neither locked nor changed; the rerun, with the hook made
// fast, resumes the phase and commits the work.
func TestCtrlCDuringPreCommitHook(t *testing.T) {
	claudetest.OncePerSuite(t, "Ctrl-C during a user's git hook: debussy's git, not the CLI")
	marks := marksDir(t)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "work", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Write("work.txt", "the agent's work\n")),
			turn(11000, done("1")),
			turn(12000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "resumed", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Hooked"}}, "")
	hookPath := filepath.Join(h.Repo, ".git", "hooks", "pre-commit")
	hung := filepath.Join(marks, "hook-started")
	if err := os.WriteFile(hookPath, []byte("#!/bin/sh\ntouch "+hung+"\nsleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	indexBefore, err := os.ReadFile(filepath.Join(h.Repo, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	headBefore := h.git("rev-parse", "HEAD")

	cmd, stdout, stderr := h.command("run", "plan/MASTER_PLAN.md")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := os.Stat(hung); return err == nil }, 2*time.Minute)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := h.wait(cmd, stdout, stderr, time.Minute)
	took := time.Since(sent)
	if r.Code != 130 {
		t.Fatalf("want exit 130: %s", r)
	}
	if took > 10*time.Second {
		t.Errorf("Ctrl-C during the hook took %s to exit, want under 10 s", took)
	}
	if !h.exists("work.txt") {
		t.Fatal("the agent's work is gone from the tree")
	}
	if head := h.git("rev-parse", "HEAD"); head != headBefore {
		t.Errorf("HEAD moved from %s to %s: a commit was made although its hook never finished", headBefore, head)
	}
	if h.exists(".git/index.lock") {
		t.Error(".git/index.lock left behind")
	}
	if after, err := os.ReadFile(filepath.Join(h.Repo, ".git", "index")); err != nil || string(after) != string(indexBefore) {
		t.Errorf("the index changed (err %v): the interrupted commit must leave it as it was", err)
	}
	h.fsck()
	h.noOrphans()

	if err := os.WriteFile(hookPath, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("rerun: want exit 0: %s", r)
	}
	if !strings.Contains(h.git("ls-tree", "-r", "--name-only", "HEAD"), "work.txt") {
		t.Errorf("the rerun did not commit the interrupted phase's work:\n%s", h.git("log", "--stat", "-3"))
	}
	if st := h.git("status", "--porcelain", "--", "work.txt"); st != "" {
		t.Errorf("work.txt not clean after the rerun: %q", st)
	}
}
