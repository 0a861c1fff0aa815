package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/state"
)

const compat = "../../shared/compat-plans/claude-debussy"

// invoke runs debussy in dir with env and returns exit code, stdout, stderr.
func invoke(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	// A run (and its --dry-run) refuses a missing claude before anything
	// else; these tests never start a session, so any executable does.
	if _, ok := env["DEBUSSY_CLAUDE_BIN"]; !ok {
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		env["DEBUSSY_CLAUDE_BIN"] = "true"
	}
	// As root, claude refuses bypassPermissions without IS_SANDBOX=1, and
	// the dry run now exits 2 on it as the run would: set it unless the
	// test asks for it unset (IS_SANDBOX "").
	switch v, ok := env["IS_SANDBOX"]; {
	case !ok:
		env = maps.Clone(env)
		env["IS_SANDBOX"] = "1"
	case v == "":
		env = maps.Clone(env)
		delete(env, "IS_SANDBOX")
	}
	var stdout, stderr bytes.Buffer
	e := &Env{
		Stdout: &stdout, Stderr: &stderr, Dir: dir,
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
		Hard: make(chan struct{}),
	}
	code := e.Run(context.Background(), append([]string{"debussy"}, args...))
	return code, stdout.String(), stderr.String()
}

// gitRepo makes a repository holding the demo plan.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", "../examples/demo/plan", dir+"/plan").CombinedOutput(); err != nil {
		t.Fatalf("copy plan: %v %s", err, out)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "plan"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

