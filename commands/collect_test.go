package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/remote"
)

// collectRepos is a diamond plan pushed to a bare origin, the user's clone
// (dir) and a worker clone that makes phase branches as `debussy run
// --only ID --base deps --push origin` leaves them.
type collectRepos struct {
	t                   *testing.T
	origin, dir, worker string
}

func newCollectRepos(t *testing.T) *collectRepos {
	t.Helper()
	src := diamondRepo(t)
	root := t.TempDir()
	r := &collectRepos{t: t, origin: filepath.Join(root, "origin.git"), dir: filepath.Join(root, "user"), worker: filepath.Join(root, "worker")}
	gitIn(t, root, "clone", "-q", "--bare", src, r.origin)
	gitIn(t, root, "clone", "-q", r.origin, r.dir)
	gitIn(t, root, "clone", "-q", r.origin, r.worker)
	return r
}

func phaseRef(id string) string { return "debussy/plan-master-plan/phase-" + id }

// phase pushes phase id's branch: made from origin's main, its
// dependencies' branches merged, a file written (content), and the outcome
// committed.
func (r *collectRepos) phase(id, event, file, content string, deps ...string) {
	t := r.t
	t.Helper()
	gitIn(t, r.worker, "fetch", "-q", "origin")
	gitIn(t, r.worker, "checkout", "-q", "-B", phaseRef(id), "origin/main")
	for _, d := range deps {
		gitIn(t, r.worker, "merge", "-q", "--no-edit", "origin/"+phaseRef(d))
	}
	write(t, filepath.Join(r.worker, file), content)
	gitIn(t, r.worker, "add", "-A")
	gitIn(t, r.worker, "commit", "-q", "-m", "debussy: phase "+id+" work")
	outcomeCommit(t, r.worker, id, event)
	gitIn(t, r.worker, "push", "-q", "origin", "HEAD:refs/heads/"+phaseRef(id))
}

func (r *collectRepos) collect(args ...string) (int, string) {
	r.t.Helper()
	code, stdout, stderr := invoke(r.t, r.dir, nil, append([]string{"collect", "plan/MASTER_PLAN.md", "--from", "origin"}, args...)...)
	return code, stdout + stderr
}

func (r *collectRepos) originHas(branch, file string) bool {
	_, err := gitOutErr(r.origin, "cat-file", "-e", branch+":"+file)
	return err == nil
}

func gitOutErr(dir string, args ...string) (string, error) {
	return gitOut(context.Background(), dir, args...)
}

func TestCollect(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	r.phase("2", "completed", "two.txt", "2\n", "1")
	r.phase("3", "completed", "three.txt", "3\n", "1")
	r.phase("4", "completed", "four.txt", "4\n", "2", "3")

	code, out := r.collect("--push")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"collect plan/MASTER_PLAN.md from origin into main", "1  Step 1  merged", "4  Step 4  merged",
		"5  Step 5  not run", "pushed main to origin"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"one.txt", "two.txt", "three.txt", "four.txt"} {
		if _, err := os.Stat(filepath.Join(r.dir, f)); err != nil {
			t.Errorf("%s not merged: %v", f, err)
		}
		if !r.originHas("main", f) {
			t.Errorf("%s not pushed to origin's main", f)
		}
	}
	// The ledger of main now says 1–4 completed: only 5 is ready.
	if code, stdout, _ := invoke(t, r.dir, nil, "matrix", "plan/MASTER_PLAN.md"); code != 0 || !strings.Contains(stdout, `[{"phase":"5"`) {
		t.Errorf("matrix after collect: %s", stdout)
	}

	// Again: nothing new, every branch already merged.
	code, out = r.collect()
	if code != 0 || strings.Count(out, "already merged") != 4 {
		t.Errorf("exit %d, want 4 already merged:\n%s", code, out)
	}
	for _, b := range []string{"1", "2", "3", "4"} {
		if _, err := gitOutErr(r.origin, "rev-parse", "--verify", "refs/heads/"+phaseRef(b)); err != nil {
			t.Errorf("branch of phase %s deleted", b)
		}
	}
}

func TestCollectFailedAndBlocked(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	r.phase("2", "failed", "two.txt", "2\n", "1")
	r.phase("3", "completed", "three.txt", "3\n", "1")
	r.phase("5", "blocked", "five.txt", "5\n")
	code, out := r.collect("--push")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"2  Step 2  failed   gate ok failed; branch origin/" + phaseRef("2") + " kept", "5  Step 5  blocked  gate ok failed",
		"3  Step 3  merged", "4  Step 4  not run", "pushed main to origin", "phases 2, 5 were not completed (failed or blocked); the completed phases are merged"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !r.originHas("main", "three.txt") || r.originHas("main", "two.txt") {
		t.Error("origin's main should hold phase 3's work and not phase 2's")
	}
}

