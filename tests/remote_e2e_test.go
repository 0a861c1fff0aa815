package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// e2ePlanBranch is plans.PhaseBranch for the harness's plan/MASTER_PLAN.md.
func e2ePlanBranch(phase string) string { return "debussy/plan-master-plan/phase-" + phase }

// withOrigin gives the harness's repository a bare origin holding main.
func (h *harness) withOrigin() string {
	h.t.Helper()
	origin := filepath.Join(h.t.TempDir(), "origin.git")
	claudetest.Git(h.t, h.t.TempDir(), "init", "-q", "--bare", origin)
	h.git("remote", "add", "origin", origin)
	h.git("push", "-q", "origin", "HEAD:refs/heads/main")
	return origin
}

// cloneOf is another machine's harness: a fresh clone of origin's main,
// the same fake API and CLI.
func (h *harness) cloneOf(origin string) *harness {
	h.t.Helper()
	dir := filepath.Join(h.t.TempDir(), "clone")
	claudetest.Git(h.t, h.t.TempDir(), "clone", "-q", "--branch", "main", origin, dir)
	claudetest.Git(h.t, dir, "config", "user.name", "Other Machine")
	claudetest.Git(h.t, dir, "config", "user.email", "other@debussy.invalid")
	c := *h
	c.Repo = dir
	c.runs = newInFlight(h.t, c.fsck)
	return &c
}

// originTip is branch's commit on the bare origin, "" when it has none.
func originTip(origin, branch string) string {
	out, _ := exec.Command("git", "-C", origin, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output()
	return strings.TrimSpace(string(out))
}

// A plan's DAG as CI jobs on two machines sharing only a bare origin:
// phase 1 runs in one clone with --push, phase 2 (depends on 1) in another
// with --base deps --push; phase 2 starts from phase 1's files, and each
// phase's branch on origin ends with its completed commit.
func TestCIJobsMergeDepsAndPush(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's merge on start and push")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
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
	origin := h.withOrigin()
	job1, job2 := h.cloneOf(origin), h.cloneOf(origin)

	// Phase 2 before phase 1 has a branch: refused, naming the branch.
	if r := job2.run("run", "plan/MASTER_PLAN.md", "--only", "2", "--base", "deps", "--push", "origin"); r.Code != 2 ||
		!strings.Contains(r.Stderr, e2ePlanBranch("1")) {
		t.Fatalf("phase 2 before phase 1: %s", r)
	}
	if r := job1.run("run", "plan/MASTER_PLAN.md", "--only", "1", "--push", "origin"); r.Code != 0 {
		t.Fatalf("job 1: %s", r)
	}
	if tip := originTip(origin, e2ePlanBranch("1")); tip == "" || tip != job1.git("rev-parse", "HEAD") {
		t.Fatalf("phase 1's branch on origin at %q, want job 1's HEAD", tip)
	}
	r := job2.run("run", "plan/MASTER_PLAN.md", "--only", "2", "--base", "deps", "--push", "origin")
	if r.Code != 0 {
		t.Fatalf("job 2: %s", r)
	}
	tip := originTip(origin, e2ePlanBranch("2"))
	if tip == "" || tip != job2.git("rev-parse", "HEAD") {
		t.Fatalf("phase 2's branch on origin at %q, want job 2's HEAD", tip)
	}
	files := claudetest.Git(t, origin, "ls-tree", "-r", "--name-only", tip)
	if !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") {
		t.Errorf("phase 2's branch lacks a file:\n%s", files)
	}
	if ev := claudetest.Git(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); ev != "completed" {
		t.Errorf("phase 2's branch ends with event %q", ev)
	}
	if n := len(h.sessionsOf(phaseMatch("2"))); n != 1 {
		t.Errorf("phase 2 ran %d sessions, want 1", n)
	}
	if st := job2.git("status", "--porcelain"); st != "" {
		t.Errorf("job 2's tree not clean: %q", st)
	}
}

