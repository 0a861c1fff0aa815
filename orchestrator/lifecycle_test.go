package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// hookHandler lets a test act on a log record the moment it is written, so
// it can interrupt a run at a known point without sleeping.
type hookHandler struct {
	slog.Handler
	fn func(slog.Record)
}

func (h hookHandler) Handle(ctx context.Context, r slog.Record) error {
	h.fn(r)
	return h.Handler.Handle(ctx, r)
}

func (h hookHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return hookHandler{h.Handler.WithAttrs(as), h.fn}
}

func (h hookHandler) WithGroup(name string) slog.Handler {
	return hookHandler{h.Handler.WithGroup(name), h.fn}
}

// onTool calls fn when the orchestrator reports a tool whose input is input.
func onTool(opts *Options, input string, fn func()) {
	opts.Logger = slog.New(hookHandler{opts.Logger.Handler(), func(r slog.Record) {
		if r.Message != "tool" {
			return
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "input" && a.Value.String() == input {
				fn()
				return false
			}
			return true
		})
	}})
}

// Ctrl-C stops the session after the running tool, commits the work and
// records the run as interrupted (exit 130); the next run resumes the phase
// from a checkpoint.
func TestRunInterruptedThenResumed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "block"}, {"done", "result"}}})
	f.interruptAt("sleep 1000")
	run := f.lastRun()
	if run.Status != state.StatusInterrupted || run.ExitCode != 130 || run.Phase("1").Status != state.StatusInterrupted {
		t.Errorf("run %s exit %d, phase %s; want interrupted, 130", run.Status, run.ExitCode, run.Phase("1").Status)
	}
	if got := f.events(); !slices.Equal(got, []string{"interrupted"}) {
		t.Errorf("commit events %q, want the interrupted work committed", got)
	}
	if !strings.Contains(f.log.String(), "Ctrl-C again") {
		t.Errorf("the log does not say how to kill at once:\n%s", f.log)
	}

	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun: %v\n%s", err, f.log)
	}
	p := f.prompt("1", 2)
	for _, want := range []string{"(resumed)", "stopped (interrupted) before phase 1 was done", "a.txt"} {
		if !strings.Contains(p, want) {
			t.Errorf("resumed prompt lacks %q:\n%s", want, p)
		}
	}
	if !strings.Contains(f.log.String(), "resuming the phase from a checkpoint") {
		t.Errorf("the log does not report the resume:\n%s", f.log)
	}
	if got := f.lastRun().Phase("1"); got.Status != state.StatusCompleted {
		t.Errorf("resumed phase %s", got.Status)
	}
}

// A session that ignores the interrupt is killed: at once on a second
// Ctrl-C, or after InterruptGrace.
func TestRunInterruptKills(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		hard    bool
		wantLog string
	}{
		{"second Ctrl-C", true, "second interrupt: killing the session"},
		{"grace runs out", false, "did not finish after the interrupt: killing the session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {{"write a.txt", "stubborn"}}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := f.options()
			hard := make(chan struct{})
			if tt.hard {
				close(hard)
				opts.InterruptGrace = time.Hour
			} else {
				opts.InterruptGrace = 100 * time.Millisecond
			}
			opts.Hard = hard
			onTool(&opts, "sleep 1000", cancel)
			if err := Run(ctx, opts); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("run: %v, want interrupted\n%s", err, f.log)
			}
			if !strings.Contains(f.log.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, f.log)
			}
			if !slices.Contains(f.tracked(), "a.txt") {
				t.Error("the killed session's work was not committed")
			}
		})
	}
}

// A run that died (kill -9) left its ledger entry running and its work in
// the tree: the next run marks it interrupted, commits what it left, and
// resumes its phase from a checkpoint.
func TestRunRecoversDeadRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"done", "result"}}})
	base, err := f.repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	dead := &state.Run{ID: "20260101-0000-dead", Plan: f.plan.Path, Status: state.StatusRunning, PID: 1 << 22,
		StartedAt: time.Now().Add(-time.Hour),
		Phases:    []*state.PhaseRecord{{ID: "1", Status: state.StatusRunning, Sessions: 1, Attempts: 1, BaseCommit: base}}}
	if err := f.store.Save(&state.Ledger{Runs: []*state.Run{dead}}); err != nil {
		t.Fatal(err)
	}
	f.write("left.txt", "the dead run's work\n")
	f.write("README.md", "# project, edited by the dead run\n")

	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	l := f.ledger()
	if r := l.Run(dead.ID); r.Status != state.StatusInterrupted || r.Phase("1").Status != state.StatusInterrupted || r.EndedAt.IsZero() {
		t.Errorf("dead run %s, phase %s; want both interrupted", r.Status, r.Phase("1").Status)
	}
	commits := f.commits()
	if len(commits) == 0 || !strings.Contains(commits[0].Message, "work left by interrupted run "+dead.ID) {
		t.Fatalf("the dead run's work was not committed first: %v", commits)
	}
	if !slices.Contains(f.tracked(), "left.txt") {
		t.Error("left.txt not committed")
	}
	if p := f.prompt("1", 1); !strings.Contains(p, "(resumed)") || !strings.Contains(p, "left.txt") {
		t.Errorf("the phase did not resume from a checkpoint:\n%s", p)
	}
	if !strings.Contains(f.log.String(), "an earlier run died without saving") {
		t.Errorf("the log does not report the dead run:\n%s", f.log)
	}
}