func TestCollectConflict(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	r.phase("2", "completed", "shared.txt", "from 2\n", "1")
	r.phase("3", "completed", "three.txt", "3\n", "1")
	r.phase("5", "completed", "shared.txt", "from 5\n")
	before := gitIn(t, r.origin, "rev-parse", "main")
	code, out := r.collect("--push")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"5  Step 5  conflict  both sides changed shared.txt", "merging origin/" + phaseRef("5") + " into main: both sides changed shared.txt",
		"nothing was pushed", "2  Step 2  merged"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after := gitIn(t, r.origin, "rev-parse", "main"); after != before {
		t.Error("a conflicting collect pushed")
	}
	if st := gitIn(t, r.dir, "status", "--porcelain"); st != "" {
		t.Errorf("the conflicting merge was not aborted: %s", st)
	}
	if b, _ := os.ReadFile(filepath.Join(r.dir, "shared.txt")); string(b) != "from 2\n" {
		t.Errorf("shared.txt = %q, want phase 2's", b)
	}
}

// A push that another pusher beat is fetched, merged and pushed again.
func TestCollectPushRace(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	// Someone else pushes to main after the user's clone was made.
	gitIn(t, r.worker, "checkout", "-q", "-B", "main", "origin/main")
	write(t, filepath.Join(r.worker, "other.txt"), "x\n")
	gitIn(t, r.worker, "add", "-A")
	gitIn(t, r.worker, "commit", "-q", "-m", "other work")
	gitIn(t, r.worker, "push", "-q", "origin", "main")

	code, out := r.collect("--push")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !r.originHas("main", "one.txt") || !r.originHas("main", "other.txt") {
		t.Errorf("origin's main lacks a side of the race:\n%s", out)
	}
}

// --into makes the branch at HEAD when it is missing: a CI checkout's HEAD
// is detached.
func TestCollectInto(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	gitIn(t, r.dir, "checkout", "-q", "--detach")
	code, out := r.collect()
	if code != 2 || !strings.Contains(out, "HEAD is detached") {
		t.Errorf("detached without --into: exit %d:\n%s", code, out)
	}
	code, out = r.collect("--into", "results", "--push")
	if code != 0 || !strings.Contains(out, "into results") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if cur := gitIn(t, r.dir, "symbolic-ref", "--short", "HEAD"); cur != "results" {
		t.Errorf("checked out %s, want results", cur)
	}
	if !r.originHas("results", "one.txt") {
		t.Error("results not pushed")
	}
}

func TestCollectUsage(t *testing.T) {
	r := newCollectRepos(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		output string
	}{
		{"no --from", []string{"collect", "plan/MASTER_PLAN.md"}, 2, "collect needs --from REMOTE"},
		{"no such remote", []string{"collect", "plan/MASTER_PLAN.md", "--from", "upstream"}, 2, `no remote named "upstream"`},
		{"bad --into", []string{"collect", "plan/MASTER_PLAN.md", "--from", "origin", "--into", "a..b"}, 2, "not a valid branch name"},
		{"help", []string{"collect", "--help"}, 0, "Exit codes: 0 every completed phase is merged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := invoke(t, r.dir, nil, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.output) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.output, stdout, stderr)
			}
		})
	}
}

// --into a branch HEAD descends from (a CI runner's stale local copy) moves
// it up to HEAD first: the result holds what the job checked out.
func TestCollectIntoStaleBranch(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	gitIn(t, r.dir, "checkout", "-q", "-b", "stale")
	write(t, filepath.Join(r.dir, "newer.txt"), "n\n")
	gitIn(t, r.dir, "add", "-A")
	gitIn(t, r.dir, "commit", "-q", "-m", "newer")
	gitIn(t, r.dir, "checkout", "-q", "--detach")
	gitIn(t, r.dir, "branch", "-q", "-f", "stale", "HEAD~1")
	if code, out := r.collect("--into", "stale"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, f := range []string{"one.txt", "newer.txt"} {
		if _, err := os.Stat(filepath.Join(r.dir, f)); err != nil {
			t.Errorf("%s missing after collect --into stale: %v", f, err)
		}
	}
}

// A phase stopped at a usage limit (exit 75) has no outcome yet: collect
// says which limit stopped it and when it resets, and does not fail.
func TestCollectUsageLimit(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("1", "completed", "one.txt", "1\n")
	gitIn(t, r.worker, "checkout", "-q", "-B", phaseRef("5"), "origin/main")
	m := gitcommit.Message{Subject: "debussy: phase 5 — checkpoint at the 5-hour limit", Run: "r1", Plan: "plan/MASTER_PLAN.md",
		Phase: "5", Event: "retry", UsageLimit: remote.LimitTrailer("five_hour", time.Date(2026, 11, 27, 19, 0, 0, 0, time.UTC))}
	gitIn(t, r.worker, "commit", "-q", "--allow-empty", "-m", m.String())
	gitIn(t, r.worker, "push", "-q", "origin", "HEAD:refs/heads/"+phaseRef("5"))
	code, out := r.collect()
	if code != 0 || !strings.Contains(out, "5  Step 5  unfinished  stopped at the account's 5-hour usage limit, which resets at 2026-11-27T19:00:00Z; branch origin/"+phaseRef("5")+" kept") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// A phase completed in the target (rerun and merged) is completed, whatever
// a branch left from an earlier, failed try says.
func TestCollectCompletedHereBeatsAFailedBranch(t *testing.T) {
	r := newCollectRepos(t)
	r.phase("5", "failed", "five.txt", "5\n")
	outcomeCommit(t, r.dir, "5", "completed")
	code, out := r.collect()
	if code != 0 || !strings.Contains(out, "5  Step 5  completed") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
