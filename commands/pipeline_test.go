package commands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/secrets"
)

// diamondDeps is the plan of the pipeline tests: a diamond (1 → 2, 3 → 4)
// and an independent phase 5.
var diamondDeps = map[string][]string{"1": nil, "2": {"1"}, "3": {"1"}, "4": {"2", "3"}, "5": nil}

// diamondRepo makes a repository holding the diamond plan under plan/,
// with fixed commit dates so that its hashes (and the goldens naming them)
// are the same on every run.
func diamondRepo(t *testing.T) string {
	t.Helper()
	t.Setenv("GIT_AUTHOR_DATE", "2026-11-27T12:00:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-11-27T12:00:00Z")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writePlan(t, dir, diamondDeps)
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "plan")
	return dir
}

// writePlan writes plan/MASTER_PLAN.md and a phase file per phase of deps
// (ids 1…n), each phase's task writing phase-<id>.txt.
func writePlan(t *testing.T, dir string, deps map[string][]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "plan"), 0o755); err != nil {
		t.Fatal(err)
	}
	master := "# Diamond\n\n## Phases\n\n| Phase | Title | Status |\n|---|---|---|\n"
	for i := 1; i <= len(deps); i++ {
		id := fmt.Sprint(i)
		master += fmt.Sprintf("| %s | [Step %s](phase-%s.md) | Pending |\n", id, id, id)
		dep := "N/A"
		if len(deps[id]) > 0 {
			var links []string
			for _, d := range deps[id] {
				links = append(links, fmt.Sprintf("[Phase %s](phase-%s.md)", d, d))
			}
			dep = strings.Join(links, ", ")
		}
		write(t, filepath.Join(dir, "plan", "phase-"+id+".md"), fmt.Sprintf(
			"# Phase %s: Step %s\n\n**Depends On:** %s\n\n## Tasks\n- [ ] write phase-%s.txt\n\n## Gates\n- ok: `true`\n", id, id, dep, id))
	}
	write(t, filepath.Join(dir, "plan", "MASTER_PLAN.md"), master)
}

func TestPipelineGolden(t *testing.T) {
	k8sFlags := []string{"--repo", "https://git.example.com/team/app.git", "--ref", "main", "--image", "example/debussy:1"}
	for _, state := range []struct {
		name  string
		ended []string // completed in git
	}{
		{"fresh", nil},
		{"phase-1-completed", []string{"1"}},
	} {
		for _, format := range []string{"github", "gitlab", "k8s"} {
			t.Run(state.name+"/"+format, func(t *testing.T) {
				dir := diamondRepo(t)
				for _, id := range state.ended {
					outcomeCommit(t, dir, id, "completed")
				}
				args := []string{"pipeline", "plan/MASTER_PLAN.md", "--format", format}
				switch format {
				case "k8s":
					args = append(args, k8sFlags...)
				case "gitlab":
					args = append(args, "--image", "example/debussy:1")
				}
				code, stdout, stderr := invoke(t, dir, nil, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				ext := map[string]string{"github": ".json", "gitlab": ".yml", "k8s": ".yaml"}[format]
				golden.Check(t, filepath.Join("testdata", "pipeline-"+state.name+"-"+format+ext+".golden"), []byte(stdout))
				if format == "k8s" {
					decodeJobs(t, stdout)
				}
			})
		}
	}
}

// decodeJobs decodes every document of a k8s pipeline as a batch/v1 Job,
// strictly: a field the Kubernetes API does not know is an error, as the
// API server's strict field validation makes it.
func decodeJobs(t *testing.T, out string) []batchv1.Job {
	t.Helper()
	var jobs []batchv1.Job
	rd := yaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var job batchv1.Job
		if err := sigsyaml.UnmarshalStrict(doc, &job); err != nil {
			t.Fatalf("decode a Job strictly: %v\n%s", err, doc)
		}
		jobs = append(jobs, job)
	}
	return jobs
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l...)
		}
	}
	return out
}

