package orchestrator

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// testPlanID is plans.ID of the fixtures' plan/MASTER_PLAN.md.
const testPlanID = "plan-master-plan"

func testBranch(phase string) string { return plans.PhaseBranch(testPlanID, phase) }

// gitT runs git in dir with a test identity and returns its trimmed output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Other", "-c", "user.email=other@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// withOrigin gives f a bare origin holding its branch.
func (f *fixture) withOrigin() string {
	f.t.Helper()
	origin := filepath.Join(f.t.TempDir(), "origin.git")
	gitT(f.t, f.root, "init", "--quiet", "--bare", origin)
	gitT(f.t, f.root, "remote", "add", "origin", origin)
	gitT(f.t, f.root, "push", "--quiet", "origin", "HEAD:refs/heads/main")
	return origin
}

// clone is another machine: a fresh clone of origin's main with f's plan and
// its own fake claude script.
func (f *fixture) clone(origin string, s script) *fixture {
	f.t.Helper()
	t := f.t
	root := filepath.Join(t.TempDir(), "clone")
	gitT(t, t.TempDir(), "clone", "--quiet", "--branch", "main", origin, root)
	c := &fixture{t: t, root: root, store: state.New(filepath.Join(root, state.DirName)), log: f.log, out: f.out, cfg: f.cfg}
	c.log.Reset()
	plan := &plans.Plan{Name: f.plan.Name, Path: filepath.Join(root, "plan", "MASTER_PLAN.md")}
	for _, ph := range f.plan.Phases {
		cp := *ph
		cp.Path = filepath.Join(root, ph.File)
		plan.Phases = append(plan.Phases, &cp)
	}
	c.plan = plan
	repo, err := gitcommit.Open(root, gitcommit.WithGetenv(gitEnv(t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	c.repo = repo
	c.script = writeScript(t, t.TempDir(), s)
	return c
}

func (f *fixture) job(only, base, push string) Options {
	opts := f.options()
	opts.Only, opts.Base, opts.Push = only, base, push
	return opts
}

// remoteTip is the commit of branch on origin, "" when there is none.
func remoteTip(t *testing.T, origin, branch string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	cmd.Dir = origin
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

func head(t *testing.T, dir string) string { t.Helper(); return gitT(t, dir, "rev-parse", "HEAD") }

// A two-phase plan run as two jobs on two machines: phase 2 starts from
// phase 1's pushed result, and each phase's branch ends completed on origin.
func TestBaseDepsMergesAndPushes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write one.txt", "done", "result"}}},
		phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	origin := f.withOrigin()
	if err := Run(context.Background(), f.job("1", "", "origin")); err != nil {
		t.Fatalf("job 1: %v\n%s", err, f.log)
	}
	if got, want := remoteTip(t, origin, testBranch("1")), head(t, f.root); got != want {
		t.Fatalf("phase 1's branch on origin at %q, want HEAD %s\n%s", got, want, f.log)
	}

	c := f.clone(origin, script{"2": {{"read one.txt", "write two.txt", "done", "result"}}})
	if err := Run(context.Background(), c.job("2", BaseDeps, "origin")); err != nil {
		t.Fatalf("job 2: %v\n%s", err, c.log)
	}
	files := strings.Join(c.tracked(), " ")
	if !strings.Contains(files, "one.txt") || !strings.Contains(files, "two.txt") {
		t.Errorf("phase 2's result lacks its dependency's files: %s", files)
	}
	tip := remoteTip(t, origin, testBranch("2"))
	if tip != head(t, c.root) {
		t.Errorf("phase 2's branch on origin at %q, want HEAD %s", tip, head(t, c.root))
	}
	if ev := gitT(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); ev != "completed" {
		t.Errorf("phase 2's branch ends with event %q", ev)
	}
	// Each job pushed its record beside its branch, one ref per phase and
	// run: what it did, never a transcript, no error text.
	refs := strings.Fields(gitT(t, origin, "for-each-ref", "--format=%(refname)", "refs/debussy/records/"+testPlanID+"/"))
	if len(refs) != 2 || !strings.Contains(refs[0], "/phase-1/") || !strings.Contains(refs[1], "/phase-2/") {
		t.Fatalf("records on origin: %v", refs)
	}
	run := gitT(t, origin, "cat-file", "blob", refs[1]+":run.json")
	events := gitT(t, origin, "cat-file", "blob", refs[1]+":events.jsonl")
	if !strings.Contains(run, `"status": "completed"`) || !strings.Contains(events, `"event":"session_ended"`) ||
		!strings.Contains(events, `"event":"run_ended"`) || strings.Contains(events, "session-1.jsonl") {
		t.Errorf("phase 2's record:\n%s\n%s", run, events)
	}
	if names := gitT(t, origin, "ls-tree", "--name-only", refs[1]); names != "events.jsonl\nrun.json" {
		t.Errorf("phase 2's record holds %q", names)
	}

	// The same job again (a CI retry): nothing to do, nothing pushed anew.
	c2 := f.clone(origin, script{})
	if err := Run(context.Background(), c2.job("2", BaseDeps, "origin")); err != nil {
		t.Fatalf("job 2 again: %v\n%s", err, c2.log)
	}
	if _, err := os.Stat(promptPath(c2.script, "2", 1)); err == nil {
		t.Error("a completed phase ran again")
	}
	if got := remoteTip(t, origin, testBranch("2")); got != tip {
		t.Errorf("phase 2's branch moved from %s to %s", tip, got)
	}
}

// A dependency that is not there, or not completed, is refused before any
// session; a conflict between dependencies is exit 1 naming the file, HEAD
// as it was, nothing pushed.
func TestBaseDepsRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{
		"1": {{"writeas c.txt one", "done", "result"}},
		"2": {{"writeas c.txt two", "done blocked no key", "result"}},
	}, phaseSpec{id: "1"}, phaseSpec{id: "2"}, phaseSpec{id: "3", deps: []string{"1", "2"}})
	origin := f.withOrigin()

	c := f.clone(origin, script{})
	orig := head(t, c.root)
	err := Run(context.Background(), c.job("3", BaseDeps, "origin"))
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), testBranch("1")) {
		t.Fatalf("missing dependency branch: %v", err)
	}

	if err := Run(context.Background(), f.job("1", "", "origin")); err != nil {
		t.Fatalf("job 1: %v\n%s", err, f.log)
	}
	c2 := f.clone(origin, script{"2": {{"writeas c.txt two", "done blocked no key", "result"}}})
	if err := Run(context.Background(), c2.job("2", "", "origin")); !errors.Is(err, ErrBlocked) {
		t.Fatalf("job 2: %v\n%s", err, c2.log)
	}
	err = Run(context.Background(), c.job("3", BaseDeps, "origin"))
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "phase 2") || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("blocked dependency: %v", err)
	}
	if got := head(t, c.root); got != orig {
		t.Errorf("HEAD moved to %s on a refusal", got)
	}

	// Phase 2 completes on another machine, on top of its blocked run: both
	// dependencies wrote c.txt.
	c3 := f.clone(origin, script{"2": {{"writeas c.txt two", "done", "result"}}})
	if err := Run(context.Background(), c3.job("2", "", "origin")); err != nil {
		t.Fatalf("job 2 again: %v\n%s", err, c3.log)
	}
	err = Run(context.Background(), c.job("3", BaseDeps, "origin"))
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "c.txt") || testExitCode(err) != 1 {
		t.Fatalf("conflict: %v\n%s", err, c.log)
	}
	if got := head(t, c.root); got != orig {
		t.Errorf("HEAD at %s after the conflict, want %s as before", got, orig)
	}
	if st := gitT(t, c.root, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("tree changed after the conflict:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(c.root, "c.txt")); err == nil {
		t.Error("c.txt left in the tree")
	}
	if got := remoteTip(t, origin, testBranch("3")); got != "" {
		t.Errorf("phase 3 pushed after a conflict: %s", got)
	}
}

