package commands

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
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

// check runs the run's own preflight: in each situation where a run stops
// before (or at) its first session, check exits 2 too and names the fix;
// the run and its dry run refuse it with the same exit code. With
// everything in order check says ok.
func TestCheckNamesWhatStopsARun(t *testing.T) {
	notProgram := filepath.Join(t.TempDir(), "claude")
	write(t, notProgram, "echo this wrapper lost its #! line\n")
	if err := os.Chmod(notProgram, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string // the directory to run in
		env   map[string]string
		fix   string // what check must say
		run   bool   // the real run refuses it before any session too
	}{
		{name: "not a git repository", setup: func(t *testing.T) string {
			dir := t.TempDir()
			if out, err := exec.Command("cp", "-r", "../examples/demo/plan", dir+"/plan").CombinedOutput(); err != nil {
				t.Fatalf("copy plan: %v %s", err, out)
			}
			return dir
		}, fix: "git init", run: true},
		{name: "no commit", setup: func(t *testing.T) string {
			dir := gitRepo(t)
			if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
				t.Fatal(err)
			}
			gitIn(t, dir, "init", "-q")
			return dir
		}, fix: `git add -A && git commit`, run: true},
		{name: "dirty tree", setup: func(t *testing.T) string {
			dir := gitRepo(t)
			write(t, filepath.Join(dir, "plan", "phase-1.md"), "# changed\n")
			return dir
		}, fix: "commit or stash them first, or pass --allow-dirty", run: true},
		{name: "claude missing", setup: gitRepo, env: map[string]string{"DEBUSSY_CLAUDE_BIN": "/no/such/claude"},
			fix: "install Claude Code or point --claude-bin / DEBUSSY_CLAUDE_BIN at it", run: true},
		{name: "claude_bin not a program", setup: gitRepo, env: map[string]string{"DEBUSSY_CLAUDE_BIN": notProgram},
			fix: "point --claude-bin / DEBUSSY_CLAUDE_BIN at the claude CLI", run: true},
		{name: "root without IS_SANDBOX", setup: gitRepo, env: map[string]string{"IS_SANDBOX": ""},
			fix: "set IS_SANDBOX=1"},
		{name: "gate program missing", setup: func(t *testing.T) string {
			dir := gitRepo(t)
			f := filepath.Join(dir, "plan", "phase-2.md")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			write(t, f, string(data)+"- lint: `no-such-linter-for-debussy check .`\n")
			gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "lint gate")
			return dir
		}, fix: `install no-such-linter-for-debussy, or set gate_commands`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "root without IS_SANDBOX" && os.Geteuid() != 0 {
				t.Skip("claude refuses bypass permissions only as root")
			}
			env := map[string]string{"PATH": os.Getenv("PATH")}
			maps.Copy(env, tc.env)
			dir := tc.setup(t)
			code, stdout, stderr := invoke(t, dir, env, "check", "plan/MASTER_PLAN.md")
			if code != ExitUsage || !strings.Contains(stderr, tc.fix) || !strings.Contains(stdout, "problem: ") || strings.Contains(stdout, "\nok") {
				t.Errorf("check: exit %d, want %d naming %q\n--- stdout\n%s--- stderr\n%s", code, ExitUsage, tc.fix, stdout, stderr)
			}
			code, stdout, stderr = invoke(t, dir, env, "run", "plan/MASTER_PLAN.md", "--dry-run")
			if code != ExitUsage || !strings.Contains(stderr, tc.fix) {
				t.Errorf("run --dry-run: exit %d, want %d naming %q\n--- stdout\n%s--- stderr\n%s", code, ExitUsage, tc.fix, stdout, stderr)
			}
			if tc.run {
				if code, _, stderr := invoke(t, dir, env, "run", "plan/MASTER_PLAN.md"); code != ExitUsage || !strings.Contains(stderr, tc.fix) {
					t.Errorf("run: exit %d, want %d naming %q\n%s", code, ExitUsage, tc.fix, stderr)
				}
			}
		})
	}
	// The control: everything in order.
	if code, stdout, stderr := invoke(t, gitRepo(t), map[string]string{"PATH": os.Getenv("PATH")}, "check", "plan/MASTER_PLAN.md"); code != 0 || !strings.Contains(stdout, "\nok") {
		t.Errorf("check in a clean repository: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A dry run that would stop at the first session (here: a gate program
// missing) prints its preview first and the problem last, where the eye
// lands, not above sixty lines of config.
func TestDryRunProblemLast(t *testing.T) {
	dir := gitRepo(t)
	f := filepath.Join(dir, "plan", "phase-2.md")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, string(data)+"- lint: `no-such-linter-for-debussy check .`\n")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "lint gate")
	var out bytes.Buffer
	e := &Env{Stdout: &out, Stderr: &out, Dir: dir, Getenv: func(k string) string {
		return map[string]string{"PATH": os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN": "true", "IS_SANDBOX": "1"}[k]
	}, Environ: func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "DEBUSSY_CLAUDE_BIN=true", "IS_SANDBOX=1"}
	}, Hard: make(chan struct{})}
	if code := e.Run(t.Context(), []string{"debussy", "run", "plan/MASTER_PLAN.md", "--dry-run"}); code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "no-such-linter-for-debussy") {
		t.Errorf("the last line is %q, not the problem:\n%s", last, out.String())
	}
	if !strings.Contains(out.String(), "dry run: nothing started; a run here would stop on 1 problem (below)") {
		t.Errorf("the preview does not point at the problem:\n%s", out.String())
	}
}