func TestPipelineK8sJobs(t *testing.T) {
	dir := diamondRepo(t)
	outcomeCommit(t, dir, "1", "completed")
	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "k8s",
		"--repo", "/srv/origin.git", "--ref", "main", "--namespace", "ci", "--secret", "claude", "--image", "example/debussy:1",
		"--deadline", "2h", "--ttl", "1h", "--cpu", "500m", "--memory", "1Gi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	jobs := decodeJobs(t, stdout)
	var phases []string
	for _, j := range jobs {
		phases = append(phases, j.Labels["debussy.dev/phase"])
		s := j.Spec
		if s.BackoffLimit == nil || *s.BackoffLimit != 0 || s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 7200 ||
			s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished != 3600 || j.Namespace != "ci" {
			t.Errorf("job %s spec %+v", j.Name, s)
		}
		pod := s.Template.Spec
		c := pod.Containers[0]
		if pod.RestartPolicy != "Never" || len(pod.Volumes) != 1 || pod.Volumes[0].EmptyDir == nil ||
			c.Image != "example/debussy:1" || c.VolumeMounts[0].MountPath != c.WorkingDir {
			t.Errorf("job %s pod %+v", j.Name, pod)
		}
		if c.Resources.Requests.Cpu().String() != "500m" || c.Resources.Limits.Memory().String() != "1Gi" {
			t.Errorf("job %s resources %+v", j.Name, c.Resources)
		}
		// As the image's user, never root; the emptyDir is its group's.
		if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
			sc.RunAsUser == nil || *sc.RunAsUser != imageUID || sc.RunAsGroup == nil || *sc.RunAsGroup != imageGID ||
			sc.FSGroup == nil || *sc.FSGroup != imageGID {
			t.Errorf("job %s pod securityContext %+v", j.Name, pod.SecurityContext)
		}
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("job %s container securityContext %+v", j.Name, c.SecurityContext)
		}
		secrets := 0
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "claude" &&
				*e.ValueFrom.SecretKeyRef.Optional && e.Name == e.ValueFrom.SecretKeyRef.Key {
				secrets++
			}
		}
		if secrets != 3 {
			t.Errorf("job %s: %d env vars from the Secret, want 3 (CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_API_KEY, DEBUSSY_PUSH_TOKEN)", j.Name, secrets)
		}
	}
	if got := strings.Join(phases, " "); got != "2 3 5" {
		t.Errorf("Jobs for phases %q, want the ready ones, 2 3 5", got)
	}
}

func TestPipelineUsage(t *testing.T) {
	dir := diamondRepo(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		output string
	}{
		{"no format", []string{"pipeline", "plan/MASTER_PLAN.md"}, 2, "pipeline needs --format github, gitlab or k8s"},
		{"unknown format", []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "jenkins"}, 2, "--format jenkins: the formats are github, gitlab and k8s"},
		{"k8s without a remote", []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--image", "x"}, 2, "name the clone URL with --repo"},
		{"gitlab from a dev build without an image", []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab"}, 2, "pass --image IMAGE"},
		{"k8s from a dev build without an image", []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--repo", "/srv/o.git"}, 2, "pass --image IMAGE"},
		{"job timeout too short", []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "x", "--job-timeout", "30s"}, 2, "--job-timeout must be at least 1m"},
		{"missing plan", []string{"pipeline", "nope.md", "--format", "github"}, 2, "nope.md"},
		{"help", []string{"pipeline", "--help"}, 0, "--base deps --push origin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := invoke(t, dir, nil, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.output) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tt.code, tt.output, stdout, stderr)
			}
		})
	}
}

// -o writes the file a CI artifact is made of.
func TestPipelineOutputFile(t *testing.T) {
	dir := diamondRepo(t)
	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1", "-o", "child.yml")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.yml"))
	if err != nil || !bytes.Contains(b, []byte("phase-4:")) {
		t.Fatalf("child.yml: %v\n%s", err, b)
	}
}