// Every commit is pushed; a push rejected because another pusher moved the
// branch on is fetched, merged and pushed again, never forced.
func TestPushAfterEveryCommitAndRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {
		{"write a.txt", "usage 60000"},
		{"touch restarted", "await pushed", "write b.txt", "done", "result"},
	}}, phaseSpec{id: "1"})
	origin := f.withOrigin()
	other := filepath.Join(t.TempDir(), "other")
	gitT(t, t.TempDir(), "clone", "--quiet", "--branch", "main", origin, other)
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), f.job("1", "", "origin")) }()
	mark := f.script + ".mark-restarted"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second session never started\n%s", f.log)
		}
	}
	// The restart's commit is on origin already; a concurrent pusher adds one.
	restart := remoteTip(t, origin, testBranch("1"))
	if restart == "" {
		t.Fatalf("the restart's commit was not pushed\n%s", f.log)
	}
	gitT(t, other, "fetch", "--quiet", "origin", testBranch("1"))
	gitT(t, other, "checkout", "--quiet", "-b", "x", "FETCH_HEAD")
	if err := os.WriteFile(filepath.Join(other, "other.txt"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, other, "add", "other.txt")
	gitT(t, other, "commit", "--quiet", "-m", "a concurrent push")
	gitT(t, other, "push", "--quiet", "origin", "HEAD:refs/heads/"+testBranch("1"))
	theirs := head(t, other)
	if err := os.WriteFile(f.script+".mark-pushed", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	tip := remoteTip(t, origin, testBranch("1"))
	if tip != head(t, f.root) {
		t.Fatalf("origin's branch at %s, local HEAD %s\n%s", tip, head(t, f.root), f.log)
	}
	// Never forced: both the restart and the concurrent commit are in it.
	for _, c := range []string{restart, theirs} {
		gitT(t, origin, "merge-base", "--is-ancestor", c, tip)
	}
	files := strings.Join(f.tracked(), " ")
	for _, want := range []string{"a.txt", "b.txt", "other.txt"} {
		if !strings.Contains(files, want) {
			t.Errorf("%s missing from the pushed result: %s", want, files)
		}
	}
	if !strings.Contains(f.log.String(), "push rejected") {
		t.Errorf("no rejected push logged:\n%s", f.log)
	}
}

// A run killed after its commit and before its push: the rerun pushes first,
// before any session.
func TestRerunPushesFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}}, phaseSpec{id: "1"})
	origin := f.withOrigin()
	// The commit is made and the push never happens (as if killed between).
	if err := Run(context.Background(), f.job("1", "", "")); err != nil {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	if got := remoteTip(t, origin, testBranch("1")); got != "" {
		t.Fatalf("pushed without --push: %s", got)
	}
	if err := Run(context.Background(), f.job("1", "", "origin")); err != nil {
		t.Fatalf("rerun: %v\n%s", err, f.log)
	}
	if got, want := remoteTip(t, origin, testBranch("1")), head(t, f.root); got != want {
		t.Errorf("origin's branch at %q, want %s\n%s", got, want, f.log)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 2)); err == nil {
		t.Error("the rerun started a session")
	}
	if !strings.Contains(f.log.String(), "pushing first") {
		t.Errorf("no push-first logged:\n%s", f.log)
	}
}