func TestReorderArgs(t *testing.T) {
	app := (&Env{}).app()
	cases := []struct{ in, want string }{
		{"debussy run plan.md --max-restarts 1", "debussy run --max-restarts 1 -- plan.md"},
		{"debussy run plan.md --dry-run --model=opus", "debussy run --dry-run --model=opus -- plan.md"},
		{"debussy run --phase 2 plan.md --allow-dirty", "debussy run --phase 2 --allow-dirty -- plan.md"},
		{"debussy run plan.md -- --weird-name.md", "debussy run -- plan.md --weird-name.md"},
		{"debussy progress --phase 1 all done now", "debussy progress --phase 1 -- all done now"},
		{"debussy check plan.md --json", "debussy check --json -- plan.md"},
		{"debussy --help", "debussy --help"},
		{"debussy nosuch a --b", "debussy nosuch a --b"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got := strings.Join(reorderArgs(app, strings.Fields(tc.in)), " ")
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// --dry-run prints the phases in run order with status, dependencies and
// gate commands, plus the resolved config; flags after the plan path count.
func TestDryRunGolden(t *testing.T) {
	dir := gitRepo(t)
	// The user's untracked files are named: the run will leave them out.
	write(t, filepath.Join(dir, "local-notes.txt"), "mine\n")
	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "scratch", "todo.md"), "mine too\n")
	code, out, errOut := invoke(t, dir, map[string]string{"DEBUSSY_MAX_RETRIES": "4"},
		"run", "plan/MASTER_PLAN.md", "--dry-run", "--context-threshold", "90", "--model", "claude-sonnet-4-5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := strings.ReplaceAll(out, dir, "$REPO")
	golden.Check(t, filepath.Join("testdata", "dry-run.golden"), []byte(got))
	for _, want := range []string{"context_threshold: 90", "max_retries: 4", "model: claude-sonnet-4-5"} {
		if !strings.Contains(out, want) {
			t.Errorf("resolved config lacks %q", want)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := gitRepo(t)
	badCfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(badCfg, ".debussy.yaml"), []byte("model: x\ncontext_treshold: 90\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		dir    string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"version", dir, nil, []string{"version"}, 0, ""},
		{"check ok", dir, nil, []string{"check", "plan/MASTER_PLAN.md"}, 0, ""},
		{"check missing file", dir, nil, []string{"check", "nope.md"}, 2, "nope.md"},
		{"run without plan", dir, nil, []string{"run"}, 2, "missing MASTER_PLAN.md"},
		{"run two plans", dir, nil, []string{"run", "a.md", "b.md"}, 2, "expected one"},
		{"unknown flag", dir, nil, []string{"run", "plan/MASTER_PLAN.md", "--bogus"}, 2, "bogus"},
		{"bad flag value", dir, nil, []string{"run", "plan/MASTER_PLAN.md", "--dry-run", "--context-threshold", "0"}, 2, "--context-threshold: 0 is out of range"},
		{"bad env value", dir, map[string]string{"DEBUSSY_MAX_RESTARTS": "lots"}, []string{"run", "plan/MASTER_PLAN.md", "--dry-run"}, 2, "DEBUSSY_MAX_RESTARTS"},
		{"unknown config key", badCfg, nil, []string{"check", dir + "/plan/MASTER_PLAN.md"}, 2, ".debussy.yaml:2:1"},
		{"contradicting flags", dir, nil, []string{"run", "plan/MASTER_PLAN.md", "--auto-commit", "--no-auto-commit"}, 2, "contradict"},
		{"unknown --phase", dir, nil, []string{"run", "plan/MASTER_PLAN.md", "--dry-run", "--phase", "9"}, 2, "--phase 9"},
		{"done without a run", dir, nil, []string{"done", "--phase", "1"}, 2, "no active debussy run"},
		{"done bad status", dir, nil, []string{"done", "--phase", "1", "--status", "meh"}, 2, "--status"},
		{"blocked needs reason", dir, nil, []string{"done", "--phase", "1", "--status", "blocked"}, 2, "--reason"},
		{"progress without message", dir, nil, []string{"progress", "--phase", "1"}, 2, "MESSAGE"},
		{"status with no runs", dir, nil, []string{"status"}, 0, ""},
		{"claude missing", dir, nil, []string{"run", "plan/MASTER_PLAN.md", "--claude-bin", "/no/such/claude"}, 2, "--claude-bin / DEBUSSY_CLAUDE_BIN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := invoke(t, tc.dir, tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

// Every plan written for the Python original loads: only a real error
// (missing file, cycle) exits 2, with its file:line; gates given only by a
// tool's name run its preset, and gates with no command at all are
// UNCHECKED warnings (errors with --strict-gates).
func TestCheckCompatPlans(t *testing.T) {
	cases := []struct {
		plan  string
		flags []string
		code  int
		wants []string
	}{
		{"docs/plans/phase8", nil, 0, nil},
		{"docs/plans/v0.7.0", nil, 0, []string{"phase-3.md:11: warning"}},
		{"docs/plans/phase7-issue-planner", nil, 0, []string{"4 gate coverage: UNCHECKED", "phase-4.md:38: warning", "ok, 4 warning"}},
		{"tests/fixtures/sample_plans_converted/plan1_converted", nil, 0, nil},
		{"tests/fixtures/audit/valid_plan", nil, 0, []string{"1 gate ruff → `ruff check .` (preset)", "2 gate pytest → `pytest` (preset)", "\nok\n"}},
		{"tests/fixtures/audit/circular_deps", nil, 2, []string{"1 → 2 → 3 → 1"}},
		{"tests/fixtures/audit/missing_phase", nil, 2, []string{"MASTER_PLAN.md:10: error", "phase-2.md", "1  Phase One "}},
		{"tests/fixtures/audit/missing_gates", nil, 0, []string{"phase-1.md:1: warning", "no-gates"}},
		{"tests/fixtures/sample_plans/hello_world_test", nil, 0, []string{"phase-1.md:40: warning", "gate-no-command", "1 gate i18n: UNCHECKED"}},
		{"tests/fixtures/sample_plans/hello_world_test", []string{"--strict-gates"}, 2, []string{"phase-1.md:40: error", "strict_gates refuses it"}},
	}
	// A repository with a commit: outside one, check exits 2 as the run
	// would (TestCheckNamesWhatStopsARun).
	dir := gitRepo(t)
	for _, tc := range cases {
		t.Run(tc.plan+strings.Join(tc.flags, ""), func(t *testing.T) {
			master, err := filepath.Abs(filepath.Join(compat, tc.plan, "MASTER_PLAN.md"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(master); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("compat plans not beside the checkout: %v", err)
				}
				t.Skipf("compat plans not beside the checkout: %v", err)
			}
			code, out, stderr := invoke(t, dir, nil, append(append([]string{"check"}, tc.flags...), master)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			for _, w := range tc.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			code, out, _ = invoke(t, dir, nil, append(append([]string{"check", "--json"}, tc.flags...), master)...)
			var doc struct {
				Plan   string `json:"plan"`
				Phases []struct {
					ID        string   `json:"id"`
					DependsOn []string `json:"depends_on"`
					Gates     []struct{ Name, Command string }
					Tasks     []struct {
						Text string
						Done bool
						Line int
					}
				} `json:"phases"`
				Findings []struct {
					Severity, Code, File, Message string
					Line                          int
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("--json output does not decode: %v\n%s", err, out)
			}
			if code != tc.code || doc.Plan == "" || len(doc.Phases) == 0 {
				t.Errorf("--json: exit %d, plan %q, %d phases", code, doc.Plan, len(doc.Phases))
			}
		})
	}
}

// init writes the documented config and ignores .debussy/, once.
func TestInit(t *testing.T) {
	dir := gitRepo(t)
	if code, _, stderr := invoke(t, dir, nil, "init"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	if code, _, _ := invoke(t, dir, nil, "init"); code != 2 {
		t.Errorf("second init without --force: exit %d, want 2", code)
	}
	if code, _, _ := invoke(t, dir, nil, "init", "--force"); code != 0 {
		t.Errorf("init --force: exit %d", code)
	}
	ignore, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if strings.Count(string(ignore), ".debussy/") != 1 {
		t.Errorf(".gitignore: %q", ignore)
	}
	if code, _, stderr := invoke(t, dir, nil, "run", "plan/MASTER_PLAN.md", "--dry-run"); code != 0 {
		t.Errorf("the written config does not load: %s", stderr)
	}
	// The first thing people do: append a key. It must not collide.
	f, err := os.OpenFile(filepath.Join(dir, ".debussy.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("max_restarts: 5\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := invoke(t, dir, nil, "run", "plan/MASTER_PLAN.md", "--dry-run"); code != 0 || !strings.Contains(out+stderr, "max_restarts: 5") {
		t.Errorf("init then max_restarts: 5 appended: exit %d, want it loaded\n%s%s", code, out, stderr)
	}
	// 92: the keys people change, permission_mode and sandbox with their
	// meaning.
	if data, _ := os.ReadFile(filepath.Join(dir, ".debussy.yaml")); strings.Count(string(data), "\n") > 92 {
		t.Errorf("the init file has %d lines: not short", strings.Count(string(data), "\n"))
	}
}

// status trusts the lock, not the ledger: a running entry is live only
// while its run holds .debussy/lock.
func TestStatusLiveness(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusRunning, StartedAt: time.Now(), PID: os.Getpid(),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusRunning, Attempts: 1, Economics: &state.Economics{Progress: "acting"}}}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	release, _, err := store.Lock(state.LockInfo{PID: os.Getpid(), RunID: "r1", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when, wantText, wantJSON string) {
		t.Helper()
		code, out, _ := invoke(t, dir, nil, "status")
		if code != 0 || !strings.Contains(out, "r1  "+wantText) || strings.Contains(out, "running (acting)") != (wantText == "running") {
			t.Errorf("%s: exit %d, want r1 %s (phase 1 acting while it runs)\n%s", when, code, wantText, out)
		}
		code, out, _ = invoke(t, dir, nil, "status", "--json")
		var rec struct{ Status string }
		if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Status != wantJSON {
			t.Errorf("%s: status --json exit %d, status %q, want %q\n%s", when, code, rec.Status, wantJSON, out)
		}
	}
	check("while r1 holds the lock", "running", "running")
	if err := release(); err != nil {
		t.Fatal(err)
	}
	check("after r1 let go of the lock", "interrupted", "interrupted")
}

// With --parallel, status says where each phase works and how it was merged.
func TestStatusParallelPhases(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusFailed, StartedAt: time.Now(),
		Phases: []*state.PhaseRecord{
			{ID: "1", Status: state.StatusCompleted, Branch: "debussy/r1/phase-1", Merge: "0123456789abcdef0123456789abcdef01234567"},
			{ID: "2", Status: state.StatusFailed, Branch: "debussy/r1/phase-2", Worktree: ".debussy/worktrees/r1/phase-2"},
		}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	code, out, _ := invoke(t, dir, nil, "status")
	for _, want := range []string{
		"phase 1: merged from debussy/r1/phase-1 as 0123456",
		"phase 2: branch debussy/r1/phase-2, worktree .debussy/worktrees/r1/phase-2 (not merged yet)",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, status lacks %q:\n%s", code, want, out)
		}
	}
}

// An unchecked gate is listed by status, never as passed.
func TestStatusUncheckedGates(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusCompleted, StartedAt: time.Now(),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusCompleted, Attempts: 1, UncheckedGates: []string{"i18n"}}}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	code, out, _ := invoke(t, dir, nil, "status")
	if want := "phase 1: UNCHECKED (no command, not run): i18n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %q in\n%s", code, want, out)
	}
}

// Every level keeps the records at or above it, in both formats.
func TestNewLoggerLevels(t *testing.T) {
	tests := []struct {
		level string
		want  []string // messages that come out, of debug, info, warn, error
	}{
		{config.LevelDebug, []string{"d", "i", "w", "e"}},
		{config.LevelInfo, []string{"i", "w", "e"}},
		{config.LevelWarn, []string{"w", "e"}},
		{config.LevelError, []string{"e"}},
	}
	for _, format := range []string{config.LogText, config.LogJSON} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.level, func(t *testing.T) {
				var buf bytes.Buffer
				l := newLogger(&buf, format, tt.level, false)
				l.Debug("d", "k", 1)
				l.Info("i", "k", 1)
				l.Warn("w", "k", 1)
				l.Error("e", "k", 1)
				var got []string
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					if format == config.LogJSON {
						var rec struct{ Msg string }
						if err := json.Unmarshal([]byte(line), &rec); err != nil {
							t.Fatalf("not JSON: %q", line)
						}
						got = append(got, rec.Msg)
						continue
					}
					// "15:04:05 LEVL msg k=1"
					if f := strings.Fields(line); len(f) >= 3 {
						got = append(got, f[2])
					}
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("records %q, want %q\n%s", got, tt.want, buf.String())
				}
			})
		}
	}
}

// --verbose and --quiet (and log_level behind them) choose what a run logs;
// with --log-format json every stderr line is a JSON object whose message
// is a constant, even for errors found before the config resolves.
func TestRunLogging(t *testing.T) {
	dir := gitRepo(t)
	// No H1 title: a plan warning, logged before the dry run prints.
	master := filepath.Join(dir, "plan", "MASTER_PLAN.md")
	data, err := os.ReadFile(master)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(master, bytes.Replace(data, []byte("# Greeter - Master Plan\n"), nil, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "plan/MASTER_PLAN.md", "--dry-run", "--allow-dirty", "--log-format", "json"} // the edit above is uncommitted
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		code     int
		want     []string // "level msg" records that must appear
		dontWant []string
	}{
		{"default", nil, run, 0, []string{"warn plan warning"}, []string{"debug config resolved"}},
		{"verbose", nil, append(run, "--verbose"), 0, []string{"debug config resolved", "warn plan warning"}, nil},
		{"quiet", nil, append(run, "-q"), 0, []string{"warn plan warning"}, []string{"debug config resolved"}},
		{"env debug", map[string]string{"DEBUSSY_LOG_LEVEL": "debug"}, run, 0, []string{"debug config resolved"}, nil},
		{"env error, flag wins", map[string]string{"DEBUSSY_LOG_LEVEL": "error"}, append(run, "--verbose"), 0, []string{"debug config resolved"}, nil},
		{"env error", map[string]string{"DEBUSSY_LOG_LEVEL": "error"}, run, 0, nil, []string{"warn plan warning"}},
		{"bad config in json", map[string]string{"DEBUSSY_MAX_RESTARTS": "lots"}, run, 2, []string{"error debussy stopped"}, nil},
		{"unknown flag in json", nil, append(run, "--bogus"), 2, []string{"error debussy stopped"}, nil},
		{"usage error, json from env", map[string]string{"DEBUSSY_LOG_FORMAT": "json"}, []string{"run"}, 2, []string{"error debussy stopped"}, nil},
		{"usage error, --log-format=json", nil, []string{"run", "--log-format=json", "a.md", "b.md"}, 2, []string{"error debussy stopped"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := invoke(t, dir, tt.env, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, stderr)
			}
			var got []string
			for i, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if line == "" {
					continue
				}
				var rec struct{ Level, Msg string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("stderr line %d is not JSON: %q", i+1, line)
				}
				got = append(got, rec.Level+" "+rec.Msg)
			}
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("no %q record in %q", w, got)
				}
			}
			for _, w := range tt.dontWant {
				if slices.Contains(got, w) {
					t.Errorf("unexpected %q record in %q", w, got)
				}
			}
		})
	}
	if code, _, stderr := invoke(t, dir, nil, append(run, "--verbose", "--quiet")...); code != 2 || !strings.Contains(stderr, "contradict") {
		t.Errorf("--verbose --quiet: exit %d, want 2 saying they contradict\n%s", code, stderr)
	}
	if code, _, stderr := invoke(t, dir, map[string]string{"DEBUSSY_LOG_LEVEL": "loud"}, run...); code != 2 || !strings.Contains(stderr, "DEBUSSY_LOG_LEVEL") {
		t.Errorf("DEBUSSY_LOG_LEVEL=loud: exit %d, want 2 naming the variable\n%s", code, stderr)
	}
}