// The child pipeline's before_script, run in bash as GitLab's shell runs
// it: the job ends up in a fresh clone of its checkout at CI_COMMIT_SHA
// (not wherever the shared checkout's HEAD has moved), with the
// checkout's remotes (the token's URL for origin) and a git identity,
// and the shared checkout's config is not written.
func TestPipelineGitLabBeforeScriptClones(t *testing.T) {
	dir := diamondRepo(t)
	gitIn(t, dir, "remote", "add", "origin", "/srv/git/app.git")
	gitIn(t, dir, "remote", "add", "upstream", "/srv/git/upstream.git")
	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1", "--remote", "upstream")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var child struct {
		Default struct {
			BeforeScript []string `json:"before_script"`
			AfterScript  []string `json:"after_script"`
		} `json:"default"`
	}
	if err := sigsyaml.Unmarshal([]byte(stdout), &child); err != nil {
		t.Fatal(err)
	}
	sha := gitIn(t, dir, "rev-parse", "HEAD")
	// Another job of a shared checkout moved on meanwhile.
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "later")
	gitIn(t, dir, "checkout", "-q", "--detach")
	config, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}

	script := "set -eo pipefail\n" + strings.Join(child.Default.BeforeScript, "\n") +
		"\npwd; git rev-parse HEAD; git remote get-url origin; git remote get-url upstream; git config user.name; git status --porcelain\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TMPDIR="+tmp, "CI_PROJECT_DIR="+dir, "CI_COMMIT_SHA="+sha, "CI_JOB_ID=41",
		"DEBUSSY_PUSH_TOKEN=glpat-x", "CI_SERVER_PROTOCOL=https", "CI_SERVER_URL=https://gitlab.example.com",
		"CI_PROJECT_PATH=team/app", "GITLAB_USER_NAME=Job", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("before_script: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != 5 || filepath.Dir(got[0]) != tmp || got[1] != sha ||
		got[2] != "https://oauth2:glpat-x@gitlab.example.com/team/app.git" || got[3] != "/srv/git/upstream.git" || got[4] != "Job" {
		t.Errorf("before_script left the job in:\n%s\nwant a directory in %s at %s, origin with the token, upstream /srv/git/upstream.git, user Job, a clean tree", out, tmp, sha)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); !bytes.Equal(after, config) {
		t.Errorf("the shared checkout's config changed:\n%s", after)
	}

	// after_script, in a shell of its own in the project directory as
	// GitLab runs it: a failed job's clone stays and is named, a passed
	// job's goes, and another job's clone is not touched.
	other := filepath.Join(tmp, "debussy-job-410.abcdef")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	after := func(status string) string {
		cmd := exec.Command("bash", "-c", "set -eo pipefail\n"+strings.Join(child.Default.AfterScript, "\n"))
		cmd.Dir = dir
		cmd.Env = append(slices.Clone(env), "CI_JOB_STATUS="+status)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("after_script (%s): %v\n%s", status, err, out)
		}
		return string(out)
	}
	if out := after("failed"); !strings.Contains(out, "kept in "+got[0]) {
		t.Errorf("after a failed job: %q, want it to name %s", out, got[0])
	}
	if _, err := os.Stat(got[0]); err != nil {
		t.Errorf("a failed job's clone is gone: %v", err)
	}
	after("success")
	if _, err := os.Stat(got[0]); !os.IsNotExist(err) {
		t.Errorf("a passed job's clone %s is still there (%v)", got[0], err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another job's clone went too: %v", err)
	}
}