// A push that keeps failing leaves the commit in the local branch and
// fails the run, saying so.
func TestPushFailureKeepsCommit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}}, phaseSpec{id: "1"})
	origin := f.withOrigin()
	// A remote hook refusing every push: not a rejection a merge fixes.
	hook := filepath.Join(origin, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho no pushes today >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), f.job("1", "", "origin"))
	if !errors.Is(err, ErrPush) || testExitCode(err) != 1 {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	if ev := gitT(t, f.root, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)"); ev != "completed" {
		t.Errorf("local HEAD's event %q, want the completed commit", ev)
	}
	if !strings.Contains(f.log.String(), "push failed") {
		t.Errorf("no push failure logged:\n%s", f.log)
	}
}

// A usage limit another job recorded on the remote holds this job back:
// beyond usage_limit_wait it ends with the usage limit's error before any
// session, naming the reset.
func TestAccountHoldFromRemote(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "done", "result"}}, "2": {{"write b.txt", "done", "result"}}},
		phaseSpec{id: "1"}, phaseSpec{id: "2"})
	origin := f.withOrigin()
	other := filepath.Join(t.TempDir(), "other")
	gitT(t, t.TempDir(), "clone", "--quiet", "--branch", "main", origin, other)
	resets := time.Now().Add(7 * time.Hour).UTC().Truncate(time.Second)
	gitT(t, other, "commit", "--quiet", "--allow-empty", "-m", "debussy: phase 2 — checkpoint at the 5-hour limit\n\n"+
		"Debussy-Plan: plan/MASTER_PLAN.md\nDebussy-Phase: 2\nDebussy-Event: retry\nDebussy-Session: 1\n"+
		"Debussy-Usage-Limit: five_hour; resets="+resets.Format(time.RFC3339))
	gitT(t, other, "push", "--quiet", "origin", "HEAD:refs/heads/"+testBranch("2"))

	err := Run(context.Background(), f.job("1", "", "origin"))
	var ule *UsageLimitError
	if !errors.As(err, &ule) || !ule.Resets.Equal(resets) || ule.Limit != "five_hour" {
		t.Fatalf("run under another job's limit: %v\n%s", err, f.log)
	}
	if _, err := os.Stat(promptPath(f.script, "1", 1)); err == nil {
		t.Error("a session started before the reset")
	}
	if !strings.Contains(f.log.String(), "met by phase 2") {
		t.Errorf("the hold is not explained:\n%s", f.log)
	}
}

