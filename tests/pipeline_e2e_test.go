package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The diamond plan the engine tests run: 1 → 2, 3 → 4 (4 needs 2 and 3),
// and 5 on its own. Each phase's file is made from its dependencies', so a
// phase that starts without them (no --base deps) fails its gate.
var diamondPhases = []phaseSpec{
	{ID: "1", Title: "Base", Gates: []string{"one: `test -f one.txt`"}},
	{ID: "2", Title: "Left", Deps: []string{"1"}, Gates: []string{"two: `grep -q one two.txt`"}},
	{ID: "3", Title: "Right", Deps: []string{"1"}, Gates: []string{"three: `grep -q one three.txt`"}},
	{ID: "4", Title: "Join", Deps: []string{"2", "3"}, Gates: []string{"four: `grep -q left four.txt && grep -q right four.txt`"}},
	{ID: "5", Title: "Aside", Gates: []string{"five: `test -f five.txt`"}},
}

func diamondScript() fakeapi.Script {
	return fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("one.txt", "one\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("{ cat one.txt; echo left; } > two.txt && debussy done --phase 2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
		{Name: "p3", Match: phaseMatch("3"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("{ cat one.txt; echo right; } > three.txt && debussy done --phase 3")),
			turn(21000, fakeapi.Text("Phase 3 done.")),
		}},
		{Name: "p4", Match: phaseMatch("4"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("cat two.txt three.txt > four.txt && debussy done --phase 4")),
			turn(21000, fakeapi.Text("Phase 4 done.")),
		}},
		{Name: "p5", Match: phaseMatch("5"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("five.txt", "five\n")),
			turn(21000, done("5")),
			turn(22000, fakeapi.Text("Phase 5 done.")),
		}},
	}}
}

// sequentialTree runs the diamond plan with one `debussy run` on its own
// fake API and returns the tree it ends with: what a distributed run must
// collect.
func sequentialTree(t *testing.T) string {
	t.Helper()
	h := newHarness(t, diamondScript(), diamondPhases, "")
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("the sequential run: %s", r)
	}
	return h.git("rev-parse", "HEAD^{tree}")
}

// binDir is a directory holding debussy, for PATH.
func binDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(raceBinary(t), filepath.Join(dir, "debussy")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// needTool is exec.LookPath that skips the test without the tool, except
// in CI, where .ci/run installs it and a missing one fails.
func needTool(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
		}
		t.Skipf("%s is not installed: %v", name, err)
	}
	return bin
}

// checkCollected compares origin's main with the sequential run's tree and
// checks that every phase's branch ends completed.
func checkCollected(t *testing.T, origin, want string) {
	t.Helper()
	if got := claudetest.Git(t, origin, "rev-parse", "main^{tree}"); got != want {
		t.Errorf("origin's main holds tree %s, the sequential run %s:\n%s", got, want,
			claudetest.Git(t, origin, "ls-tree", "-r", "main"))
	}
	for _, p := range diamondPhases {
		tip := originTip(origin, e2ePlanBranch(p.ID))
		if tip == "" {
			t.Errorf("phase %s has no branch on origin", p.ID)
			continue
		}
		if ev := claudetest.Git(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); ev != "completed" {
			t.Errorf("phase %s's branch ends with event %q", p.ID, ev)
		}
	}
}

// The diamond plan through the GitLab child pipeline debussy writes, run
// by gitlab-ci-local (GitLab's schema, needs:, stages, when: always) with
// the shell executor against a bare origin, twice: each job in its own copy
// of the repository (--shell-isolation), and every job in the one project
// directory with no bound on concurrency, as a shell runner with a shared
// builds dir runs them (phases 1 and 5 at once). Either way each job works
// in its own clone, and the collect job leaves origin's main with the files
// a sequential run makes.
func TestPipelineGitLabRunsThePlan(t *testing.T) {
	claudetest.OncePerSuite(t, "the GitLab child pipeline's jobs")
	glcl := needTool(t, "gitlab-ci-local")
	needTool(t, "rsync")
	want := sequentialTree(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"shell-isolation", []string{"--shell-isolation", "--concurrency", "2"}},
		{"shared-checkout", nil},
	} {
		t.Run(tc.name, func(t *testing.T) { runGitLabChild(t, glcl, want, tc.args...) })
	}
}