// The generated child pipeline passes GitLab's schema as gitlab-ci-local
// checks it, and its jobs and needs are what the plan says.
func TestPipelineGitLabSchema(t *testing.T) {
	bin := lookTool(t, "gitlab-ci-local")
	dir := diamondRepo(t)
	outcomeCommit(t, dir, "1", "completed")
	code, _, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1", "-o", "child.yml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cmd := exec.Command(bin, "--file", "child.yml", "--list-json", "--json-schema-validation")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gitlab-ci-local: %v\n%s", err, out)
	}
	var jobs []struct {
		Name, Stage, When string
		Needs             []struct{ Job string }
	}
	if err := json.Unmarshal(out[bytes.IndexByte(out, '['):], &jobs); err != nil {
		t.Fatalf("gitlab-ci-local --list-json: %v\n%s", err, out)
	}
	var got []string
	for _, j := range jobs {
		line := j.Name + " " + j.Stage + " " + j.When
		for _, n := range j.Needs {
			line += " " + n.Job
		}
		got = append(got, line)
	}
	want := []string{"phase-2 phases on_success", "phase-3 phases on_success", "phase-4 phases on_success phase-2 phase-3",
		"phase-5 phases on_success", "collect collect always"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("jobs per gitlab-ci-local:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// lookTool finds a tool a test needs; without it the test is skipped,
// except in CI, where a missing tool fails it (.ci/run installs it).
func lookTool(t *testing.T, name string) string {
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

// examples/gitlab-ci.yml, the parent pipeline people copy, passes GitLab's
// schema, and the command it generates the child with is one pipeline takes.
func TestGitLabExampleSchema(t *testing.T) {
	bin := lookTool(t, "gitlab-ci-local")
	dir := diamondRepo(t)
	example, err := os.ReadFile(filepath.Join("..", "examples", "gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".gitlab-ci.yml"), string(example))
	cmd := exec.Command(bin, "--list-json", "--json-schema-validation")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte(`"name": "debussy:run"`)) {
		t.Fatalf("gitlab-ci-local: %v\n%s", err, out)
	}
	const generate = `debussy pipeline "$PLAN" --format gitlab --image "$DEBUSSY_IMAGE" -o child.yml`
	if !bytes.Contains(example, []byte(generate)) {
		t.Fatalf("the example no longer generates the child with %s", generate)
	}
	args := []string{"pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1", "-o", "child.yml"}
	if code, _, stderr := invoke(t, dir, nil, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// A usage limit recorded on the remote's debussy branches holds every
// engine's start: GitLab's root jobs are delayed past the reset, the
// Kubernetes Jobs wait for it in their command, and stderr says until when.
func TestPipelineAccountHold(t *testing.T) {
	dir := diamondRepo(t)
	t.Setenv("GIT_AUTHOR_DATE", "")
	t.Setenv("GIT_COMMITTER_DATE", "")
	resets := holdOnOrigin(t, dir)

	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1")
	if code != 0 || !strings.Contains(stderr, "5-hour usage limit") || !strings.Contains(stdout, "# Hold: the account's 5-hour usage limit resets at "+resets.Format(time.RFC3339)) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// phase-1 and phase-5 start the pipeline: both wait; the others need them.
	if n := strings.Count(stdout, "when: delayed\n  start_in: 18"); n != 2 {
		t.Errorf("%d delayed jobs, want 2 (start_in about 180 minutes):\n%s", n, stdout)
	}
	code, stdout, stderr = invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--image", "example/debussy:1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, j := range decodeJobs(t, stdout) {
		c := j.Spec.Template.Spec.Containers[0]
		found := false
		for _, e := range c.Env {
			found = found || (e.Name == "DEBUSSY_NOT_BEFORE" && e.Value == fmt.Sprint(resets.Unix()))
		}
		if !found || *j.Spec.ActiveDeadlineSeconds < 6*3600+3*3600-60 {
			t.Errorf("Job %s does not wait for the reset within its deadline: %+v", j.Name, c.Env)
		}
	}
}

// With every phase completed, k8s writes nothing (every document it writes
// is a Job) and GitLab only the collect job; stderr says why.
func TestPipelineNothingLeft(t *testing.T) {
	dir := diamondRepo(t)
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		outcomeCommit(t, dir, id, "completed")
	}
	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--repo", "/srv/origin.git", "--ref", "main", "--image", "x")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no phase is ready") {
		t.Errorf("k8s: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "x")
	if code != 0 || strings.Contains(stdout, "phase-") || !strings.Contains(stdout, "\ncollect:\n") {
		t.Errorf("gitlab: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
	code, stdout, _ = invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "github")
	if code != 0 || stdout != `{"include":[]}`+"\n" {
		t.Errorf("github: exit %d, %q", code, stdout)
	}
}

// On the terminal's stdout, which redacts, the generated files come out
// whole: their scripts name tokens by variable (password=$DEBUSSY_PUSH_TOKEN),
// which the redactor would take for secrets. A clone URL's credentials are
// left out of the Jobs.
func TestPipelineNotRedactedButNoCredentials(t *testing.T) {
	dir := diamondRepo(t)
	for _, format := range []string{"gitlab", "k8s"} {
		var raw, stderr bytes.Buffer
		e := &Env{Stdout: secrets.Writer(&raw), RawStdout: &raw, Stderr: &stderr, Dir: dir,
			Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Hard: make(chan struct{})}
		code := e.Run(context.Background(), []string{"debussy", "pipeline", "plan/MASTER_PLAN.md", "--format", format,
			"--repo", "https://ci:glpat-abcdefghij0123456789@git.example.com/team/app.git", "--ref", "main", "--image", "example/debussy:1"})
		out := raw.String()
		if code != 0 || strings.Contains(out, "[redacted]") || strings.Contains(out, "glpat-") {
			t.Errorf("%s: exit %d, stderr %s\n%s", format, code, stderr.String(), out)
		}
		golden := filepath.Join("testdata", "pipeline-fresh-"+format+map[string]string{"gitlab": ".yml", "k8s": ".yaml"}[format]+".golden")
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if format == "gitlab" && out != string(want) {
			t.Errorf("gitlab: stdout differs from %s:\n%s", golden, out)
		}
		if format == "k8s" && (!strings.Contains(out, "value: https://git.example.com/team/app.git\n") || !strings.Contains(stderr.String(), "carries credentials")) {
			t.Errorf("k8s: the clone URL kept its credentials, or nothing said so: %s\n%s", stderr.String(), out)
		}
	}
}
