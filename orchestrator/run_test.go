package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// phaseSpec is one phase of a test plan.
type phaseSpec struct {
	id     string
	deps   []string
	gates  []plans.Gate
	status plans.Status // as the master plan's table says
}

// fixture is a real temporary git repository with a plan, a .debussy store
// and a scripted fake claude (see fakeclaude_test.go).
type fixture struct {
	t      *testing.T
	root   string
	repo   *gitcommit.Repo
	store  *state.Store
	plan   *plans.Plan
	script string
	cfg    config.Config
	// Written under slog's handler lock and by the run's own goroutine;
	// read after Run returns, once every session goroutine is done.
	log *bytes.Buffer
	out *bytes.Buffer
}

func gitEnv(home string) func(string) string {
	return func(k string) string {
		switch k {
		case "HOME", "XDG_CONFIG_HOME":
			return home
		case "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME":
			return "Test Author"
		case "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL":
			return "test@example.com"
		}
		return ""
	}
}

func newFixture(t *testing.T, s script, phases ...phaseSpec) *fixture {
	t.Helper()
	if len(phases) == 0 {
		phases = []phaseSpec{{id: "1"}}
	}
	root := t.TempDir()
	if _, err := git.PlainInit(root, false); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root, store: state.New(filepath.Join(root, state.DirName)), log: &bytes.Buffer{}, out: &bytes.Buffer{}}
	f.write("README.md", "# project\n")
	plan := &plans.Plan{Name: "Test plan", Path: filepath.Join(root, "plan", "MASTER_PLAN.md")}
	f.write("plan/MASTER_PLAN.md", "# Test plan\n")
	for _, ps := range phases {
		file := "plan/phase-" + ps.id + ".md"
		content := fmt.Sprintf("# Phase %s: Step %s\n\n## Tasks\n\n- [ ] the work of phase %s\n", ps.id, ps.id, ps.id)
		f.write(file, content)
		plan.Phases = append(plan.Phases, &plans.Phase{
			ID: ps.id, Title: "Phase " + ps.id + ": Step " + ps.id, File: file, Path: filepath.Join(root, file),
			Status: ps.status, DependsOn: ps.deps, Gates: ps.gates, Content: content,
		})
	}
	f.plan = plan
	repo, err := gitcommit.Open(root, gitcommit.WithGetenv(gitEnv(t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	f.repo = repo
	if _, err := repo.CommitAll(context.Background(), "initial\n"); err != nil {
		t.Fatal(err)
	}
	f.script = writeScript(t, t.TempDir(), s)
	f.cfg = config.Defaults()
	f.cfg.ClaudeBin = fake.Path(t)
	f.cfg.ContextWindow = 100_000
	f.cfg.ContextThreshold = 50
	f.cfg.MaxRestarts = 2
	f.cfg.MaxRetries = 1
	f.cfg.StopGrace = config.Duration(50 * time.Millisecond)
	f.cfg.IdleTimeout = config.Duration(time.Minute)
	f.cfg.SessionTimeout = config.Duration(time.Minute)
	f.cfg.GateTimeout = config.Duration(time.Minute)
	// Plain restarts at the threshold: TestStages covers the handoff.
	f.cfg.Handoff = false
	return f
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	path := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) options() Options {
	return Options{
		Config: f.cfg,
		Plan:   f.plan,
		Repo:   f.repo,
		Store:  f.store,
		Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Out:    f.out,
		// No GORACE: the fakes are built without -race (internal/fakeexe).
		Env:      append(os.Environ(), scriptEnv+"="+f.script),
		Backoff:  func(int) time.Duration { return 0 },
		ExitCode: testExitCode,
	}
}

// testExitCode stands in for commands' mapping.
func testExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrInterrupted):
		return 130
	}
	return 1
}

func (f *fixture) run(ctx context.Context) error {
	f.t.Helper()
	return Run(ctx, f.options())
}