// A usage limit is the account's: the job that meets it records the reset
// in its pushed commit and exits 75; the next job, on another machine,
// sends no request to the API before that reset, then does its phase.
func TestCIJobsHoldAtAUsageLimit(t *testing.T) {
	claudetest.OncePerSuite(t, "the account hold read from git")
	const limit = 30 * time.Second
	script := limitScript(limit)
	script.Conversations = append(script.Conversations, fakeapi.Conversation{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("c.txt", "gamma\n")),
		turn(21000, done("2")),
		turn(22000, fakeapi.Text("Phase 2 done.")),
	}})
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}, {ID: "2", Title: "Beta"}}, "")
	h.Env = oauth(h.Env)
	origin := h.withOrigin()
	job1, job2 := h.cloneOf(origin), h.cloneOf(origin)

	r := job1.run("run", "plan/MASTER_PLAN.md", "--only", "1", "--push", "origin", "--usage-limit-wait", "0")
	if r.Code != 75 {
		t.Fatalf("job 1: want exit 75: %s", r)
	}
	first, _ := h.limitHit()
	if first.IsZero() {
		t.Fatal("the fake API never answered with the limit")
	}
	tip := originTip(origin, e2ePlanBranch("1"))
	rec := claudetest.Git(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Usage-Limit,valueonly)", tip)
	if !strings.HasPrefix(rec, "five_hour; resets=") {
		t.Fatalf("phase 1's pushed commit records no usage limit: %q", rec)
	}

	start := time.Now()
	r = job2.run("run", "plan/MASTER_PLAN.md", "--only", "2", "--push", "origin")
	if r.Code != 0 {
		t.Fatalf("job 2: %s", r)
	}
	if !strings.Contains(r.Stderr, "met by phase 1") || !strings.Contains(r.Stderr, "waiting — Ctrl-C stops") {
		t.Errorf("job 2 did not say it waits for the account's limit:\n%s", r.Stderr)
	}
	if n := h.requestsDuring(start, first.Add(limit)); n != 0 {
		t.Errorf("job 2 sent %d requests before the reset, want none", n)
	}
	if first, last := h.limitHit(); first != last {
		t.Errorf("more than one request met the limit")
	}
	if n := len(h.sessionsOf(phaseMatch("2"))); n != 1 {
		t.Errorf("phase 2 ran %d sessions, want 1 after the reset", n)
	}
	if tip := originTip(origin, e2ePlanBranch("2")); tip == "" || tip != job2.git("rev-parse", "HEAD") {
		t.Errorf("phase 2's branch on origin at %q, want job 2's HEAD", tip)
	}
}

// A job killed after its commit, while the push hangs: nothing is lost —
// the same command on that machine pushes the commit first and starts no
// session for the completed phase.
func TestCIJobKilledBetweenCommitAndPush(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's push after a kill")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	origin := h.withOrigin()
	job := h.cloneOf(origin)
	mark := filepath.Join(t.TempDir(), "pushing")
	hook := filepath.Join(origin, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+mark+"\nsleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, _, stderr := job.command("run", "plan/MASTER_PLAN.md", "--only", "1", "--push", "origin")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the push never started\n%s", stderr)
		}
	}
	committed := job.git("rev-parse", "HEAD")
	if ev := job.git("log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)"); ev != "completed" {
		t.Fatalf("HEAD's event %q while pushing, want the completed commit", ev)
	}
	_ = cmd.Process.Kill() // SIGKILL: no chance to push or clean up
	_ = cmd.Wait()
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if tip := originTip(origin, e2ePlanBranch("1")); tip != "" {
		t.Fatalf("the hung push landed: %s", tip)
	}

	r := job.run("run", "plan/MASTER_PLAN.md", "--only", "1", "--push", "origin")
	if r.Code != 0 {
		t.Fatalf("rerun: %s", r)
	}
	if !strings.Contains(r.Stderr, "pushing first") {
		t.Errorf("the rerun did not say it pushes first:\n%s", r.Stderr)
	}
	if tip := originTip(origin, e2ePlanBranch("1")); tip != committed {
		t.Errorf("origin's branch at %q, want the killed job's commit %s", tip, committed)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("phase 1 ran %d sessions, want 1 (the rerun starts none)", n)
	}
	job.noOrphans()
}