// Killed after a phase's end was committed and before the ledger was
// saved: the next run takes how the phase ended from git (completed, at
// that commit) instead of calling it interrupted, and does not redo it.
func TestRunRecoversDeadRunFromGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"2": {{"done", "result"}}}, phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	dead := &state.Run{ID: "20260101-0000-dead", Plan: f.plan.Path, Status: state.StatusRunning, PID: 1 << 22,
		StartedAt: time.Now().Add(-time.Hour),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusRunning, Sessions: 1, Attempts: 1},
			{ID: "2", Status: state.StatusPending}}}
	if err := f.store.Save(&state.Ledger{Runs: []*state.Run{dead}}); err != nil {
		t.Fatal(err)
	}
	f.write("one.txt", "phase 1's work\n")
	msg := gitcommit.Message{Subject: "debussy: phase 1 — completed", Run: dead.ID, Plan: PlanRel(f.root, f.plan.Path),
		Phase: "1", Event: string(state.StatusCompleted), Session: 1, Sessions: 1}
	end, err := f.repo.CommitAll(context.Background(), msg.String())
	if err != nil {
		t.Fatal(err)
	}

	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	p := f.ledger().Run(dead.ID).Phase("1")
	if p.Status != state.StatusCompleted || !slices.Contains(p.Commits, end.Hash) || p.LastError != "" {
		t.Errorf("the dead run's phase 1: %s, commits %v, %q; want completed at %s", p.Status, p.Commits, p.LastError, end.Hash[:7])
	}
	if _, err := os.Stat(promptPath(f.script, "1", 1)); err == nil {
		t.Error("phase 1 ran again")
	}
	if got := f.lastRun().Phase("2").Status; got != state.StatusCompleted {
		t.Errorf("phase 2: %s, want completed", got)
	}
}

// Problems found before any session refuse the run and record nothing.
func TestRunRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		phases   []phaseSpec
		setup    func(f *fixture, opts *Options)
		wantErr  []error
		wantText string
	}{
		{
			name:     "dirty tree",
			setup:    func(f *fixture, _ *Options) { f.write("README.md", "edited\n") },
			wantErr:  []error{ErrDirty},
			wantText: "README.md",
		},
		{
			name:     "unknown --phase",
			setup:    func(_ *fixture, o *Options) { o.PhaseID = "9" },
			wantErr:  []error{ErrSetup},
			wantText: "--phase 9: no such phase",
		},
		{
			name:     "unknown --phase lists the ids",
			phases:   []phaseSpec{{id: "1"}, {id: "2", deps: []string{"1"}}},
			setup:    func(_ *fixture, o *Options) { o.PhaseID = "7" },
			wantErr:  []error{ErrSetup},
			wantText: "its phases are 1, 2",
		},
		{
			name:     "--phase with unfinished dependencies",
			phases:   []phaseSpec{{id: "1"}, {id: "2", deps: []string{"1"}}, {id: "3", deps: []string{"2"}}},
			setup:    func(_ *fixture, o *Options) { o.PhaseID = "3" },
			wantErr:  []error{ErrSetup},
			wantText: "depends on unfinished phases 1, 2",
		},
		{
			name:    "dependency cycle",
			phases:  []phaseSpec{{id: "1", deps: []string{"2"}}, {id: "2", deps: []string{"1"}}},
			wantErr: []error{plans.ErrInvalidPlan},
		},
		{
			name: "corrupt ledger",
			setup: func(f *fixture, _ *Options) {
				f.write(".debussy/state.json", "{not json")
			},
			wantErr:  []error{ErrSetup, state.ErrCorruptLedger},
			wantText: "state.json",
		},
		{
			name: "run lock held",
			setup: func(f *fixture, _ *Options) {
				release, _, err := f.store.Lock(state.LockInfo{PID: os.Getpid(), RunID: "other", Started: time.Now()})
				if err != nil {
					f.t.Fatal(err)
				}
				f.t.Cleanup(func() { _ = release() })
			},
			wantErr: []error{state.ErrLocked},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, script{"1": {{"done", "result"}}}, tt.phases...)
			opts := f.options()
			if tt.setup != nil {
				tt.setup(f, &opts)
			}
			err := Run(context.Background(), opts)
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("run: %v, want %v", err, want)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not say %q", err, tt.wantText)
			}
			if _, err := os.Stat(promptPath(f.script, "1", 1)); err == nil {
				t.Error("a session started")
			}
			if l, err := f.store.Load(); err == nil && len(l.Runs) > 0 {
				t.Errorf("a refused run was recorded: %+v", l.Runs[0])
			}
		})
	}
}

