package tests

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Untracked files present when the run starts are the user's: no debussy
// commit carries them. A file the agent creates is committed, and so is a
// user file the agent rewrites, with a commit body that says so.
func TestRunLeavesUserFilesOut(t *testing.T) {
	claudetest.OncePerSuite(t, "the user's files kept out of commits")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Text("Writing a.txt and fixing the todo list."),
				fakeapi.Write("a.txt", "alpha\n"), fakeapi.Bash("echo done > todo.txt")),
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}}}, "")
	h.write("local-notes.txt", "ANTHROPIC_API_KEY=sk-not-for-git\n")
	h.write("scratch/idea.md", "half an idea\n")
	h.write("todo.txt", "to do\n")
	base := h.git("rev-parse", "HEAD")

	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "untracked files found at the start are yours") || !strings.Contains(r.Stderr, "local-notes.txt") {
		t.Errorf("the start does not say which untracked files are left out:\n%s", r.Stderr)
	}
	committed := h.git("log", "--name-only", "--format=", base+"..HEAD")
	for _, want := range []string{"a.txt", "todo.txt"} {
		if !strings.Contains(committed, want) {
			t.Errorf("%s is the agent's work but no debussy commit has it:\n%s", want, committed)
		}
	}
	for _, mine := range []string{"local-notes.txt", "scratch/idea.md"} {
		if strings.Contains(committed, mine) {
			t.Errorf("a debussy commit carries the user's %s:\n%s", mine, committed)
		}
	}
	if body := h.git("log", "--format=%B", base+"..HEAD"); !strings.Contains(body, "changed by the agent since, so committed as its work:\n  todo.txt") {
		t.Errorf("no commit says todo.txt was the user's and the agent changed it:\n%s", body)
	}
	if st := h.git("status", "--porcelain", "--untracked-files=all"); st != "?? local-notes.txt\n?? scratch/idea.md" {
		t.Errorf("git status after the run = %q, want the user's two files untracked", st)
	}
}

// A repository without a commit is refused before anything runs: every
// file in it is the user's.
func TestRunRefusesRepositoryWithoutCommit(t *testing.T) {
	claudetest.OncePerSuite(t, "a repository without a commit")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.git("update-ref", "-d", "HEAD") // back to an unborn branch, files staged
	for _, args := range [][]string{{"run", "--dry-run", "plan/MASTER_PLAN.md"}, {"run", "plan/MASTER_PLAN.md"}} {
		// Not h.run: its fsck reports the unborn branch.
		cmd, stdout, stderr := h.command(args...)
		err := cmd.Run()
		r := result{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("run debussy: %v", err)
		}
		if r.Code != 2 || !strings.Contains(r.Stderr, "has no commit yet") {
			t.Errorf("debussy %s: want exit 2 saying there is no commit yet: %s", strings.Join(args, " "), r)
		}
	}
	if err := exec.Command("git", "-C", h.Repo, "rev-parse", "--verify", "-q", "HEAD").Run(); err == nil {
		t.Error("a commit was made")
	}
}

// kill -9 mid-session: the next run commits the dead run's leftovers, and
// still not the files that were the user's when the dead run started.
func TestRunKill9KeepsUserFilesOut(t *testing.T) {
	claudetest.OncePerSuite(t, "the user's files after kill -9")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "long", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Write("kept.txt", "kept\n")),
			turn(11000, fakeapi.Bash("touch started.txt; "+pause("300"))),
		}},
		{Name: "resumed", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Long"}}, "")
	h.write("local-notes.txt", "ANTHROPIC_API_KEY=sk-not-for-git\n")
	base := h.git("rev-parse", "HEAD")
	cmd, stdout, stderr := h.command("run", "plan/MASTER_PLAN.md")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return h.exists("started.txt") }, time.Minute)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = h.wait(cmd, stdout, stderr, time.Minute)

	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("rerun: want exit 0: %s", r)
	}
	committed := h.git("log", "--name-only", "--format=", base+"..HEAD")
	if !strings.Contains(committed, "kept.txt") {
		t.Errorf("the killed run's kept.txt was not committed:\n%s", committed)
	}
	if strings.Contains(committed, "local-notes.txt") {
		t.Errorf("a debussy commit carries the user's local-notes.txt:\n%s", committed)
	}
	h.noOrphans()
}

// The agent stages the user's files itself (git add -A, git add -N) and
// renames one: still no debussy commit carries them, and the index keeps
// only what the agent staged of them, nothing of its own work against
// the commits (issue 55).
func TestRunLeavesUserFilesOutWhenTheAgentStagesThem(t *testing.T) {
	claudetest.OncePerSuite(t, "the user's files, staged by the agent, kept out of commits")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Text("Writing a.txt and staging everything."),
				fakeapi.Write("a.txt", "alpha\n"),
				fakeapi.Bash("mv moved.md renamed.md && git add -A && git add -N scratch/later.md")),
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.write("local-notes.txt", "ANTHROPIC_API_KEY=sk-not-for-git\n")
	h.write("scratch/idea.md", "half an idea\n")
	h.write("moved.md", "the user's, to be renamed\n")
	base := h.git("rev-parse", "HEAD")
	h.write("scratch/later.md", "the user's too\n")

	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	committed := h.git("log", "--name-only", "--format=", base+"..HEAD")
	if !strings.Contains(committed, "a.txt") {
		t.Errorf("a.txt is the agent's work but no debussy commit has it:\n%s", committed)
	}
	for _, mine := range []string{"local-notes.txt", "scratch/idea.md", "scratch/later.md", "moved.md", "renamed.md"} {
		if strings.Contains(committed, mine) {
			t.Errorf("a debussy commit carries the user's %s:\n%s", mine, committed)
		}
	}
	// Staged against the last commit: only the user's files the agent
	// staged, never the agent's own work shown as staged-reverted.
	for _, p := range strings.Fields(h.git("diff", "--cached", "--name-only", "--no-renames", "HEAD")) {
		switch p {
		case "local-notes.txt", "scratch/idea.md", "scratch/later.md", "renamed.md":
		default:
			t.Errorf("%s is staged against debussy's commit", p)
		}
	}
}