// prompt is what session n (1-based) of the phase was told.
func (f *fixture) prompt(phase string, n int) string {
	f.t.Helper()
	data, err := os.ReadFile(promptPath(f.script, phase, n))
	if err != nil {
		f.t.Fatalf("session %d of phase %s never started: %v", n, phase, err)
	}
	return string(data)
}

func (f *fixture) ledger() *state.Ledger {
	f.t.Helper()
	l, err := f.store.Load()
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func (f *fixture) lastRun() *state.Run {
	f.t.Helper()
	r := f.ledger().Latest()
	if r == nil {
		f.t.Fatal("no run in the ledger")
	}
	return r
}

// commits returns the commits after the initial one, oldest first.
func (f *fixture) commits() []*object.Commit {
	f.t.Helper()
	r, err := git.PlainOpen(f.root)
	if err != nil {
		f.t.Fatal(err)
	}
	iter, err := r.Log(&git.LogOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*object.Commit
	_ = iter.ForEach(func(c *object.Commit) error {
		if c.NumParents() > 0 {
			out = append(out, c)
		}
		return nil
	})
	slices.Reverse(out)
	return out
}

// events are the Debussy-Event trailers of the commits, oldest first.
func (f *fixture) events() []string {
	var out []string
	for _, c := range f.commits() {
		for _, line := range strings.Split(c.Message, "\n") {
			if ev, ok := strings.CutPrefix(line, "Debussy-Event: "); ok {
				out = append(out, ev)
			}
		}
	}
	return out
}

// tracked lists the files of HEAD's tree.
func (f *fixture) tracked() []string {
	f.t.Helper()
	r, err := git.PlainOpen(f.root)
	if err != nil {
		f.t.Fatal(err)
	}
	head, err := r.Head()
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		f.t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		f.t.Fatal(err)
	}
	var files []string
	_ = tree.Files().ForEach(func(fl *object.File) error {
		files = append(files, fl.Name)
		return nil
	})
	return files
}

// Each way a session can end leads to the next action: a restart from a
// checkpoint, a retry, a remediation session, or the phase's end.
func TestPhaseLoop(t *testing.T) {
	t.Parallel()
	checkGate := plans.Gate{Name: "check", Command: "echo GATE-SAYS-NO; test -f fixed.txt"}
	tests := []struct {
		name   string
		phases []phaseSpec
		script script
		cfg    func(*config.Config)

		wantErr      error // nil, or what errors.Is must find
		wantErrText  []string
		wantStatus   state.Status // of phase 1; "" skips the ledger checks
		wantSessions int
		wantRestarts int
		wantAttempts int
		wantEvents   []string                // commit trailers, in order
		wantPrompt   map[int][]string        // session → what its prompt says
		wantLog      []string                // in the log
		wantFiles    []string                // committed
		wantPhases   map[string]state.Status // other phases
	}{
		{
			name:       "completed",
			script:     script{"1": {{"write a.txt", "done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 1, wantAttempts: 1,
			wantEvents: []string{"completed"}, wantFiles: []string{"a.txt"},
			wantPrompt: map[int][]string{1: {"debussy done --phase 1", "the work of phase 1"}},
			wantLog:    []string{"session started", "no gates"},
		},
		{
			name: "an unchecked gate is not run, not passed, and handed to the agent",
			phases: []phaseSpec{{id: "1", gates: []plans.Gate{
				{Name: "i18n", Requirement: "all strings translated", Unchecked: true},
				{Name: "ok", Command: "true"},
			}}},
			script:     script{"1": {{"write a.txt", "done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 1, wantAttempts: 1,
			wantEvents: []string{"completed"}, wantFiles: []string{"a.txt"},
			wantPrompt: map[int][]string{1: {"no command debussy can run", "i18n: all strings translated"}},
			wantLog:    []string{"gate unchecked: no command, not run", "gate passed"},
		},
		{
			name:       "stopped at the threshold restarts from a checkpoint",
			script:     script{"1": {{"write a.txt", "usage 60000"}, {"write b.txt", "done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantRestarts: 1, wantAttempts: 1,
			wantEvents: []string{"restart", "completed"}, wantFiles: []string{"a.txt", "b.txt"},
			wantPrompt: map[int][]string{2: {"# Checkpoint — phase 1: Step 1 (restart 1 of 2)", "a.txt", "debussy done --phase 1"}},
			wantLog:    []string{"threshold crossed: stopping at the next safe point", "safe point reached", "restarting the session from a checkpoint"},
		},
		{
			name:    "blocked",
			script:  script{"1": {{"write a.txt", "done blocked needs a key", "result"}}},
			wantErr: ErrBlocked, wantErrText: []string{"phase 1 was blocked", "needs a key"},
			wantStatus: state.StatusBlocked, wantSessions: 1, wantAttempts: 1,
			wantEvents: []string{"blocked"}, wantFiles: []string{"a.txt"},
		},
		{
			name:       "reported failed, then fixed in a remediation",
			script:     script{"1": {{"done failed cannot", "result"}, {"write a.txt", "done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantAttempts: 2,
			wantEvents: []string{"completed"},
			wantPrompt: map[int][]string{2: {"Remediation 1/1", "you reported this phase failed: cannot"}},
			wantLog:    []string{"phase not done: starting a remediation session"},
		},
		{
			name:       "no done signal leads to a remediation",
			script:     script{"1": {{"write a.txt", "result"}, {"done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantAttempts: 2,
			wantEvents: []string{"remediation", "completed"},
			wantPrompt: map[int][]string{2: {"Remediation 1/1", "without running `debussy done --phase 1`"}},
		},
		{
			name:       "crash is retried from a checkpoint",
			script:     script{"1": {{"write a.txt", "crash"}, {"done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantAttempts: 1,
			wantEvents: []string{"retry", "completed"},
			wantPrompt: map[int][]string{2: {"# Checkpoint — phase 1: Step 1 (retry)", "a.txt", "crashed"}},
			wantLog:    []string{"session failed: retrying from a checkpoint", "code 3", "the fake crashed"},
		},
		{
			name:    "API errors until the retries run out",
			script:  script{"1": {{"api 529"}}},
			wantErr: ErrPhaseFailed, wantErrText: []string{"phase 1 failed", "its session failed 4 times", "API status 529"},
			wantStatus: state.StatusFailed, wantSessions: 4, wantAttempts: 1, wantEvents: []string{"failed"},
			wantLog: []string{"API error: claude retries", "api_status=529"},
		},
		{
			name:       "idle timeout is retried",
			script:     script{"1": {{"write a.txt", "hang"}, {"done", "result"}}},
			cfg:        func(c *config.Config) { c.IdleTimeout = config.Duration(2 * time.Second) },
			wantStatus: state.StatusCompleted, wantAttempts: 1,
			wantEvents: []string{"retry", "completed"},
			wantLog:    []string{"idle timeout: no output from claude for 2s"},
		},
		{
			name:       "session timeout is retried",
			script:     script{"1": {{"write a.txt", "block"}, {"done", "result"}}},
			cfg:        func(c *config.Config) { c.SessionTimeout = config.Duration(1500 * time.Millisecond) },
			wantStatus: state.StatusCompleted, wantAttempts: 1,
			wantEvents: []string{"retry", "completed"},
			wantLog:    []string{"session timeout: session ran longer than 1.5s", "the running tool did not finish within stop_grace"},
		},
		{
			name:       "prompt too long restarts",
			script:     script{"1": {{"write a.txt", "error Prompt is too long"}, {"done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantRestarts: 1, wantAttempts: 1,
			wantEvents: []string{"restart", "completed"},
			wantPrompt: map[int][]string{2: {"(restart 1 of 2)", "prompt too long"}},
		},
		{
			name:    "max restarts exceeded",
			script:  script{"1": {{"write a.txt", "usage 60000"}, {"write b.txt", "usage 60000"}}},
			cfg:     func(c *config.Config) { c.MaxRestarts = 1 },
			wantErr: ErrPhaseFailed, wantErrText: []string{"max restarts (1) exceeded", "work committed"},
			wantStatus: state.StatusFailed, wantSessions: 2, wantRestarts: 1, wantAttempts: 1,
			wantEvents: []string{"restart", "failed"}, wantFiles: []string{"a.txt", "b.txt"},
		},
		{
			name:    "the agent's handoff with max_restarts spent fails the phase as any restart",
			script:  script{"1": {{"write a.txt", "agenthandoff done a"}, {"write b.txt", "agenthandoff done b"}}},
			cfg:     func(c *config.Config) { c.MaxRestarts = 1 },
			wantErr: ErrPhaseFailed, wantErrText: []string{"max restarts (1) exceeded: the agent handed off at a task boundary", "work committed"},
			wantStatus: state.StatusFailed, wantSessions: 2, wantRestarts: 1, wantAttempts: 1,
			wantEvents: []string{"restart", "failed"}, wantFiles: []string{"a.txt", "b.txt"},
		},
		{
			name:    "max retries exceeded",
			script:  script{"1": {{"result"}}},
			wantErr: ErrPhaseFailed, wantErrText: []string{"on attempt 2:", "without `debussy done`"},
			wantStatus: state.StatusFailed, wantSessions: 2, wantAttempts: 2, wantEvents: []string{"failed"},
		},
		{
			name:       "a failed gate's output reaches the remediation prompt",
			phases:     []phaseSpec{{id: "1", gates: []plans.Gate{checkGate}}},
			script:     script{"1": {{"done", "result"}, {"write fixed.txt", "done", "result"}}},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantAttempts: 2,
			wantEvents: []string{"completed"}, wantFiles: []string{"fixed.txt"},
			wantPrompt: map[int][]string{2: {"Remediation 1/1", `The gate "check" failed.`, "GATE-SAYS-NO", "Exit code: 1"}},
			wantLog:    []string{"gate failed", "gate passed"},
		},
		{
			name:    "refused credentials end the run at once: no retry, no commit, the refused session not counted",
			script:  script{"1": {{"api 401"}}},
			wantErr: ErrSetup, wantErrText: []string{"status 401", "ANTHROPIC_API_KEY"},
			wantStatus: state.StatusFailed, wantAttempts: 1,
		},
		{
			name:    "an unknown model ends the run at once",
			script:  script{"1": {{"write a.txt", "api 404"}}},
			wantErr: ErrSetup, wantErrText: []string{"status 404", "set model"},
			wantStatus: state.StatusFailed, wantAttempts: 1,
			wantEvents: []string{"interrupted"}, wantFiles: []string{"a.txt"}, // the work is kept, as for an interruption
		},
		{
			name:    "a gate whose program is missing fails the phase without a remediation session",
			phases:  []phaseSpec{{id: "1", gates: []plans.Gate{{Name: "lint", Command: "no-such-linter-for-debussy check ."}}}},
			script:  script{"1": {{"write a.txt", "done", "result"}}},
			wantErr: ErrSetup, wantErrText: []string{"no-such-linter-for-debussy is not installed", "gate_commands"},
			wantStatus: state.StatusFailed, wantSessions: 1, wantAttempts: 1,
			wantEvents: []string{"failed"}, wantFiles: []string{"a.txt"},
		},
		{
			name:       "max turns without a required signal runs the gates",
			script:     script{"1": {{"write a.txt", "max_turns"}}},
			cfg:        func(c *config.Config) { c.RequireDoneSignal = false },
			wantStatus: state.StatusCompleted, wantSessions: 1, wantAttempts: 1,
			wantEvents: []string{"completed"},
		},
		{
			name:       "restarts disabled: the threshold is only reported",
			script:     script{"1": {{"usage 60000", "compact", "done", "result"}}},
			cfg:        func(c *config.Config) { c.MaxRestarts = 0 },
			wantStatus: state.StatusCompleted, wantSessions: 1, wantAttempts: 1, wantEvents: []string{"completed"},
			wantLog: []string{"restarts are disabled", "claude compacted its context"},
		},
		{
			name:        "a ledger that cannot be written stops the run",
			script:      script{"1": {{"ledger-dir", "done", "result"}}},
			wantErr:     ErrLedger,
			wantErrText: []string{"ledger not saved", filepath.Join(state.DirName, "state.json")},
		},
		{
			name:   "phases in order, progress notes reach the checkpoint",
			phases: []phaseSpec{{id: "1"}, {id: "2", deps: []string{"1"}}},
			script: script{
				"1": {{"progress half way there", "write a.txt", "usage 60000"}, {"done", "result"}},
				"2": {{"write c.txt", "done", "result"}},
			},
			wantStatus: state.StatusCompleted, wantSessions: 2, wantRestarts: 1, wantAttempts: 1,
			wantEvents: []string{"restart", "completed", "completed"}, wantFiles: []string{"a.txt", "c.txt"},
			wantPrompt: map[int][]string{2: {"half way there"}},
			wantPhases: map[string]state.Status{"2": state.StatusCompleted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.script, tt.phases...)
			if tt.cfg != nil {
				tt.cfg(&f.cfg)
			}
			err := f.run(context.Background())
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("run: %v\n%s", err, f.log)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("run: %v, want %v\n%s", err, tt.wantErr, f.log)
			}
			for _, want := range tt.wantErrText {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if !strings.Contains(tt.name, "ledger that cannot be written") { // its state.json is the test's directory
				assertPrivate(t, f.store.Dir)
			}
			for _, want := range tt.wantLog {
				if !strings.Contains(f.log.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, f.log)
				}
			}
			for n, wants := range tt.wantPrompt {
				p := f.prompt("1", n)
				for _, want := range wants {
					if !strings.Contains(p, want) {
						t.Errorf("prompt of session %d lacks %q:\n%s", n, want, p)
					}
				}
			}
			if got := f.events(); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("commit events %q, want %q", got, tt.wantEvents)
			}
			tracked := f.tracked()
			for _, want := range tt.wantFiles {
				if !slices.Contains(tracked, want) {
					t.Errorf("%s not committed: %q", want, tracked)
				}
			}
			if tt.wantStatus == "" {
				return
			}
			run := f.lastRun()
			rec := run.Phase("1")
			if rec.Status != tt.wantStatus {
				t.Errorf("phase status %s, want %s (%s)", rec.Status, tt.wantStatus, rec.LastError)
			}
			if tt.wantSessions != 0 && rec.Sessions != tt.wantSessions {
				t.Errorf("sessions %d, want %d", rec.Sessions, tt.wantSessions)
			}
			if rec.Restarts != tt.wantRestarts || rec.Attempts != tt.wantAttempts {
				t.Errorf("restarts %d, attempts %d; want %d, %d", rec.Restarts, rec.Attempts, tt.wantRestarts, tt.wantAttempts)
			}
			for id, want := range tt.wantPhases {
				if got := run.Phase(id).Status; got != want {
					t.Errorf("phase %s status %s, want %s", id, got, want)
				}
			}
			wantRun, wantCode := state.StatusCompleted, 0
			if tt.wantErr != nil {
				wantRun, wantCode = tt.wantStatus, 1
			}
			if run.Status != wantRun || run.ExitCode != wantCode || run.EndedAt.IsZero() {
				t.Errorf("run %s exit %d ended %v, want %s exit %d", run.Status, run.ExitCode, run.EndedAt, wantRun, wantCode)
			}
			if !strings.Contains(f.out.String(), "PHASE") || !strings.Contains(f.out.String(), string(tt.wantStatus)) {
				t.Errorf("summary:\n%s", f.out)
			}
		})
	}
}
