package commands

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/debussy-dev/debussy/internal/buildinfo"
)

// invokeAs runs debussy as the build given, in dir.
func invokeAs(t *testing.T, build buildinfo.Info, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &Env{Stdout: &stdout, Stderr: &stderr, Dir: dir, Build: build,
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }, Hard: make(chan struct{})}
	code := e.Run(context.Background(), append([]string{"debussy"}, args...))
	return code, stdout.String(), stderr.String()
}

// gitlabChild is what the tests read of a generated child pipeline.
type gitlabChild struct {
	Default struct {
		Image struct {
			Name       string   `json:"name"`
			Entrypoint []string `json:"entrypoint"`
		} `json:"image"`
		Timeout       string   `json:"timeout"`
		Interruptible bool     `json:"interruptible"`
		BeforeScript  []string `json:"before_script"`
	} `json:"default"`
}

func parseChild(t *testing.T, out string) gitlabChild {
	t.Helper()
	var c gitlabChild
	if err := sigsyaml.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return c
}

// The jobs' image is --image, else the release image of the debussy that
// wrote them — never :latest; a build that is no release (dev, a snapshot)
// has no published image, and says to pass --image.
func TestPipelineImage(t *testing.T) {
	dir := diamondRepo(t)
	release := buildinfo.From("v1.4.2", "0123456789abcdef", "2026-12-05T10:00:00Z", nil)
	snapshot := buildinfo.From("v1.4.3-snapshot-0123456", "0123456789abcdef", "", nil)
	dev := buildinfo.From("", "", "", nil)
	k8s := []string{"--format", "k8s", "--repo", "/srv/origin.git", "--ref", "main"}
	tests := []struct {
		name  string
		build buildinfo.Info
		args  []string
		code  int
		image string // the jobs' image; or the error's words when code is 2
	}{
		{"gitlab, release", release, []string{"--format", "gitlab"}, 0, "ghcr.io/debussy-dev/debussy:v1.4.2"},
		{"k8s, release", release, k8s, 0, "ghcr.io/debussy-dev/debussy:v1.4.2"},
		{"gitlab, release, --image", release, []string{"--format", "gitlab", "--image", "registry.example.com/ci/debussy:7"}, 0, "registry.example.com/ci/debussy:7"},
		{"k8s, dev, --image", dev, append([]string{"--image", "registry.example.com/ci/debussy:7"}, k8s...), 0, "registry.example.com/ci/debussy:7"},
		{"gitlab, dev", dev, []string{"--format", "gitlab"}, 2, "pass --image IMAGE"},
		{"k8s, snapshot", snapshot, k8s, 2, "debussy v1.4.3-snapshot-0123456"},
		{"github needs no image", dev, []string{"--format", "github"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := invokeAs(t, tt.build, dir, append([]string{"pipeline", "plan/MASTER_PLAN.md"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tt.code, stdout, stderr)
			}
			if strings.Contains(stdout, ":latest") {
				t.Errorf("the output names :latest:\n%s", stdout)
			}
			switch {
			case code == 2:
				if !strings.Contains(stderr, tt.image) || stdout != "" {
					t.Errorf("stderr lacks %q (stdout %q):\n%s", tt.image, stdout, stderr)
				}
			case slices.Contains(tt.args, "gitlab"):
				if got := parseChild(t, stdout).Default.Image.Name; got != tt.image {
					t.Errorf("GitLab's image %q, want %q", got, tt.image)
				}
			case slices.Contains(tt.args, "k8s"):
				for _, j := range decodeJobs(t, stdout) {
					if got := j.Spec.Template.Spec.Containers[0].Image; got != tt.image {
						t.Errorf("Job %s's image %q, want %q", j.Name, got, tt.image)
					}
				}
			}
		})
	}
}

// A phase job's timeout: --job-timeout, else the config's phase time
// budget, else its plan's, each with headroom for clone, gates and push,
// else 6h; the same for GitLab's timeout: and a Job's activeDeadlineSeconds.
func TestPipelineJobTimeout(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		flag    []string
		gitlab  string
		seconds int64
	}{
		{"default", "", nil, "6h", 6 * 3600},
		{"phase budget", "budget:\n  phase: {duration: 45m}\n  plan: {duration: 10h}\n", nil, "1h 15m", 75 * 60},
		{"plan budget", "budget:\n  plan: {duration: 3h}\n", nil, "3h 30m", 210 * 60},
		{"flag beats the budget", "budget:\n  phase: {duration: 45m}\n", []string{"--job-timeout", "8h"}, "8h", 8 * 3600},
		{"the k8s flag's old name", "", []string{"--deadline", "90m"}, "1h 30m", 90 * 60},
		{"rounded up to the minute", "", []string{"--job-timeout", "61m30s"}, "1h 2m", 3690},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := diamondRepo(t)
			if tt.config != "" {
				write(t, filepath.Join(dir, ".debussy.yaml"), tt.config)
				gitIn(t, dir, "add", "-A")
				gitIn(t, dir, "commit", "-q", "-m", "config")
			}
			args := append([]string{"pipeline", "plan/MASTER_PLAN.md", "--image", "example/debussy:1"}, tt.flag...)
			code, stdout, stderr := invoke(t, dir, nil, append(args, "--format", "gitlab")...)
			if code != 0 {
				t.Fatalf("gitlab: exit %d: %s", code, stderr)
			}
			if got := parseChild(t, stdout).Default.Timeout; got != tt.gitlab {
				t.Errorf("GitLab's timeout %q, want %q", got, tt.gitlab)
			}
			code, stdout, stderr = invoke(t, dir, nil, append(args, "--format", "k8s", "--repo", "/srv/o.git", "--ref", "main")...)
			if code != 0 {
				t.Fatalf("k8s: exit %d: %s", code, stderr)
			}
			for _, j := range decodeJobs(t, stdout) {
				if got := *j.Spec.ActiveDeadlineSeconds; got != tt.seconds {
					t.Errorf("Job %s's activeDeadlineSeconds %d, want %d", j.Name, got, tt.seconds)
				}
			}
		})
	}
}

