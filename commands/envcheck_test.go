package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check and --dry-run warn, before any session, about what would stop a
// run here: a gate program missing from PATH, and (as root) claude's
// refusal of bypass permissions without IS_SANDBOX=1.
func TestHereProblems(t *testing.T) {
	bin := t.TempDir()
	write(t, filepath.Join(bin, "sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := gitRepo(t)
	f := filepath.Join(dir, "plan", "phase-2.md")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, string(data)+"- lint: `no-such-linter-for-debussy check .`\n- script: `./scripts/lint.sh`\n")
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		name string
		env  map[string]string
		root bool // the permission warning is expected (as root)
	}{
		{"no sandbox", map[string]string{"PATH": bin}, root},
		{"IS_SANDBOX=1", map[string]string{"PATH": bin, "IS_SANDBOX": "1"}, false},
		{"acceptEdits", map[string]string{"PATH": bin, "DEBUSSY_PERMISSION_MODE": "acceptEdits"}, false},
	} {
		for _, args := range [][]string{{"check", "plan/MASTER_PLAN.md"}, {"run", "plan/MASTER_PLAN.md", "--dry-run", "--allow-dirty"}} {
			code, _, stderr := invoke(t, dir, tc.env, args...)
			if code != 0 {
				t.Fatalf("%s %s: exit %d\n%s", tc.name, args[0], code, stderr)
			}
			if !strings.Contains(stderr, "plan/phase-2.md:") || !strings.Contains(stderr, "gate lint runs `no-such-linter-for-debussy`, which is not on PATH") ||
				!strings.Contains(stderr, "gate_commands") {
				t.Errorf("%s %s: no warning naming the missing gate program:\n%s", tc.name, args[0], stderr)
			}
			for _, quiet := range []string{"`sh`", "`test`", "lint.sh"} { // on PATH, a builtin, a script the phase may write
				if strings.Contains(stderr, quiet) {
					t.Errorf("%s %s: warned about %s:\n%s", tc.name, args[0], quiet, stderr)
				}
			}
			if got := strings.Contains(stderr, "IS_SANDBOX=1"); got != tc.root {
				t.Errorf("%s %s: permission warning %v, want %v:\n%s", tc.name, args[0], got, tc.root, stderr)
			}
		}
	}
}
