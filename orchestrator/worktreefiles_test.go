package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// inSomeCommit reports whether any commit of the user's branch (merged
// phase branches included) has a file named path.
func (f *fixture) inSomeCommit(path string) bool {
	f.t.Helper()
	for _, c := range f.commits() {
		tree, err := c.Tree()
		if err != nil {
			f.t.Fatal(err)
		}
		found := false
		_ = tree.Files().ForEach(func(file *object.File) error {
			found = found || file.Name == path
			return nil
		})
		if found {
			return true
		}
	}
	return false
}

// The ignored files .worktreeinclude names are in each phase's worktree
// before its first session, with their modes (the gates read them), after
// worktree_setup ran there; a relative symlink inside the repository is
// copied, one pointing out of it is not. A phase that un-ignores .env and
// changes it still commits no .env: nothing of it reaches any commit.
func TestWorktreeInclude(t *testing.T) {
	check := plans.Gate{Name: "env", Command: `grep -q 'TOKEN=abc' .env && [ "$(stat -c %a .env)" = 600 ] && test -f local/settings.json && test -L link && ! test -e out && ! test -L out && test -f setup-ran`}
	s := script{
		"1": {{"touch p1", "await p2", "writeas a.txt one", "done", "result"}},
		"2": {{"touch p2", "await p1", "writeas .gitignore .debussy/", "writeas .env TOKEN=changed", "done", "result"}},
	}
	changed := plans.Gate{Name: "changed", Command: "grep -q TOKEN=changed .env"}
	f := newFixture(t, s, phaseSpec{id: "1", gates: []plans.Gate{check}}, phaseSpec{id: "2", gates: []plans.Gate{changed}})
	f.cfg.Parallel = 2
	f.cfg.WorktreeSetup = "touch setup-ran"
	f.write(".gitignore", ".debussy/\n.env\nlocal/\nlink\nout\nsetup-ran\n")
	f.write(".worktreeinclude", ".env\nlocal/\nlink\nout\n")
	if _, err := f.repo.CommitAll(context.Background(), "ignore rules\n"); err != nil {
		t.Fatal(err)
	}
	f.write(".env", "TOKEN=abc\n")
	if err := os.Chmod(filepath.Join(f.root, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.write("local/settings.json", "{}\n")
	for name, target := range map[string]string{"link": ".env", "out": "/etc/hostname"} {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.run(context.Background()); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	for _, p := range f.lastRun().Phases {
		if p.Status != state.StatusCompleted || p.Merge == "" {
			t.Fatalf("phase %s: %s", p.ID, p.Status)
		}
	}
	for _, path := range []string{".env", "local/settings.json", "link", "out"} {
		if f.inSomeCommit(path) {
			t.Errorf("%s is in a commit", path)
		}
	}
	if got := f.readFile(".env"); got != "TOKEN=abc\n" {
		t.Errorf("the user's .env = %q", got)
	}
	if !strings.Contains(f.log.String(), "a symlink pointing out of the repository") {
		t.Errorf("no warning for the symlink out of the repository:\n%s", f.log)
	}
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A failing worktree_setup fails its phase before any session, naming the
// command, its exit code and its log; the new worktree and branch go.
func TestWorktreeSetupFails(t *testing.T) {
	s := script{"1": {{"done", "result"}}}
	f := newFixture(t, s, phaseSpec{id: "1"})
	f.cfg.Parallel = 2
	f.cfg.WorktreeSetup = "echo installing; echo no network >&2; exit 3"
	err := f.run(context.Background())
	if !errors.Is(err, ErrPhaseFailed) || !errors.Is(err, ErrSetup) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"worktree_setup `" + f.cfg.WorktreeSetup + "` exit 3", setupLog, "before its first session"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	p := f.lastRun().Phase("1")
	if p.Status != state.StatusFailed || p.Sessions != 0 || p.Branch != "" {
		t.Errorf("phase 1: %s, %d sessions, branch %q", p.Status, p.Sessions, p.Branch)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 1)); err == nil {
		t.Error("a session started")
	}
	log, err := os.ReadFile(filepath.Join(f.store.PhaseDir(f.lastRun().ID, "1"), setupLog))
	if err != nil || !bytes.Contains(log, []byte("no network")) || !bytes.Contains(log, []byte("exit 3")) {
		t.Errorf("setup log: %v\n%s", err, log)
	}
	if l := f.leftovers(); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
}

// --fail-fast: phase 1 is blocked while phase 2 waits in a tool; phase 2
// is stopped at a safe point, its work committed to its branch, and the
// summary says so. The rerun resumes phase 2 on that branch.
func TestFailFast(t *testing.T) {
	s := script{
		"1": {{"await p2", "done blocked stuck", "result"}, {"done", "result"}},
		"2": {{"writeas b.txt two", "touch p2", "block"}, {"done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	opts := f.options()
	opts.FailFast = true
	opts.StepSummary = filepath.Join(t.TempDir(), "summary.md")
	if err := Run(context.Background(), opts); !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v\n%s", err, f.log)
	}
	run := f.lastRun()
	if af := run.AfterFailure; af == nil || af.Phase != "1" || !af.FailFast || strings.Join(af.Running, ",") != "2" {
		t.Fatalf("after_failure = %+v", af)
	}
	p2 := run.Phase("2")
	if p2.Status != state.StatusInterrupted || p2.Branch == "" || len(p2.Commits) == 0 {
		t.Fatalf("phase 2: %s on %q, commits %v", p2.Status, p2.Branch, p2.Commits)
	}
	info, err := f.repo.ReadCommit(p2.Commits[len(p2.Commits)-1])
	if err != nil || info.Trailer("Debussy-Event") != "interrupted" {
		t.Fatalf("phase 2's last commit: %v %+v", err, info)
	}
	if tip, _ := f.repo.BranchHead(p2.Branch); tip != p2.Commits[len(p2.Commits)-1] {
		t.Errorf("branch %s at %s, want the interrupted commit", p2.Branch, tip)
	}
	for _, want := range []string{"phase 1 failed while phase 2 was running; --fail-fast stopped them at a safe point:",
		"phase 2: stopped by --fail-fast, its work committed on branch " + p2.Branch} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("summary does not say %q:\n%s", want, f.out)
		}
	}
	if md, err := os.ReadFile(opts.StepSummary); err != nil || !strings.Contains(string(md), "- phase 2: stopped by --fail-fast, its work committed on branch "+p2.Branch) {
		t.Errorf("step summary: %v\n%s", err, md)
	}
	if f.readFile("b.txt") != "" {
		t.Fatal("the stopped phase's work reached the user's branch")
	}

	opts = f.options()
	opts.Unblock = true // phase 1 resumes unanswered (--resume-blocked)
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("rerun: %v\n%s", err, f.log)
	}
	if p := f.lastRun().Phase("2"); p.Status != state.StatusCompleted || p.Branch != p2.Branch {
		t.Fatalf("rerun phase 2: %s on %q", p.Status, p.Branch)
	}
	if f.readFile("b.txt") != "two\n" {
		t.Errorf("b.txt = %q", f.readFile("b.txt"))
	}
}

// Without --fail-fast, a phase running when another fails goes on to its
// end and is merged; the summary says so. (Phase 2 waits, inside its
// session, until the ledger records the failure.)
func TestAfterFailureLetsOthersFinish(t *testing.T) {
	s := script{
		"1": {{"await p2", "done blocked stuck", "result"}},
		"2": {{"touch p2", "await go", "writeas b.txt two", "done", "result"}},
	}
	f := newFixture(t, s, phaseSpec{id: "1"}, phaseSpec{id: "2"})
	f.cfg.Parallel = 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if l, err := f.store.Load(); err == nil && l.Latest() != nil && l.Latest().AfterFailure != nil {
				_ = os.WriteFile(f.script+".mark-go", nil, 0o644)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if err := f.run(context.Background()); !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v\n%s", err, f.log)
	}
	run := f.lastRun()
	if af := run.AfterFailure; af == nil || af.FailFast || strings.Join(af.Running, ",") != "2" {
		t.Fatalf("after_failure = %+v", af)
	}
	if p := run.Phase("2"); p.Status != state.StatusCompleted || p.Merge == "" {
		t.Fatalf("phase 2: %s, merge %q", p.Status, p.Merge)
	}
	if f.readFile("b.txt") != "two\n" {
		t.Errorf("b.txt = %q", f.readFile("b.txt"))
	}
	want := "phase 1 failed while phase 2 was running; without --fail-fast they went on to their end:\n  phase 2: finished: completed, merged into your branch at "
	if !strings.Contains(f.out.String(), want) {
		t.Errorf("summary does not say %q:\n%s", want, f.out)
	}
}