// Phases the plan's table or an earlier run completed are skipped; --phase
// starts at a phase whose dependencies are done; --restart ignores the
// ledger.
func TestRunPhaseSelection(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{
		"1": {{"write one.txt", "done", "result"}},
		"2": {{"write two.txt", "done", "result"}},
		"3": {{"done", "result"}},
	}, phaseSpec{id: "1", status: plans.StatusCompleted}, phaseSpec{id: "2", deps: []string{"1"}}, phaseSpec{id: "3", deps: []string{"2"}})
	opts := f.options()
	opts.PhaseID = "2"
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("--phase 2: %v\n%s", err, f.log)
	}
	run := f.lastRun()
	got := []state.Status{run.Phase("1").Status, run.Phase("2").Status, run.Phase("3").Status}
	if want := []state.Status{state.StatusSkipped, state.StatusCompleted, state.StatusCompleted}; !slices.Equal(got, want) {
		t.Errorf("phase statuses %q, want %q", got, want)
	}
	if !strings.Contains(f.log.String(), `why="completed in the plan's table"`) {
		t.Errorf("phase 1 not reported as skipped:\n%s", f.log)
	}

	// Everything is done: a rerun starts no session.
	f.log = &bytes.Buffer{}
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if _, err := os.Stat(promptPath(f.script, "2", 2)); err == nil {
		t.Error("the rerun ran phase 2 again")
	}
	if !strings.Contains(f.log.String(), `why="completed in run`) {
		t.Errorf("phase 2 not reported as completed in the earlier run:\n%s", f.log)
	}
	if r := f.lastRun(); len(r.Phase("2").Commits) == 0 {
		t.Error("a skipped phase lost the commits of the run that completed it")
	}

	// --restart runs phase 2 and 3 again.
	opts = f.options()
	opts.Restart = true
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("--restart: %v", err)
	}
	f.prompt("2", 2)
	f.prompt("3", 2)
}

// The summary goes to Out and, in GitHub Actions, to the step summary.
func TestRunSummaries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}, "2": {{"done blocked needs | a key", "result"}}},
		phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	opts := f.options()
	opts.StepSummary = filepath.Join(t.TempDir(), "summary.md")
	if err := Run(context.Background(), opts); !errors.Is(err, ErrBlocked) {
		t.Fatalf("run: %v, want blocked", err)
	}
	md, err := os.ReadFile(opts.StepSummary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### debussy: Test plan — blocked", "| 1 | Step 1 | completed | 1 | 0 |", "| 2 | Step 2 | blocked |", "\nphase 2 was blocked"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}
	out := f.out.String()
	for _, want := range []string{"PHASE", "completed", "blocked", "\nphase 2 was blocked: the agent reported: needs | a key"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if r := f.lastRun(); r.Status != state.StatusBlocked || r.ExitCode != 1 {
		t.Errorf("run %s exit %d, want blocked, 1", r.Status, r.ExitCode)
	}
}

// Without auto_commit the work stays in the tree, uncommitted.
func TestRunWithoutAutoCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "usage 60000"}, {"done", "result"}}})
	f.cfg.AutoCommit = false
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	if c := f.commits(); len(c) != 0 {
		t.Errorf("%d commits without auto_commit", len(c))
	}
	if _, err := os.Stat(filepath.Join(f.root, "a.txt")); err != nil {
		t.Error(err)
	}
}

// A claude binary that is missing fails the phase as a setup problem.
func TestRunClaudeMissing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"done", "result"}}})
	f.cfg.ClaudeBin = filepath.Join(t.TempDir(), "no-claude")
	err := f.run(context.Background())
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "no-claude") {
		t.Fatalf("run: %v, want a setup error naming the binary", err)
	}
	if r := f.lastRun(); r.Phase("1").Status != state.StatusFailed || r.ExitCode != 1 {
		t.Errorf("phase %s exit %d, want failed, 1", r.Phase("1").Status, r.ExitCode)
	}
}

// A done signal that cannot be read fails the phase, and the ledger says so.
func TestRunUnreadableSignal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"bad-signal", "result"}}})
	err := f.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join("signals", "1.json")) {
		t.Fatalf("run: %v, want an error naming the signal file", err)
	}
	if r := f.lastRun(); r.Phase("1").Status != state.StatusFailed || r.Status != state.StatusFailed || r.ExitCode != 1 {
		t.Errorf("phase %s, run %s exit %d; want failed, failed, 1", r.Phase("1").Status, r.Status, r.ExitCode)
	}
}

