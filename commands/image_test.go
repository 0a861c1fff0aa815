package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readRepo reads a file of the repository.
func readRepo(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// match is re's first group in s, failing the test when re finds nothing.
func match(t *testing.T, re, s, where string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%s: no match for %s", where, re)
	}
	return m[1]
}

// The Dockerfile's pins agree with what they must match: the Go of go.mod,
// the claude CLI the tests pin (scripts/install-claude.sh), and the user the
// Kubernetes Jobs run as (imageUID, imageGID); its base is Debian bookworm
// and its entrypoint debussy.
func TestDockerfilePins(t *testing.T) {
	df := readRepo(t, "Dockerfile")
	goVersion := match(t, `(?m)^go (\S+)$`, readRepo(t, "go.mod"), "go.mod")
	if got := match(t, `(?m)^FROM .*golang:(\S+)-bookworm AS build$`, df, "Dockerfile"); got != goVersion {
		t.Errorf("the Dockerfile builds with Go %s, go.mod names %s", got, goVersion)
	}
	pinned := match(t, `(?m)^pinned=(\S+)$`, readRepo(t, "scripts/install-claude.sh"), "scripts/install-claude.sh")
	if got := match(t, `(?m)^ARG CLAUDE_VERSION=(\S+)$`, df, "Dockerfile"); got != pinned {
		t.Errorf("the Dockerfile installs claude %s, scripts/install-claude.sh pins %s", got, pinned)
	}
	uid, gid := strconv.Itoa(imageUID), strconv.Itoa(imageGID)
	for _, want := range []string{
		"groupadd --gid " + gid + " ",
		"useradd --uid " + uid + " --gid " + gid + " --create-home ",
		"\nUSER " + uid + ":" + gid + "\n",
		"\nENTRYPOINT [\"debussy\"]\n",
		"safe.directory",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	froms := regexp.MustCompile(`(?m)^FROM (.*)$`).FindAllStringSubmatch(df, -1)
	if last := froms[len(froms)-1][1]; last != "docker.io/library/debian:bookworm-slim" {
		t.Errorf("the image's base is %q, want Debian bookworm-slim", last)
	}
	// The examples install the same claude CLI.
	for _, ex := range []string{"examples/github-actions.yml", "examples/github-actions-matrix.yml"} {
		for _, m := range regexp.MustCompile(`CLAUDE_CODE_VERSION: "?([0-9.]+)"?`).FindAllStringSubmatch(readRepo(t, ex), -1) {
			if m[1] != pinned {
				t.Errorf("%s installs claude %s, scripts/install-claude.sh pins %s", ex, m[1], pinned)
			}
		}
	}
}

// What users copy or run never floats: no image named :latest, no
// go install …@latest, in the examples, the Dockerfile, the workflows, or
// the generated pipelines (their goldens).
func TestNothingLatest(t *testing.T) {
	var files []string
	for _, pattern := range []string{"examples/*", "examples/*/*", "Dockerfile", ".github/workflows/*", "commands/testdata/pipeline-*"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: %v (none)", pattern, err)
		}
		files = append(files, m...)
	}
	latest := regexp.MustCompile(`:latest\b|@latest\b`)
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if latest.MatchString(line) {
				t.Errorf("%s:%d: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
