package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Outside a git repository doctor says so, and how to fix it — a run
// refuses to start there; it used to say git was ok.
func TestDoctorOutsideRepository(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fakeClaudeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN": bin, "IS_SANDBOX": "1", "GIT_CEILING_DIRECTORIES": filepath.Dir(dir)}
	code, out, stderr := invoke(t, dir, env, "doctor", "--timeout", "3s")
	if code != 2 {
		t.Errorf("exit %d, want 2\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"FAIL  git        " + dir + " is not a git repository", "fix: run debussy in your project's repository", "git init"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ok    git") {
		t.Errorf("doctor says git is ok outside a repository:\n%s", out)
	}
}

// In a repository without a commit, which a run refuses, doctor fails
// too; with the login unchecked it never says a run would work.
func TestDoctorNoCommitAndNoLogin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fakeClaudeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN": bin, "IS_SANDBOX": "1", "GIT_CEILING_DIRECTORIES": filepath.Dir(dir)}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	code, out, stderr := invoke(t, dir, env, "doctor", "--timeout", "3s", "--no-login")
	if code != 2 || !strings.Contains(out, "has no commit yet") || strings.Contains(out, "a run would work here") {
		t.Errorf("exit %d, want 2 naming the missing commit:\n%s%s", code, out, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	code, out, _ = invoke(t, dir, env, "doctor", "--timeout", "3s", "--no-login")
	if code != 0 || strings.Contains(out, "a run would work here") || !strings.Contains(out, "the API has not answered here") {
		t.Errorf("exit %d; with --no-login doctor must not promise a run:\n%s", code, out)
	}
}