// .debussy/ is a cache of git: a completion git no longer agrees with — a
// later outcome of the phase (a --restart that ended blocked), or a commit
// no longer reachable from HEAD (a reset) — does not skip the phase.
func TestCompletionNeedsGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {
		{"write one.txt", "done", "result"},
		{"done blocked needs a key", "result"},
		{"write one.txt", "done", "result"},
		{"write one.txt", "done", "result"},
	}})
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	first := f.commits()[0]

	opts := f.options()
	opts.Restart = true
	if err := Run(context.Background(), opts); !errors.Is(err, ErrBlocked) {
		t.Fatalf("--restart: %v, want phase 1 blocked\n%s", err, f.log)
	}
	// The latest outcome in git is blocked: the rerun runs phase 1 (told
	// to resume it unanswered: --resume-blocked).
	opts = f.options()
	opts.Unblock = true
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("rerun after the blocked restart: %v\n%s", err, f.log)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 3)); err != nil {
		t.Fatalf("phase 1 was skipped although its latest outcome in git is blocked")
	}

	// HEAD back before any of debussy's commits: nothing is done.
	repo, err := git.PlainOpen(f.root)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Reset(&git.ResetOptions{Commit: first.ParentHashes[0], Mode: git.HardReset}); err != nil {
		t.Fatal(err)
	}
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun after the reset: %v\n%s", err, f.log)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 4)); err != nil {
		t.Fatalf("phase 1 was skipped although its completion is not reachable from HEAD")
	}
}

// interruptAt runs the plan and presses Ctrl-C when the agent runs the
// tool; the run must end interrupted.
func (f *fixture) interruptAt(tool string) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := f.options()
	onTool(&opts, tool, cancel)
	if err := Run(ctx, opts); !errors.Is(err, ErrInterrupted) {
		f.t.Fatalf("run: %v, want interrupted\n%s", err, f.log)
	}
}

// A resume needs git too: after a reset past the interrupted run's commit,
// its checkpoint describes work that is gone — the phase starts fresh, and
// its prompt names none of the discarded files.
func TestResumeNeedsGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "block"}, {"done", "result"}}})
	f.interruptAt("sleep 1000")
	interrupted := f.commits()[0]
	// git itself: go-git's hard reset also deletes the untracked .debussy/.
	reset := exec.Command("git", "reset", "-q", "--hard", interrupted.ParentHashes[0].String())
	reset.Dir = f.root
	if out, err := reset.CombinedOutput(); err != nil {
		t.Fatalf("git reset: %v %s", err, out)
	}
	if f.lastRun() == nil {
		t.Fatal("the reset removed .debussy/")
	}
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("rerun after the reset: %v\n%s", err, f.log)
	}
	p := f.prompt("1", 2)
	for _, unwanted := range []string{"(resumed)", "a.txt"} {
		if strings.Contains(p, unwanted) {
			t.Errorf("the prompt after the reset has %q from the discarded run:\n%s", unwanted, p)
		}
	}
	if want := "its last commit, " + interrupted.Hash.String()[:7] + ", is not on this branch"; !strings.Contains(f.log.String(), want) {
		t.Errorf("the log does not say why the phase starts fresh (%q):\n%s", want, f.log)
	}
}

// claude saying the settings debussy passes are not in effect (2.1.330+'s
// settings_not_in_effect naming --settings) ends the run at once: a setup
// error (exit 2), no retry, no commit; the same word about the user's own
// settings file is a warning and the phase goes on.
func TestRunSettingsNotInEffect(t *testing.T) {
	t.Parallel()
	s := script{"1": {{"settings flagSettings (--settings): idleCompaction: Expected boolean", "block"}}}
	f := newFixture(t, s, phaseSpec{id: "1"})
	head, _ := f.repo.Head()
	err := f.run(context.Background())
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "debussy passes") || !strings.Contains(err.Error(), "update claude") {
		t.Fatalf("err = %v, want a setup error naming the settings and the fix\n%s", err, f.log)
	}
	if now, _ := f.repo.Head(); now != head {
		t.Errorf("HEAD moved %s → %s", head, now)
	}
	if n := f.lastRun().Phase("1").Sessions; n != 0 {
		t.Errorf("%d sessions counted, want 0 (the refused one does not count)", n)
	}

	s = script{"1": {{"settings /home/me/.claude/settings.json: permissions.allow: Expected array", "done", "result"}}}
	f = newFixture(t, s, phaseSpec{id: "1"})
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("the user's own settings: %v\n%s", err, f.log)
	}
	if !strings.Contains(f.log.String(), "claude says some settings did not load") {
		t.Errorf("no warning in the log:\n%s", f.log)
	}
}
