package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/state"
)

// Usage errors exit 2 with one line that says what to type; the agent
// commands take their phase from the run's environment; flag errors say
// what is allowed, as config errors do; version, help, completion and an
// empty status behave as a new user expects.
func TestWhatANewUserTypes(t *testing.T) {
	dir := gitRepo(t)
	// A run in progress, as `debussy run` leaves it for the agent.
	store := state.New(filepath.Join(dir, state.DirName))
	run := &state.Run{ID: "20260101-0000-abcd", Status: state.StatusRunning, Phases: []*state.PhaseRecord{{ID: "1"}, {ID: "2"}}}
	if err := store.Save(&state.Ledger{Runs: []*state.Run{run}}); err != nil {
		t.Fatal(err)
	}
	inRun := map[string]string{state.EnvStateDir: store.Dir, state.EnvRunID: run.ID, state.EnvPhaseID: "2"}
	empty := gitRepo(t)

	cases := []struct {
		name   string
		dir    string
		env    map[string]string
		args   []string
		code   int
		stdout string // contained
		stderr string // contained; a usage error must be this one line
	}{
		{name: "done without --phase outside a run", args: []string{"done"}, code: 2,
			stderr: "missing --phase (DEBUSSY_PHASE_ID not set: not inside a debussy run): debussy done --phase ID"},
		{name: "progress note without --phase", args: []string{"progress", "note"}, code: 2,
			stderr: `debussy progress --phase ID "note"`},
		{name: "progress without a message", args: []string{"progress"}, code: 2, stderr: `missing MESSAGE: debussy progress "`},
		{name: "an unknown flag", args: []string{"run", "plan/MASTER_PLAN.md", "--max-restart", "2"}, code: 2,
			stderr: "unknown flag --max-restart; did you mean --max-restarts? (debussy run --help lists the flags)"},
		{name: "-v is not --v", args: []string{"run", "plan/MASTER_PLAN.md", "-v"}, code: 2,
			stderr: "unknown flag -v; did you mean --verbose? (debussy run --help lists the flags)"},
		{name: "a flag nothing is close to", args: []string{"status", "--zzzz"}, code: 2,
			stderr: "unknown flag --zzzz (debussy status --help lists the flags)"},
		{name: "a flag's value out of range names the flag", args: []string{"run", "plan/MASTER_PLAN.md", "--context-threshold", "120"}, code: 2,
			stderr: "debussy: --context-threshold: 120 is out of range; allowed: an integer from 1 to 100"},
		{name: "a plan that is not there", args: []string{"run", "MASTER_PLAN.md"}, code: 2,
			stderr: "debussy: there is no plan at MASTER_PLAN.md; markdown files here that look like master plans: plan/MASTER_PLAN.md\n"},
		{name: "--phase without its value", args: []string{"done", "--phase"}, code: 2, stderr: "--phase needs a value"},
		{name: "--base deps needs --only", args: []string{"run", "plan/MASTER_PLAN.md", "--base", "deps"}, code: 2,
			stderr: "--base deps needs --only ID"},
		{name: "--dry-run of a CI job says what it would merge and push", args: []string{"run", "plan/MASTER_PLAN.md", "--only", "2", "--base", "deps", "--push", "origin", "--dry-run"}, code: 0,
			stdout: "--base deps: merge phase 1's branch debussy/plan-master-plan/phase-1 from origin (it must end completed there)\n--push: push HEAD to debussy/plan-master-plan/phase-2 on origin after every commit (never forced)\ndry run: nothing started"},
		{name: "--base takes deps or HEAD", args: []string{"run", "plan/MASTER_PLAN.md", "--only", "1", "--base", "main"}, code: 2,
			stderr: `--base "main": want deps or HEAD`},
		{name: "done inside a run takes the run's phase", env: inRun, args: []string{"done"}, code: 0,
			stdout: "phase 2 marked completed"},
		{name: "progress inside a run takes the run's phase", env: inRun, args: []string{"progress", "endpoints", "done"}, code: 0},
		{name: "--phase wins over the environment", env: inRun, args: []string{"done", "--phase", "1"}, code: 0,
			stdout: "phase 1 marked completed"},
		{name: "a flag's integer says its range", args: []string{"run", "plan/MASTER_PLAN.md", "--context-threshold", "abc"}, code: 2,
			stderr: `--context-threshold: "abc" is not an integer; allowed: an integer from 1 to 100`},
		{name: "a flag's duration says what is allowed", args: []string{"run", "plan/MASTER_PLAN.md", "--idle-timeout=5"}, code: 2,
			stderr: `--idle-timeout: "5" is not a duration; allowed: a Go duration greater than 0`},
		{name: "a budget flag says its config key's rule", args: []string{"run", "plan/MASTER_PLAN.md", "--budget-cost", "lots"}, code: 2,
			stderr: `--budget-cost: "lots" is not a number; allowed: 0 (no limit) or a cost in USD > 0`},
		{name: "--budget-tokens wants an integer", args: []string{"run", "plan/MASTER_PLAN.md", "--budget-tokens=1.5"}, code: 2,
			stderr: `--budget-tokens: "1.5" is not an integer; allowed: 0 (no limit) or a number of tokens > 0`},
		{name: "run --help lists the budget flags", args: []string{"run", "--help"}, code: 0, stdout: "--budget-tokens N"},
		{name: "help run", args: []string{"help", "run"}, code: 0, stdout: "debussy run - run a master plan's phases"},
		{name: "completion bash", args: []string{"completion", "bash"}, code: 0, stdout: "complete -o bashdefault -o default -F _debussy_complete debussy"},
		{name: "completion zsh", args: []string{"completion", "zsh"}, code: 0, stdout: "#compdef debussy"},
		{name: "completion of an unknown shell", args: []string{"completion", "fish"}, code: 2, stderr: `no completion for "fish"`},
		{name: "completing a command", args: []string{"--generate-bash-completion"}, code: 0, stdout: "run\ncheck\nstatus\n"},
		{name: "completing run's flags after the plan", args: []string{"run", "plan/MASTER_PLAN.md", "--co", "--generate-bash-completion"}, code: 0,
			stdout: "--context-threshold\n"},
		{name: "status --json with no runs", dir: empty, args: []string{"status", "--json"}, code: 0, stdout: "{}\n"},
		{name: "plurals in check", args: []string{"check", "plan/MASTER_PLAN.md"}, code: 0, stdout: "1 gate   1 task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dir == "" {
				tc.dir = dir
			}
			if slices.Contains(tc.args, "--generate-bash-completion") {
				// urfave/cli reads the word being completed from os.Args,
				// not from the arguments Run is given.
				saved := os.Args
				os.Args = append([]string{"debussy"}, tc.args...)
				defer func() { os.Args = saved }()
			}
			code, stdout, stderr := invoke(t, tc.dir, tc.env, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if code == ExitUsage && strings.Count(strings.TrimRight(stderr, "\n"), "\n") > 0 {
				t.Errorf("a usage error takes one line, got:\n%s", stderr)
			}
			if strings.Contains(stderr, "no command") || strings.Contains(stdout, "USAGE:") && code != 0 {
				t.Errorf("a usage error dumps help or misreads an argument as a command:\n%s%s", stdout, stderr)
			}
		})
	}

	sig, err := store.ReadSignal(run.ID, "2")
	if err != nil || sig == nil || sig.Status != state.StatusCompleted {
		t.Errorf("done inside the run: signal %+v, %v; want phase 2 completed", sig, err)
	}
	if ps, err := store.ReadProgress(run.ID, "2"); err != nil || len(ps) != 1 || ps[0].Message != "endpoints done" {
		t.Errorf("progress inside the run: %+v, %v", ps, err)
	}
	_, out, _ := invoke(t, empty, nil, "status", "--json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil || obj == nil {
		t.Errorf("status --json with no runs = %q: not a JSON object (%v)", out, err)
	}
}

