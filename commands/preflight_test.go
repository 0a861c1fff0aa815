package commands

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// An unfinished git operation is refused before any session starts (exit 2),
// by run and by check, with the way out in the message.
func TestPreflightRefusesUnfinishedMerge(t *testing.T) {
	dir := gitRepo(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = dir
		_ = cmd.Run() // the merge fails with a conflict on purpose
	}
	git("checkout", "-q", "-b", "other")
	write(t, dir+"/f.txt", "other\n")
	git("add", "-A")
	git("commit", "-q", "-m", "other")
	git("checkout", "-q", "main")
	write(t, dir+"/f.txt", "main\n")
	git("add", "-A")
	git("commit", "-q", "-m", "main")
	git("merge", "other")

	for _, args := range [][]string{
		{"run", "plan/MASTER_PLAN.md", "--claude-bin", "/no/such/claude"},
		{"check", "plan/MASTER_PLAN.md"},
	} {
		code, _, stderr := invoke(t, dir, nil, args...)
		if code != ExitUsage || !strings.Contains(stderr, "middle of a merge") || !strings.Contains(stderr, "git merge --abort") {
			t.Errorf("debussy %s: exit %d, want %d naming the merge; stderr:\n%s", args[0], code, ExitUsage, stderr)
		}
	}
	// Without auto-commit debussy makes no commit, so the merge is the user's business.
	if code, _, stderr := invoke(t, dir, nil, "run", "plan/MASTER_PLAN.md", "--no-auto-commit", "--claude-bin", "/no/such/claude"); strings.Contains(stderr, "middle of a merge") {
		t.Errorf("--no-auto-commit: exit %d, still refused for the merge:\n%s", code, stderr)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A repository debussy cannot commit to (SHA-256) is refused by run and by
// check with gitcommit's reason; both used to call it "not inside a git
// repository", and check printed ok.
func TestRefusedRepositoryReasonReachesTheUser(t *testing.T) {
	dir := gitRepo(t)
	if err := os.RemoveAll(dir + "/.git"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", "--object-format=sha256", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, args := range [][]string{
		{"run", "plan/MASTER_PLAN.md", "--claude-bin", "/no/such/claude"},
		{"run", "plan/MASTER_PLAN.md", "--dry-run"},
		{"check", "plan/MASTER_PLAN.md"},
	} {
		code, _, stderr := invoke(t, dir, nil, args...)
		if code != ExitUsage || !strings.Contains(stderr, "extensions.objectFormat=sha256") || strings.Contains(stderr, "not inside a git repository") {
			t.Errorf("debussy %s: exit %d, want %d naming objectFormat=sha256; stderr:\n%s", strings.Join(args, " "), code, ExitUsage, stderr)
		}
	}
}
