package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// check and --dry-run report, before any session, what would stop a run
// here: a gate program missing from PATH (exit 2, as the run would end; the
// summary counts it; the message names the gate and both fixes), and (as
// root) claude's refusal of bypass permissions without IS_SANDBOX=1.
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
	// gate_commands for the gate's name replaces the plan's command: the
	// fix the message gives works.
	cfgFixed := map[string]string{"PATH": bin, "IS_SANDBOX": "1", "DEBUSSY_GATE_COMMANDS": `{"lint": "sh -c true"}`}
	for _, args := range [][]string{{"check", "plan/MASTER_PLAN.md", "--allow-dirty"}, {"run", "plan/MASTER_PLAN.md", "--dry-run", "--allow-dirty"}} {
		if code, stdout, stderr := invoke(t, dir, cfgFixed, args...); code != 0 || strings.Contains(stderr, "no-such-linter") {
			t.Errorf("%s with gate_commands set for lint: exit %d\n%s%s", args[0], code, stdout, stderr)
		}
	}
	// check --json carries the problem, and exits 2 as the text form does;
	// `&&` stays as typed.
	write(t, f, string(data)+"- lint: `no-such-linter-for-debussy check . && true`\n")
	code, stdout, _ := invoke(t, dir, map[string]string{"PATH": bin, "IS_SANDBOX": "1"}, "check", "--json", "--allow-dirty", "plan/MASTER_PLAN.md")
	if code != 2 || !strings.Contains(stdout, `"problems": [`) || !strings.Contains(stdout, "no-such-linter-for-debussy`, which is not on PATH") ||
		!strings.Contains(stdout, "check . && true") || strings.Contains(stdout, `\u0026`) {
		t.Errorf("check --json: exit %d, want 2 with the problem in the JSON and && unescaped:\n%s", code, stdout)
	}
	write(t, f, string(data)+"- lint: `no-such-linter-for-debussy check .`\n- script: `./scripts/lint.sh`\n")
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		name string
		env  map[string]string
		root bool // the permission warning is expected (as root)
	}{
		{"no sandbox", map[string]string{"PATH": bin, "IS_SANDBOX": ""}, root},
		{"IS_SANDBOX=1", map[string]string{"PATH": bin, "IS_SANDBOX": "1"}, false},
		{"acceptEdits", map[string]string{"PATH": bin, "DEBUSSY_PERMISSION_MODE": "acceptEdits"}, false},
	} {
		for _, args := range [][]string{{"check", "plan/MASTER_PLAN.md", "--allow-dirty"}, {"run", "plan/MASTER_PLAN.md", "--dry-run", "--allow-dirty"}} {
			code, stdout, stderr := invoke(t, dir, tc.env, args...)
			if code != 2 {
				t.Fatalf("%s %s: exit %d, want 2 (a run would end so)\n%s", tc.name, args[0], code, stderr)
			}
			if !strings.Contains(stderr, "plan/phase-2.md:") || !strings.Contains(stderr, "gate lint runs `no-such-linter-for-debussy`, which is not on PATH") ||
				!strings.Contains(stderr, "install no-such-linter-for-debussy") || !strings.Contains(strings.ReplaceAll(stderr, `\"`, `"`), `gate_commands: {"lint": "…"}`) {
				t.Errorf("%s %s: no problem naming the missing gate program and its fixes:\n%s", tc.name, args[0], stderr)
			}
			count := "1 problem a run here would stop on"
			if tc.root {
				count = "2 problems a run here would stop on"
			}
			if args[0] == "check" && (strings.Contains(stdout, "\nok") || !strings.Contains(stdout, count) ||
				!strings.Contains(stdout, "problem: plan/phase-2.md:")) {
				t.Errorf("%s check: the summary does not name and count the problem:\n%s", tc.name, stdout)
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