// Every GitLab job runs the image's shell, not its entrypoint (debussy), is
// interruptible, and is a sandbox for claude only where it runs as root.
func TestPipelineGitLabJobDefaults(t *testing.T) {
	dir := diamondRepo(t)
	code, stdout, stderr := invoke(t, dir, nil, "pipeline", "plan/MASTER_PLAN.md", "--format", "gitlab", "--image", "example/debussy:1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	d := parseChild(t, stdout).Default
	if len(d.Image.Entrypoint) != 1 || d.Image.Entrypoint[0] != "" || !d.Interruptible {
		t.Errorf("default: image %+v, interruptible %v", d.Image, d.Interruptible)
	}
	if len(d.BeforeScript) == 0 || d.BeforeScript[0] != gitlabRootSandbox {
		t.Errorf("before_script does not begin with the root check: %q", d.BeforeScript)
	}
	for _, uid := range []string{"0", "1000"} {
		cmd := exec.Command("sh", "-c", d.BeforeScript[0]+`; echo "${IS_SANDBOX:-unset}"`)
		cmd.Env = []string{"PATH=" + fakeID(t, uid) + string(os.PathListSeparator) + os.Getenv("PATH")}
		out, err := cmd.Output()
		if want := map[string]string{"0": "1", "1000": "unset"}[uid]; err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("uid %s: IS_SANDBOX %q (%v), want %q", uid, out, err, want)
		}
	}
}

// fakeID is a directory whose id prints uid for -u, for PATH.
func fakeID(t *testing.T, uid string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "id"), "#!/bin/sh\necho "+uid+"\n")
	if err := os.Chmod(filepath.Join(dir, "id"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