// A rerun of a finished plan skips every phase: status and logs keep
// showing the run that did the work, and say why; --all lists both.
func TestStatusAfterARerunThatSkipped(t *testing.T) {
	dir, store := logsRun(t, state.StatusCompleted)
	l, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	t1 := l.Runs[0].StartedAt.Add(time.Hour)
	l.Runs = append(l.Runs, &state.Run{ID: "r2", Plan: "plan/MASTER_PLAN.md", Status: state.StatusCompleted, StartedAt: t1,
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusSkipped}, {ID: "2", Status: state.StatusSkipped}, {ID: "3", Status: state.StatusSkipped}}})
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	note := "showing run r1, the latest with sessions; the later run r2 (started 2026-01-01 13:00:00) only skipped phases, done already"
	code, out, stderr := invoke(t, dir, nil, "status")
	if code != 0 || !strings.HasPrefix(out, "run r1  completed") || !strings.Contains(out, note) {
		t.Errorf("status: exit %d, want run r1 and %q\n%s%s", code, note, out, stderr)
	}
	code, out, _ = invoke(t, dir, nil, "status", "--json")
	var rec struct {
		ID       string
		LaterRun string `json:"later_run_without_sessions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.ID != "r1" || rec.LaterRun != "r2" {
		t.Errorf("status --json: exit %d, id %q later %q, want r1 and r2\n%s", code, rec.ID, rec.LaterRun, out)
	}
	code, out, _ = invoke(t, dir, nil, "logs")
	if code != 0 || !strings.HasPrefix(out, "── "+note+"\n── run r1 · phase 2 Build · session 1") {
		t.Errorf("logs: exit %d, want the note then r1's phase 2\n%s", code, firstLines(out, 3))
	}
	code, out, _ = invoke(t, dir, nil, "status", "--all")
	golden.Check(t, filepath.Join("testdata", "status-all.golden"), []byte(out))
	if code != 0 {
		t.Errorf("status --all: exit %d", code)
	}
	code, out, _ = invoke(t, dir, nil, "status", "--all", "--json")
	var runs []struct{ ID string }
	if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 2 || runs[0].ID != "r2" {
		t.Errorf("status --all --json: exit %d, runs %+v, want r2 then r1", code, runs)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

// After a reset past a phase's commit, status says the phase's work is
// not on this branch, in the table and in --json.
func TestStatusNotOnThisBranch(t *testing.T) {
	dir := gitRepo(t)
	git := func(args ...string) string { return gitIn(t, dir, args...) }
	kept := git("rev-parse", "HEAD")
	git("commit", "-q", "--allow-empty", "-m", "phase 2")
	discarded := git("rev-parse", "HEAD")
	git("reset", "-q", "--hard", "HEAD~1")
	store := state.New(filepath.Join(dir, state.DirName))
	l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusCompleted, StartedAt: time.Now(),
		Phases: []*state.PhaseRecord{
			{ID: "1", Status: state.StatusCompleted, Attempts: 1, Sessions: 1, Commits: []string{kept}},
			{ID: "2", Status: state.StatusCompleted, Attempts: 1, Sessions: 1, Commits: []string{discarded}},
		}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := invoke(t, dir, nil, "status")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) < 5 || !strings.HasPrefix(lines[3], "1      completed  ") || !strings.HasPrefix(lines[4], "2      completed (not on this branch)  ") {
		t.Errorf("exit %d, want phase 1 completed and phase 2 not on this branch:\n%s%s", code, out, stderr)
	}
	code, out, _ = invoke(t, dir, nil, "status", "--json")
	var rec struct {
		NotOnBranch []string `json:"phases_not_on_branch"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || !slices.Equal(rec.NotOnBranch, []string{"2"}) {
		t.Errorf("status --json: exit %d, phases_not_on_branch %q, want [2]\n%s", code, rec.NotOnBranch, out)
	}
}