// A misspelt command gets the command it most likely means, and nothing
// is suggested for a word close to none.
func TestCommandTypo(t *testing.T) {
	dir := gitRepo(t)
	for args, want := range map[string]string{
		"statu":  `debussy: no command "statu"; did you mean "status"? (see debussy --help)` + "\n",
		"lgos":   `debussy: no command "lgos"; did you mean "logs"? (see debussy --help)` + "\n",
		"xyzzy":  `debussy: no command "xyzzy" (see debussy --help)` + "\n",
		"chekc":  `debussy: no command "chekc"; did you mean "check"? (see debussy --help)` + "\n",
		"stauts": `debussy: no command "stauts"; did you mean "status"? (see debussy --help)` + "\n",
		"rn":     `debussy: no command "rn"; did you mean "run"? (see debussy --help)` + "\n",
		"ru":     `debussy: no command "ru"; did you mean "run"? (see debussy --help)` + "\n",
		"lgo":    `debussy: no command "lgo"; did you mean "logs"? (see debussy --help)` + "\n",
	} {
		code, stdout, stderr := invoke(t, dir, nil, args)
		if code != ExitUsage || stderr != want || stdout != "" {
			t.Errorf("debussy %s: exit %d, stderr %q, want %q", args, code, stderr, want)
		}
	}
}

