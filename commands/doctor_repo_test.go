package commands

import (
	"os"
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