// A phase that stopped at a usage limit says until when it waits: the
// rerun waits for that reset too.
func TestStatusWaitingForUsageLimit(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	resets := time.Now().Add(90 * time.Minute)
	l := &state.Ledger{Runs: []*state.Run{{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusInterrupted, StartedAt: time.Now(),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusInterrupted, Attempts: 1, WaitingUntil: resets, Limit: "five_hour"}}}}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	code, out, _ := invoke(t, dir, nil, "status")
	if want := "interrupted (waiting until " + resets.Local().Format("15:04") + ": usage limit)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, status lacks %q:\n%s", code, want, out)
	}
}

// A phase that failed in one run and completed in the next: each run's
// figures are what that run spent, so status --all adds up to what the
// sessions cost, and the phase's figure across runs is labelled so.
func TestStatusSpendPerRun(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, state.DirName))
	t0 := time.Now().Add(-time.Hour)
	l := &state.Ledger{Runs: []*state.Run{
		{ID: "r1", Plan: "plan/MASTER_PLAN.md", Status: state.StatusFailed, StartedAt: t0,
			Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusFailed, Attempts: 1, Sessions: 2, Tokens: 100_000, CostUSD: 1.25}}},
		{ID: "r2", Plan: "plan/MASTER_PLAN.md", Status: state.StatusCompleted, StartedAt: t0.Add(30 * time.Minute),
			Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusCompleted, Attempts: 1, Sessions: 1, Tokens: 40_000, CostUSD: 0.5,
				PriorTokens: 100_000, PriorCostUSD: 1.25}}},
	}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	code, out, _ := invoke(t, dir, nil, "status")
	for _, want := range []string{"40K", "$0.50", "phase 1: 140K tokens, $1.75 across its runs (this run 40K, $0.50; earlier runs 100K, $1.25)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = invoke(t, dir, nil, "status", "--all")
	if code != 0 || !regexp.MustCompile(`r1 .* 100K +\$1\.25 `).MatchString(out) || !regexp.MustCompile(`r2 .* 40K +\$0\.50 `).MatchString(out) {
		t.Errorf("status --all should give each run what it spent:\n%s", out)
	}
}