// runGitLabChild writes the child pipeline in a clone of a fresh origin,
// runs it with gitlab-ci-local and its args, and checks what it collected.
func runGitLabChild(t *testing.T, glcl, want string, args ...string) {
	h := newHarness(t, diamondScript(), diamondPhases, "")
	origin := h.withOrigin()
	driver := h.cloneOf(origin)
	// A dev build must name the jobs' image.
	if r := driver.run("pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1", "-o", "child.yml"); r.Code != 0 {
		t.Fatalf("pipeline: %s", r)
	}
	// The shell executor runs the jobs here: no daemon pulls an image
	// (TestImageRunsGeneratedJobs runs them in debussy's), and gitlab-ci-local
	// gives a job that names one a /builds project directory even with
	// --force-shell-executor. So the image goes; the rest runs as written.
	child := filepath.Join(driver.Repo, "child.yml")
	withImage := readFile(t, child)
	withoutImage := regexp.MustCompile(`(?m)^  image:\n(?:    .*\n)+`).ReplaceAllString(withImage, "")
	if withoutImage == withImage {
		t.Fatalf("child.yml names no image:\n%s", withImage)
	}
	if err := os.WriteFile(child, []byte(withoutImage), 0o644); err != nil {
		t.Fatal(err)
	}
	// What gitlab-ci-local adds beside the repository is not the plan's.
	exclude := filepath.Join(driver.Repo, ".git", "info", "exclude")
	if err := os.WriteFile(exclude, []byte("child.yml\n.gitlab-ci-local/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := driver.git("rev-parse", "HEAD")

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, glcl, append([]string{"--file", "child.yml",
		"--json-schema-validation", "--no-color", "--max-job-name-padding", "0"}, args...)...)
	cmd.Dir = driver.Repo
	// The jobs' clones go to TMPDIR: the test's, removed with it.
	tmp := t.TempDir()
	cmd.Env = append(slices.Clone(h.Env), "PATH="+binDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	t.Logf("gitlab-ci-local %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("gitlab-ci-local: %v", err)
	}
	for _, job := range []string{"phase-1", "phase-2", "phase-3", "phase-4", "phase-5", "collect"} {
		if !regexpPass(out, job) {
			t.Errorf("job %s did not pass", job)
		}
	}
	checkCollected(t, origin, want)
	// Every job passed: after_script removed each one's clone.
	if left, _ := filepath.Glob(filepath.Join(tmp, "debussy-job-*")); len(left) > 0 {
		t.Errorf("jobs that passed left their clones: %v", left)
	}
	for _, p := range diamondPhases {
		if n := len(h.sessionsOf(phaseMatch(p.ID))); n != 1 {
			t.Errorf("phase %s ran %d sessions, want 1", p.ID, n)
		}
	}
	// The project directory is the jobs' source, never their working tree.
	if got := driver.git("rev-parse", "HEAD"); got != head {
		t.Errorf("the project directory moved from %s to %s", head, got)
	}
	if st := driver.git("status", "--porcelain"); st != "" {
		t.Errorf("the project directory's tree changed:\n%s", st)
	}
	if br := driver.git("branch", "--list", "debussy/*"); br != "" {
		t.Errorf("a phase ran in the project directory: its branches\n%s", br)
	}
}

// regexpPass reports whether gitlab-ci-local's summary says job passed.
func regexpPass(out []byte, job string) bool {
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "PASS" && f[1] == job {
			return true
		}
	}
	return false
}

// GitLab checks a job's commit out detached: a phase job pushes its branch
// from there, and collect --into makes the target branch at HEAD and
// pushes it.
func TestPipelineDetachedCheckout(t *testing.T) {
	claudetest.OncePerSuite(t, "run --push and collect --into on a detached HEAD")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("one.txt", "one\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Base", Gates: []string{"one: `test -f one.txt`"}}}, "")
	origin := h.withOrigin()
	job, collector := h.cloneOf(origin), h.cloneOf(origin)
	job.git("checkout", "-q", "--detach")
	if r := job.run("run", "plan/MASTER_PLAN.md", "--only", "1", "--base", "deps", "--push", "origin"); r.Code != 0 {
		t.Fatalf("the phase job: %s", r)
	}
	if tip := originTip(origin, e2ePlanBranch("1")); tip == "" || tip != job.git("rev-parse", "HEAD") {
		t.Fatalf("phase 1's branch on origin at %q, want the job's HEAD", tip)
	}
	collector.git("checkout", "-q", "--detach")
	r := collector.run("collect", "plan/MASTER_PLAN.md", "--from", "origin", "--into", "main", "--push")
	if r.Code != 0 || !strings.Contains(r.Stdout, "1  Base  merged") {
		t.Fatalf("collect: %s", r)
	}
	if files := claudetest.Git(t, origin, "ls-tree", "--name-only", "main"); !strings.Contains(files, "one.txt") {
		t.Errorf("origin's main holds %q", files)
	}
}

// examples/k8s-driver.sh as written, with kubectl a stand-in (fakekube:
// the Jobs decoded strictly, each Job's command run as its pod would, in
// an emptyDir): wave after wave until nothing is ready, origin's main ends
// with the tree a sequential run makes.
func TestPipelineK8sDriverRunsThePlan(t *testing.T) {
	claudetest.OncePerSuite(t, "the Kubernetes driver loop and its Jobs")
	want := sequentialTree(t)

	h := newHarness(t, diamondScript(), diamondPhases, "")
	origin := h.withOrigin()
	driver := h.cloneOf(origin)
	bin := binDir(t)
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kubectl"), "./fakekube")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fakekube: %v\n%s", err, out)
	}
	state := t.TempDir()
	script, err := filepath.Abs(filepath.Join("..", "examples", "k8s-driver.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, "plan/MASTER_PLAN.md", "--cpu", "250m", "--image", "example/debussy:1")
	cmd.Dir = driver.Repo
	cmd.Env = append(slices.Clone(h.Env), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKEKUBE_STATE="+state, "DEBUSSY_POLL_SECONDS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("k8s-driver.sh:\n%s", out)
	if err != nil {
		for _, f := range must(filepath.Glob(filepath.Join(state, "*.log"))) {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%s", filepath.Base(f), b)
		}
		t.Fatalf("k8s-driver.sh: %v", err)
	}
	applied, _ := os.ReadFile(filepath.Join(state, "applied.log"))
	if got := strings.TrimSpace(string(applied)); got != "1 5\n2 3\n4" {
		t.Errorf("waves of Jobs started:\n%s\nwant 1 5, 2 3, 4", got)
	}
	if !strings.Contains(string(out), "nothing is ready") {
		t.Errorf("the driver did not end with nothing ready")
	}
	checkCollected(t, origin, want)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
