package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

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
	if err := os.Symlink(debussyBin, filepath.Join(dir, "debussy")); err != nil {
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
// the shell executor, each job in its own copy of the repository, against
// a bare origin: the collect job leaves origin's main with the files a
// sequential run makes.
func TestPipelineGitLabRunsThePlan(t *testing.T) {
	claudetest.OncePerSuite(t, "the GitLab child pipeline's jobs")
	glcl := needTool(t, "gitlab-ci-local")
	needTool(t, "rsync")
	want := sequentialTree(t)

	h := newHarness(t, diamondScript(), diamondPhases, "")
	origin := h.withOrigin()
	driver := h.cloneOf(origin)
	if r := driver.run("pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "-o", "child.yml"); r.Code != 0 {
		t.Fatalf("pipeline: %s", r)
	}
	// What gitlab-ci-local adds beside the repository is not the plan's.
	exclude := filepath.Join(driver.Repo, ".git", "info", "exclude")
	if err := os.WriteFile(exclude, []byte("child.yml\n.gitlab-ci-local/\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, glcl, "--file", "child.yml", "--shell-isolation", "--concurrency", "2",
		"--json-schema-validation", "--no-color", "--max-job-name-padding", "0")
	cmd.Dir = driver.Repo
	cmd.Env = append(slices.Clone(h.Env), "PATH="+binDir(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("gitlab-ci-local:\n%s", out)
	if err != nil {
		t.Fatalf("gitlab-ci-local: %v", err)
	}
	for _, job := range []string{"phase-1", "phase-2", "phase-3", "phase-4", "phase-5", "collect"} {
		if !regexpPass(out, job) {
			t.Errorf("job %s did not pass", job)
		}
	}
	checkCollected(t, origin, want)
	for _, p := range diamondPhases {
		if n := len(h.sessionsOf(phaseMatch(p.ID))); n != 1 {
			t.Errorf("phase %s ran %d sessions, want 1", p.ID, n)
		}
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

// The diamond plan through the Kubernetes Jobs debussy writes, run by a
// stand-in kubelet: each wave's Jobs are decoded strictly as batch/v1 Jobs,
// and each Job's container command runs as the pod would — in an empty
// directory (its emptyDir, where the command clones the origin), with the
// Job's environment and the Secret's keys — the Jobs of a wave side by
// side; between waves the driver collects, as examples/k8s-driver.sh does.
func TestPipelineK8sRunsThePlan(t *testing.T) {
	claudetest.OncePerSuite(t, "the Kubernetes Jobs' commands")
	want := sequentialTree(t)

	h := newHarness(t, diamondScript(), diamondPhases, "")
	origin := h.withOrigin()
	driver := h.cloneOf(origin)
	bin := binDir(t)
	// The Secret the Jobs read: the harness's key for the fake API.
	secret := map[string]string{}
	for _, kv := range h.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "ANTHROPIC_API_KEY" || k == "CLAUDE_CODE_OAUTH_TOKEN") {
			secret[k] = v
		}
	}

	var waves []string
	for wave := 1; wave <= 5; wave++ {
		claudetest.Git(t, driver.Repo, "pull", "-q", "--no-rebase", "origin", "main")
		r := driver.run("pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--repo", origin, "--ref", "main")
		if r.Code != 0 {
			t.Fatalf("wave %d: pipeline: %s", wave, r)
		}
		jobs := strictJobs(t, r.Stdout)
		if len(jobs) == 0 {
			break
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.Labels["debussy.dev/phase"])
		}
		waves = append(waves, strings.Join(ids, " "))
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := kubelet(t, j, h.Env, bin, secret); err != nil {
					t.Errorf("wave %d: Job %s: %v", wave, j.Name, err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		if r := driver.run("collect", "plan/MASTER_PLAN.md", "--from", "origin", "--push"); r.Code != 0 {
			t.Fatalf("wave %d: collect: %s", wave, r)
		}
	}
	if got, wantWaves := strings.Join(waves, " | "), "1 5 | 2 3 | 4"; got != wantWaves {
		t.Errorf("waves %q, want %q", got, wantWaves)
	}
	checkCollected(t, origin, want)
}

// strictJobs decodes a k8s pipeline's documents as batch/v1 Jobs; a field
// the Kubernetes API does not know fails the test.
func strictJobs(t *testing.T, out string) []batchv1.Job {
	t.Helper()
	var jobs []batchv1.Job
	rd := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return jobs
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil || len(obj) == 0 {
			continue // comments only
		}
		var job batchv1.Job
		if err := sigsyaml.UnmarshalStrict(doc, &job); err != nil {
			t.Fatalf("a Job that does not decode strictly: %v\n%s", err, doc)
		}
		jobs = append(jobs, job)
	}
}

// kubelet runs a Job's one container as a pod would: its command in a
// fresh directory (the emptyDir volume mounted at workingDir), with the
// container's env (secretKeyRef read from secret; an optional key that is
// missing is left out) over the test's environment, and debussy and the
// claude CLI on PATH as the image has them.
func kubelet(t *testing.T, job batchv1.Job, base []string, bin string, secret map[string]string) error {
	pod := job.Spec.Template.Spec
	if len(pod.Containers) != 1 || pod.RestartPolicy != "Never" || job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 {
		return fmt.Errorf("not one container run once: %+v", job.Spec)
	}
	c := pod.Containers[0]
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			mounted = mounted || (m.Name == v.Name && v.EmptyDir != nil && m.MountPath == c.WorkingDir)
		}
	}
	if !mounted {
		return fmt.Errorf("the working directory %s is not an emptyDir", c.WorkingDir)
	}
	env := append(slices.Clone(base), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secret[ref.Key]
			if !ok && (ref.Optional == nil || !*ref.Optional) {
				return fmt.Errorf("secret key %s missing and not optional", ref.Key)
			}
			if ok {
				env = append(env, e.Name+"="+v)
			}
		default:
			return fmt.Errorf("env %s: a source the stand-in does not know", e.Name)
		}
	}
	deadline := time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), min(deadline, 6*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Command[0], append(c.Command[1:], c.Args...)...)
	cmd.Dir = t.TempDir() // the emptyDir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("Job %s:\n%s", job.Name, out.String())
	return err
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