// Ctrl-C: the interrupt's commit is still pushed (within pushGrace), so a
// job cancelled in CI leaves its work on the remote.
func TestPushAfterInterrupt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{"1": {{"write a.txt", "marktool started", "block"}}}, phaseSpec{id: "1"})
	origin := f.withOrigin()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, f.job("1", "", "origin")) }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(f.script + ".mark-started"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never started\n%s", f.log)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("run: %v\n%s", err, f.log)
	}
	tip := remoteTip(t, origin, testBranch("1"))
	if tip == "" || tip != head(t, f.root) {
		t.Fatalf("origin's branch at %q, want HEAD %s\n%s", tip, head(t, f.root), f.log)
	}
	if ev := gitT(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); ev != "interrupted" {
		t.Errorf("pushed event %q, want interrupted", ev)
	}
}

// A dependency stopped at a usage limit is named as such: its job reruns
// after the reset.
func TestBaseDepsHeldDependency(t *testing.T) {
	t.Parallel()
	f := newFixture(t, script{}, phaseSpec{id: "1"}, phaseSpec{id: "2", deps: []string{"1"}})
	origin := f.withOrigin()
	other := filepath.Join(t.TempDir(), "other")
	gitT(t, t.TempDir(), "clone", "--quiet", "--branch", "main", origin, other)
	resets := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	gitT(t, other, "commit", "--quiet", "--allow-empty", "-m", "debussy: phase 1 — checkpoint at the 5-hour limit\n\n"+
		"Debussy-Plan: plan/MASTER_PLAN.md\nDebussy-Phase: 1\nDebussy-Event: retry\nDebussy-Session: 1\n"+
		"Debussy-Usage-Limit: five_hour; resets="+resets.Format(time.RFC3339))
	gitT(t, other, "push", "--quiet", "origin", "HEAD:refs/heads/"+testBranch("1"))
	err := Run(context.Background(), f.job("2", BaseDeps, "origin"))
	if !errors.Is(err, ErrSetup) || !strings.Contains(err.Error(), "5-hour usage limit") {
		t.Fatalf("held dependency: %v", err)
	}
}