// `version` and `--version` print the same line.
func TestVersionLine(t *testing.T) {
	dir := t.TempDir()
	_, a, _ := invoke(t, dir, nil, "version")
	_, b, _ := invoke(t, dir, nil, "--version")
	if a != b || !strings.HasPrefix(a, "debussy ") || strings.Count(a, "\n") != 1 {
		t.Errorf("version printed %q, --version %q; want the same one line", a, b)
	}
}

// A run that fails prints its summary once, then what to do next (the
// resume command and where the logs are); log lines carry no exit_code.
func TestFailedRunSaysWhatNext(t *testing.T) {
	dir := gitRepo(t)
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(".debussy/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := invoke(t, dir, map[string]string{"DEBUSSY_CLAUDE_BIN": claude, "DEBUSSY_RETRY_BACKOFF": "1ms"},
		"run", "plan/MASTER_PLAN.md")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFailed, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "its session failed 4 times"); n != 2 {
		// The summary's line and the log's "phase ended" record.
		t.Errorf("the failure is told %d times, want once in the summary and once in the log:\n%s\n%s", n, stdout, stderr)
	}
	if strings.Contains(stdout, "phase 1: phase 1") {
		t.Errorf("the summary stutters:\n%s", stdout)
	}
	l, err := state.New(filepath.Join(dir, state.DirName)).Load()
	if err != nil || l.Latest() == nil {
		t.Fatalf("ledger: %v", err)
	}
	id := l.Latest().ID
	want := "debussy: run " + id + " failed; fix what the summary says, then resume with:\n  debussy run plan/MASTER_PLAN.md\nlogs: .debussy/runs/" + id + "/\n"
	if !strings.HasSuffix(stderr, want) {
		t.Errorf("stderr does not end with what to do next:\n%s\nwant the ending:\n%s", stderr, want)
	}
	if strings.Contains(stderr, "exit_code=") {
		t.Errorf("a log line carries exit_code:\n%s", stderr)
	}
}

// A run whose ledger could not record its end (a full disk) still says
// why on stderr — its summary cannot — and how to resume; the others
// point at the summary.
func TestRunEndedSaysWhy(t *testing.T) {
	enospc := fmt.Errorf("%w: save ledger .debussy/state.json: write: no space left on device", orchestrator.ErrLedger)
	tests := []struct {
		name   string
		err    error
		status state.Status
		want   string
	}{
		{"ledger not saved", enospc, state.StatusFailed, "run r1 stopped: " + enospc.Error() + "; fix that, then resume with:"},
		{"still running on disk", errors.New("commit: disk full"), state.StatusRunning, "run r1 stopped: commit: disk full; fix that, then resume with:"},
		{"failed", errors.New("phase 1 failed"), state.StatusFailed, "run r1 failed; fix what the summary says, then resume with:"},
		{"interrupted", orchestrator.ErrInterrupted, state.StatusInterrupted, "run r1 interrupted; the work so far is committed, then resume with:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runEndedError{err: tt.err, run: &state.Run{ID: "r1", Status: tt.status}, resume: "debussy run plan.md", logs: ".debussy/runs/r1/"}
			got := r.next()
			if !strings.HasPrefix(got, "debussy: "+tt.want) || !strings.Contains(got, "\n  debussy run plan.md\n") {
				t.Errorf("next() = %q, want it to start %q and give the resume command", got, tt.want)
			}
		})
	}
}

// Refused before the run began because a git process holds the index
// lock: the error says to run the same command again once it is done.
func TestRunEndedLockedBeforeTheRun(t *testing.T) {
	store := state.New(t.TempDir())
	locked := fmt.Errorf("%w: commit the interrupted run's work: %w", orchestrator.ErrSetup, gitcommit.ErrLocked)
	err := (&Env{}).runEnded(locked, store, time.Now(), runOptions{PlanPath: "plans/my plan.md"})
	if !errors.Is(err, gitcommit.ErrLocked) || !strings.HasSuffix(err.Error(), "\nonce that git process is done, run again: debussy run 'plans/my plan.md'") {
		t.Errorf("err = %v", err)
	}
	if other := errors.New("no claude"); (&Env{}).runEnded(other, store, time.Now(), runOptions{PlanPath: "p.md"}) != other {
		t.Error("another refusal changed")
	}
}
