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
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// The repository's Dockerfile, built here without a daemon, runs the jobs
// debussy generates as they are written, inside the image, as its user:
// phase 1 through the Kubernetes Job's container (its command, its env
// with the Secret's keys, its workingDir on an emptyDir owned as the
// kubelet leaves one), phase 2 through the GitLab child pipeline's job (its
// before_script and script in one shell, in a root-owned checkout as the
// Docker executor leaves one); each against the fake API on loopback and a
// bare origin on this machine. Both phases complete, push their branches,
// and collect merges them.
//
// The image is built as .ci/run's own step (DEBUSSY_TEST_IMAGE=1; a few
// minutes): an mmdebstrap base imported under the Dockerfile's FROM name,
// then `make image` with buildah --isolation chroot on vfs storage, with
// this machine's Go module and build caches mounted into the Go stage (the
// module cache also keeps the Go toolchain the stage fetches). DEBUSSY_IMAGE_CACHE keeps the
// base between runs (.ci/run: within one CI run).
func TestImageRunsGeneratedJobs(t *testing.T) {
	if os.Getenv("DEBUSSY_TEST_IMAGE") != "1" {
		t.Skip("builds the image (a few minutes): set DEBUSSY_TEST_IMAGE=1 (.ci/run runs it as its own step)")
	}
	claudetest.OncePerSuite(t, "the image and the jobs run in it")
	for _, tool := range []string{"mmdebstrap", "podman", "buildah", "make"} {
		needTool(t, tool)
	}
	img := buildImage(t)

	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("one.txt", "one\n")),
			turn(21000, done("1")),
			turn(22000, fakeapi.Text("Phase 1 done.")),
		}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Bash("{ cat one.txt; echo two; } > two.txt && debussy done --phase 2")),
			turn(21000, fakeapi.Text("Phase 2 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{
		{ID: "1", Title: "Base", Gates: []string{"one: `test -f one.txt`"}},
		{ID: "2", Title: "Next", Deps: []string{"1"}, Gates: []string{"two: `grep -q one two.txt`"}},
	}, "")
	origin := h.withOrigin()
	// A server's repository the image's user may push to; root owns it.
	claudetest.Git(t, origin, "config", "core.sharedRepository", "0777")
	if out, err := exec.Command("chmod", "-R", "a+rwX", origin).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	driver := h.cloneOf(origin)
	// What a cluster or a runner adds to the jobs' environment here: the
	// fake API, and a CLI kept offline. No IS_SANDBOX: the image's user is
	// not root, so claude bypasses permissions without it.
	cluster := []string{"ANTHROPIC_BASE_URL=" + h.API.URL(), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1"}

	t.Run("kubernetes", func(t *testing.T) {
		r := driver.run("pipeline", "plan/MASTER_PLAN.md", "--format", "k8s", "--image", img.name, "--repo", origin, "--ref", "main")
		if r.Code != 0 {
			t.Fatalf("pipeline: %s", r)
		}
		jobs := strictJobs(t, r.Stdout)
		if len(jobs) != 1 || jobs[0].Labels["debussy.dev/phase"] != "1" {
			t.Fatalf("want one Job, of phase 1: %d", len(jobs))
		}
		pod := jobs[0].Spec.Template.Spec
		c, sc := pod.Containers[0], pod.SecurityContext
		if c.Image != img.name || sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil || sc.FSGroup == nil || !*sc.RunAsNonRoot {
			t.Fatalf("the Job's image %q, securityContext %+v", c.Image, sc)
		}
		// The Secret holds the API key; the other keys are optional.
		secret := map[string]string{"ANTHROPIC_API_KEY": "test"}
		env := slices.Clone(cluster)
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env = append(env, e.Name+"="+e.Value)
			case e.ValueFrom.SecretKeyRef != nil:
				if v, ok := secret[e.ValueFrom.SecretKeyRef.Key]; ok {
					env = append(env, e.Name+"="+v)
				} else if ref := e.ValueFrom.SecretKeyRef; ref.Optional == nil || !*ref.Optional {
					t.Fatalf("the Job needs the Secret's key %s", ref.Key)
				}
			}
		}
		// The emptyDir as the kubelet makes it with fsGroup: root's, the
		// group's, setgid, writable by all.
		emptyDir := filepath.Join(t.TempDir(), "emptydir")
		if err := os.Mkdir(emptyDir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(emptyDir, 0, int(*sc.FSGroup)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(emptyDir, 0o777|os.ModeSetgid); err != nil {
			t.Fatal(err)
		}
		user := fmt.Sprintf("%d:%d", *sc.RunAsUser, *sc.RunAsGroup)
		mounts := []string{emptyDir + ":" + c.VolumeMounts[0].MountPath, origin + ":" + origin}
		out, err := img.run(t, user, c.WorkingDir, mounts, env, c.Command...)
		t.Logf("the Job's container:\n%s", out)
		if err != nil {
			t.Fatalf("the Job's container: %v", err)
		}
		checkPhaseBranch(t, origin, "1")
		if fi, err := os.Stat(filepath.Join(emptyDir, "one.txt")); err != nil || fileUID(fi) != int(*sc.RunAsUser) {
			t.Errorf("one.txt in the emptyDir: %v, not the user's", err)
		}
	})

	t.Run("gitlab", func(t *testing.T) {
		if originTip(origin, e2ePlanBranch("1")) == "" {
			t.Skip("phase 2 needs phase 1's branch")
		}
		r := driver.run("pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", img.name)
		if r.Code != 0 {
			t.Fatalf("pipeline: %s", r)
		}
		var child struct {
			Variables map[string]string `json:"variables"`
			Default   struct {
				Image struct {
					Name       string   `json:"name"`
					Entrypoint []string `json:"entrypoint"`
				} `json:"image"`
				BeforeScript []string `json:"before_script"`
				AfterScript  []string `json:"after_script"`
			} `json:"default"`
			Phase2 struct {
				Script []string `json:"script"`
			} `json:"phase-2"`
		}
		if err := sigsyaml.Unmarshal([]byte(r.Stdout), &child); err != nil {
			t.Fatalf("%v\n%s", err, r.Stdout)
		}
		if child.Default.Image.Name != img.name || !slices.Equal(child.Default.Image.Entrypoint, []string{""}) || len(child.Phase2.Script) == 0 {
			t.Fatalf("the child pipeline's image %+v, phase-2's script %q", child.Default.Image, child.Phase2.Script)
		}
		// The runner's checkout: root's, detached at the pipeline's commit.
		checkout := filepath.Join(t.TempDir(), "app")
		claudetest.Git(t, t.TempDir(), "clone", "-q", origin, checkout)
		sha := driver.git("rev-parse", "HEAD")
		claudetest.Git(t, checkout, "checkout", "-q", "--detach", sha)
		project := "/builds/team/app"
		env := append(slices.Clone(cluster), "ANTHROPIC_API_KEY=test", "CI=true", "GITLAB_CI=true",
			"CI_PROJECT_DIR="+project, "CI_COMMIT_SHA="+sha, "CI_JOB_ID=4702", "CI_COMMIT_REF_NAME=main",
			"CI_PROJECT_PATH=team/app", "CI_SERVER_URL=https://gitlab.example.com", "CI_SERVER_PROTOCOL=https")
		for k, v := range child.Variables {
			env = append(env, k+"="+v)
		}
		mounts := []string{checkout + ":" + project, origin + ":" + origin}
		// GitLab runs before_script and script in one shell, after_script in
		// another, each as the image's user (no --user: the image's USER).
		job := "set -eo pipefail\n" + strings.Join(append(child.Default.BeforeScript, child.Phase2.Script...), "\n")
		out, err := img.run(t, "", project, mounts, env, "bash", "-c", job)
		t.Logf("the GitLab job:\n%s", out)
		if err != nil {
			t.Fatalf("the GitLab job: %v", err)
		}
		after := "set -eo pipefail\n" + strings.Join(child.Default.AfterScript, "\n")
		if out, err := img.run(t, "", project, mounts, append(env, "CI_JOB_STATUS=success"), "bash", "-c", after); err != nil {
			t.Errorf("after_script: %v\n%s", err, out)
		}
		checkPhaseBranch(t, origin, "2")
	})

	if t.Failed() {
		return
	}
	r := driver.run("collect", "plan/MASTER_PLAN.md", "--from", "origin", "--push")
	if r.Code != 0 || strings.Count(r.Stdout, "merged") < 2 {
		t.Fatalf("collect: %s", r)
	}
	files := claudetest.Git(t, origin, "ls-tree", "--name-only", "main")
	if !strings.Contains(files, "one.txt") || !strings.Contains(files, "two.txt") {
		t.Errorf("origin's main holds %q", files)
	}
}