// strict_git refuses a run where git is not installed (go-git would
// stage), and says how to go on; with git installed it is no obstacle.
func TestStrictGitWithoutGit(t *testing.T) {
	dir := gitRepo(t)
	claude, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	env := map[string]string{"DEBUSSY_STRICT_GIT": "true", "DEBUSSY_CLAUDE_BIN": claude}
	if code, _, stderr := invoke(t, dir, env, "run", "plan/MASTER_PLAN.md", "--dry-run"); code != 0 {
		t.Fatalf("with git on PATH: exit %d\n%s", code, stderr)
	}
	t.Setenv("PATH", t.TempDir()) // no git from here on
	code, _, stderr := invoke(t, dir, env, "run", "plan/MASTER_PLAN.md", "--dry-run")
	if code != 2 || !strings.Contains(stderr, "strict_git: git is not installed") {
		t.Errorf("without git: exit %d, want 2 naming strict_git\n%s", code, stderr)
	}
}

// Where the log carries structure only, a tool's input, a gate's output
// and an error's text are withheld, their sizes shown; names, numbers and
// the public form of a value pass (issue 53). With text on, all of it.
func TestNewLoggerStructure(t *testing.T) {
	const planted = "curl -H 'X-Trace: k7Qe2vLm9Pz' https://api.example.com"
	for _, format := range []string{config.LogText, config.LogJSON} {
		for _, text := range []bool{false, true} {
			var buf bytes.Buffer
			l := newLogger(&buf, format, config.LevelInfo, text)
			l.Info("tool", "phase", "2", "name", "Bash", "input", planted, "size", len(planted))
			l.Warn("gate failed", "phase", "2", "gate", "check", "problem", public.Words(`gate 1 "check" failed (exit 1)`, "FAIL near "+planted))
			l.Error("phase ended", "phase", "2", "err", errors.New("phase 2 failed: "+planted))
			out := buf.String()
			if got := strings.Contains(out, "k7Qe2vLm9Pz"); got != text {
				t.Errorf("%s, text %v: planted text shown %v:\n%s", format, text, got, out)
			}
			want := []string{"Bash", "54", "gate 1"}
			if text {
				want = []string{"Bash", "54", "FAIL near"}
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s, text %v: %q missing:\n%s", format, text, w, out)
				}
			}
			if !text && !strings.Contains(out, "withheld: "+strconv.Itoa(len(planted))+" bytes") {
				t.Errorf("%s: the input's size is not shown:\n%s", format, out)
			}
		}
	}
}
