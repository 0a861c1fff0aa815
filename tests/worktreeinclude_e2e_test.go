package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// An ignored .env that .worktreeinclude names: with --parallel 2 both
// phases' gates read it in their worktrees and pass (without the file they
// fail: issue 21 measured exit 1); .env is in no commit of any branch, and
// its secret, which both sessions print, is nowhere under .debussy/ but
// the raw session streams.
func TestWorktreeIncludeE2E(t *testing.T) {
	claudetest.OncePerSuite(t, ".worktreeinclude in parallel phases")
	const secret = "sk-proj-Qm9vYmFyQmF6UXV4Q29yZ2VHcmF1bHRHYXJwbHk1"
	// Phase 2's agent force-adds the copy: it stays out of every commit all the same.
	script := twoParallelPhases(t, "cat .env && printf 'one\\n' > a.txt", "cat .env && printf 'two\\n' > b.txt && git add -f .env")
	gate := "env: `grep -q '^OPENAI_API_KEY=sk-proj-' .env && test \"$(stat -c %a .env)\" = 600`"
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "One", Gates: []string{gate}},
		{ID: "2", Title: "Two", Gates: []string{gate}},
	}, "")
	h.write(".gitignore", ".debussy/\n.env\n")
	h.write(".worktreeinclude", ".env\n")
	h.git("add", ".gitignore", ".worktreeinclude")
	h.git("commit", "-q", "-m", "ignore .env, include it in worktrees")
	h.write(".env", "OPENAI_API_KEY="+secret+"\n")
	if err := os.Chmod(filepath.Join(h.Repo, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}

	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 0 {
		t.Fatalf("run: %s", r)
	}
	if files := h.git("log", "--all", "--name-only", "--format="); strings.Contains("\n"+files+"\n", "\n.env\n") {
		t.Errorf(".env is in a commit:\n%s", files)
	}
	if !strings.Contains(r.Stderr, "the agent staged files copied in from .worktreeinclude") {
		t.Error("the run did not say the agent's staged .env was taken back out")
	}
	if got := h.git("show", "HEAD:a.txt") + h.git("show", "HEAD:b.txt"); got != "onetwo" {
		t.Errorf("a.txt and b.txt: %q", got)
	}
	// The sessions did print it: their raw streams (0600) hold it.
	if raw := h.runFiles("phase-1/session-1.jsonl"); !strings.Contains(raw, secret) {
		t.Error("phase 1's session never printed .env")
	}
	for _, out := range []string{r.Stdout, r.Stderr} {
		if strings.Contains(out, secret) {
			t.Error("debussy's output carries the .env secret")
		}
	}
	checked := 0
	err := filepath.WalkDir(filepath.Join(h.Repo, ".debussy"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (strings.HasPrefix(d.Name(), "session-") && strings.HasSuffix(d.Name(), ".jsonl")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if strings.Contains(string(data), secret) {
			t.Errorf("%s carries the .env secret", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 4 {
		t.Errorf("only %d files under .debussy/ checked", checked)
	}
	if wt := h.git("worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", wt)
	}
	h.noOrphans()
}

// A failing worktree_setup fails its phase before any session (no API
// request at all), naming its exit code and its log; the command, which
// may carry a token, only where text is kept (the ledger).
func TestWorktreeSetupFailsE2E(t *testing.T) {
	claudetest.OncePerSuite(t, "worktree_setup failing")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "One"}, {ID: "2", Title: "Two"}},
		"worktree_setup: \"echo fetching packages; exit 7\"\n")
	before := h.git("rev-parse", "HEAD")
	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2")
	if r.Code != 2 {
		t.Fatalf("want exit 2: %s", r)
	}
	// A piped log shows no text of the user's config (the command may carry
	// a token): what failed, its exit code and its log, without the command.
	for _, want := range []string{"worktree_setup exit 7", "worktree-setup.log", "before its first session"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if n := len(h.API.Requests()); n != 0 {
		t.Errorf("%d API requests: a session started", n)
	}
	if log := h.runFiles("phase-*/worktree-setup.log"); !strings.Contains(log, "fetching packages") || !strings.Contains(log, "exit 7") {
		t.Errorf("worktree-setup.log: %q", log)
	}
	for _, p := range h.status()["phases"].([]any) {
		if m := p.(map[string]any); m["status"] != "failed" || m["sessions"] != float64(0) {
			t.Errorf("status --json: %v", m)
		}
	}
	if head := h.git("rev-parse", "HEAD"); head != before {
		t.Errorf("HEAD moved: %s → %s", before, head)
	}
	if br := h.git("branch", "--list", "debussy/*"); br != "" {
		t.Errorf("phase branches left: %s", br)
	}
}

// --fail-fast: phase 1's gate fails while phase 2 works through short
// tools; phase 2 stops at a safe point (after its running tool), its work
// committed to its branch, the summary saying so; the rerun finishes both.
func TestFailFastE2E(t *testing.T) {
	claudetest.OncePerSuite(t, "--fail-fast with parallel phases")
	marks := marksDir(t)
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash(rendezvous(marks, "p1", "p2"))),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done, I think.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("printf 'two\\n' > b.txt")),
			turn(21000, fakeapi.Bash(rendezvous(marks, "p2", "p1"))),
			turn(22000, fakeapi.Bash(pause("4"))),
			turn(23000, fakeapi.Bash(pause("4"))),
			turn(24000, fakeapi.Bash(pause("4"))),
			turn(25000, fakeapi.Bash(pause("4"))),
			turn(26000, done("2")),
			turn(27000, fakeapi.Text("Phase 2 done.")),
		}},
		{Name: "p1-again", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("touch fixed.txt")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2-resumed", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, done("2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "One", Gates: []string{"fixed: `test -f fixed.txt`"}},
		{ID: "2", Title: "Two", Gates: []string{"two: `test -f b.txt`"}},
	}, "max_retries: 0\n")

	r := h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2", "--fail-fast")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{"--fail-fast stops the phases still running", "another phase failed (--fail-fast): stopping the session after the running tool"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q", want)
		}
	}
	st := h.status()
	if af, _ := st["after_failure"].(map[string]any); af == nil || af["phase"] != "1" || af["fail_fast"] != true || len(af["running"].([]any)) != 1 {
		t.Errorf("status --json after_failure: %v", st["after_failure"])
	}
	var branch string
	for _, p := range st["phases"].([]any) {
		m := p.(map[string]any)
		if m["id"] == "2" {
			branch, _ = m["branch"].(string)
			if m["status"] != "interrupted" || branch == "" {
				t.Fatalf("phase 2: %v", m)
			}
		}
	}
	if got := h.git("show", branch+":b.txt"); got != "two" {
		t.Errorf("b.txt on %s = %q: phase 2's work is not committed to its branch", branch, got)
	}
	if h.exists("b.txt") {
		t.Error("the stopped phase's work reached the user's branch")
	}
	for _, want := range []string{"phase 1 failed while phase 2 was running; --fail-fast stopped them at a safe point:",
		"phase 2: stopped by --fail-fast, its work committed on branch " + branch} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the summary does not say %q:\n%s", want, r.Stdout)
		}
	}
	h.noOrphans()

	r = h.run("run", "plan/MASTER_PLAN.md", "--parallel", "2", "--fail-fast")
	if r.Code != 0 {
		t.Fatalf("rerun: %s", r)
	}
	if got := h.git("show", "HEAD:b.txt"); got != "two" {
		t.Errorf("b.txt = %q after the rerun", got)
	}
	if s := h.sessionsOf(phaseMatch("2")); len(s) != 2 || !strings.Contains(strings.ToLower(s[1]), "resum") {
		t.Errorf("phase 2 did not resume from a checkpoint: %d sessions", len(s))
	}
	if br := h.git("branch", "--list", "debussy/*"); br != "" {
		t.Errorf("phase branches left: %s", br)
	}
	h.noOrphans()
}