// fileUID is the owner of a file.
func fileUID(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// checkPhaseBranch checks that the phase's branch on origin ends completed.
func checkPhaseBranch(t *testing.T, origin, phase string) {
	t.Helper()
	tip := originTip(origin, e2ePlanBranch(phase))
	if tip == "" {
		t.Fatalf("phase %s pushed no branch", phase)
	}
	if ev := claudetest.Git(t, origin, "log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)", tip); ev != "completed" {
		t.Fatalf("phase %s's branch ends with event %q", phase, ev)
	}
}

// strictJobs decodes the k8s output's documents as batch/v1 Jobs, a field
// the API does not know being an error.
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
		if len(bytes.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(doc, nil))) == 0 {
			continue
		}
		var j batchv1.Job
		if err := sigsyaml.UnmarshalStrict(doc, &j); err != nil {
			t.Fatalf("a Job, strictly: %v\n%s", err, doc)
		}
		jobs = append(jobs, j)
	}
}

// image is the built image and the storage it is in.
type image struct {
	name string
	env  []string // CONTAINERS_STORAGE_CONF for buildah and podman
}

// run runs argv in a fresh container of the image, as user ("" = the
// image's), in dir, with the mounts (host:container) and env, and returns
// its combined output.
func (img image) run(t *testing.T, user, dir string, mounts, env []string, argv ...string) (string, error) {
	t.Helper()
	ctr := strings.TrimSpace(mustRun(t, img.env, "buildah", "from", "--pull=never", img.name))
	t.Cleanup(func() {
		rm := exec.Command("buildah", "rm", ctr)
		rm.Env = append(os.Environ(), img.env...)
		_ = rm.Run()
	})
	args := []string{"run", "--isolation", "chroot", "--workingdir", dir}
	if user != "" {
		args = append(args, "--user", user)
	}
	for _, m := range mounts {
		args = append(args, "--volume", m)
	}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	args = append(append(args, ctr, "--"), argv...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "buildah", args...)
	cmd.Env = append(os.Environ(), img.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// buildImage builds the Dockerfile's image with make image and returns it.
func buildImage(t *testing.T) image {
	t.Helper()
	cache := os.Getenv("DEBUSSY_IMAGE_CACHE")
	if cache == "" {
		cache = t.TempDir()
	}
	store := t.TempDir()
	conf := filepath.Join(store, "storage.conf")
	err := os.WriteFile(conf, fmt.Appendf(nil, "[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n",
		filepath.Join(store, "graph"), filepath.Join(store, "run")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	img := image{name: "localhost/debussy:e2e", env: []string{"CONTAINERS_STORAGE_CONF=" + conf}}
	t.Cleanup(func() {
		// vfs layers hold files of many owners; buildah removes its own.
		cmd := exec.Command("buildah", "rm", "--all")
		cmd.Env = append(os.Environ(), img.env...)
		_ = cmd.Run()
	})

	start := time.Now()
	base := debianBase(t, cache)
	t.Logf("base: %s", time.Since(start).Round(time.Second))
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Each FROM resolves here, without a registry.
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(?:--\S+\s+)*(\S+)`).FindAllStringSubmatch(string(dockerfile), -1) {
		if !names[m[1]] {
			names[m[1]] = true
			mustRun(t, img.env, "podman", "import", base, m[1])
		}
	}

	start = time.Now()
	gocache := strings.Fields(mustRun(t, nil, "go", "env", "GOMODCACHE", "GOCACHE"))
	flags := "--isolation chroot --pull=never --volume " + gocache[0] + ":/go/pkg/mod --volume " + gocache[1] + ":/root/.cache/go-build"
	mustRun(t, img.env, "make", "-C", root, "image", "IMAGE="+img.name, "IMAGE_BUILDER=buildah", "IMAGE_BUILD_FLAGS="+flags)
	t.Logf("make image: %s; %s", time.Since(start).Round(time.Second),
		mustRun(t, img.env, "buildah", "images", "--format", "{{.Name}}:{{.Tag}} {{.Size}}", img.name))
	// What the image is: its user, its entrypoint, its debussy and claude.
	cfg := mustRun(t, img.env, "buildah", "inspect", "--format", "{{.OCIv1.Config.User}} {{.OCIv1.Config.Entrypoint}}", img.name)
	if strings.TrimSpace(cfg) != "1000:1000 [debussy]" {
		t.Fatalf("the image's user and entrypoint: %q", cfg)
	}
	out, err := img.run(t, "", "/home/debussy", nil, nil, "sh", "-c", "id -u; debussy version; claude --version")
	if err != nil || !strings.Contains(out, "debussy dev (commit ") {
		t.Fatalf("in the image: %v\n%s", err, out)
	}
	t.Logf("in the image: %s", out)
	return img
}

// debianBase is a Debian bookworm minbase tarball with this machine's
// extra CA certificates (a build's npm and go reach their registries
// through the same TLS as this machine), made once into cache.
func debianBase(t *testing.T, cache string) string {
	t.Helper()
	tar := filepath.Join(cache, "bookworm-base.tar")
	if _, err := os.Stat(tar); err == nil {
		return tar
	}
	tmp := tar + ".part"
	args := []string{"--variant=minbase", "--format=tar", "--include=ca-certificates", "--quiet"}
	if extra, _ := filepath.Glob("/usr/local/share/ca-certificates/*"); len(extra) > 0 {
		args = append(args, "--customize-hook=sync-in /usr/local/share/ca-certificates /usr/local/share/ca-certificates",
			`--customize-hook=chroot "$1" update-ca-certificates`)
	}
	mustRun(t, nil, "mmdebstrap", append(args, "bookworm", tmp)...)
	if err := os.Rename(tmp, tar); err != nil {
		t.Fatal(err)
	}
	return tar
}

// mustRun runs a command with env added, failing the test on an error.
func mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}
