package commands

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Completion answers from the words it is given, whatever urfave/cli
// would read from os.Args: flags after `run --` (what bash passes for
// `debussy run --<TAB>`), a flag's values, subcommands and shells.
func TestComplete(t *testing.T) {
	dir := gitRepo(t)
	for _, tc := range []struct {
		name  string
		words []string
		want  []string
		never []string
	}{
		{"commands", []string{""}, []string{"run", "check", "config"}, nil},
		{"run --", []string{"run", "--"}, []string{"--permission-mode", "--dry-run", "--resume-blocked", "--help"}, []string{"-q"}},
		{"run -- (a script before 54: no empty word)", []string{"run", "--"}, []string{"--context-threshold"}, nil},
		{"run's flags after the plan", []string{"run", "plan/MASTER_PLAN.md", "--co"}, []string{"--context-threshold", "--config"}, []string{"--dry-run"}},
		{"permission modes", []string{"run", "plan/MASTER_PLAN.md", "--permission-mode", ""}, []string{"bypassPermissions", "acceptEdits"}, []string{"--dry-run"}},
		{"a permission mode being typed", []string{"run", "--permission-mode", "ac"}, []string{"acceptEdits"}, nil},
		{"log formats", []string{"run", "--log-format", ""}, []string{"text", "json"}, nil},
		{"the plan's phases", []string{"run", "plan/MASTER_PLAN.md", "--phase", ""}, []string{"1", "2"}, nil},
		{"--base", []string{"run", "p.md", "--only", "2", "--base", ""}, []string{"deps", "HEAD"}, nil},
		{"pipeline formats", []string{"pipeline", "p.md", "--format", ""}, []string{"github", "gitlab", "k8s"}, nil},
		{"config's subcommand", []string{"config", ""}, []string{"example"}, nil},
		{"shells", []string{"completion", ""}, []string{"bash", "zsh"}, nil},
		{"a plan path: files (nothing printed)", []string{"run", ""}, nil, []string{"run"}},
		{"after a flag's value: files", []string{"run", "--phase", "2", ""}, nil, []string{"1", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := invoke(t, dir, nil, append(append([]string{}, tc.words...), completeFlag)...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			for _, w := range tc.want {
				if !contains(lines, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.never {
				if contains(lines, n) {
					t.Errorf("offers %q:\n%s", n, out)
				}
			}
			if tc.want == nil && strings.TrimSpace(out) != "" {
				t.Errorf("offers %q, want nothing (the shell completes files)", out)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// The bash script itself, as bash runs it on <TAB>: `debussy run --<TAB>`
// offers run's flags and `--permission-mode <TAB>` its values (debussy
// is this test binary, re-run as the helper below).
func TestBashCompletionScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := gitRepo(t)
	_, script, _ := invoke(t, dir, nil, "completion", "bash")
	for _, tc := range []struct {
		words string // COMP_WORDS, the last one the word under the cursor
		want  string
	}{
		{`debussy run --`, "--dry-run"},
		{`debussy run plan/MASTER_PLAN.md --permission-mode ""`, "acceptEdits"},
		{`debussy run plan/MASTER_PLAN.md --permission-mode a`, "acceptEdits"},
		{`debussy ch`, "check"},
	} {
		cmd := exec.Command(bash, "-c", `debussy() { "$HELPER" -test.run='^TestCompletionHelper$' -- "$@"; }
`+script+`
COMP_WORDS=(`+tc.words+`); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_debussy_complete
printf '%s\n' "${COMPREPLY[@]}"`)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HELPER="+os.Args[0], "DEBUSSY_COMPLETION_HELPER=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !contains(strings.Split(strings.TrimSpace(string(out)), "\n"), tc.want) {
			t.Errorf("%s<TAB>: %v, want %q among:\n%s", tc.words, err, tc.want, out)
		}
	}
}

// TestCompletionHelper is debussy for TestBashCompletionScript.
func TestCompletionHelper(t *testing.T) {
	if os.Getenv("DEBUSSY_COMPLETION_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	e := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Hard: make(chan struct{})}
	os.Exit(e.Run(t.Context(), append([]string{"debussy"}, args...)))
}
