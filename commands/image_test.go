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

// The Dockerfile's pins agree with what they must match: the claude CLI
// the tests pin (scripts/install-claude.sh) and the user the Kubernetes
// Jobs run as (imageUID, imageGID); every stage is FROM the one Debian
// bookworm base (a build here imports one base under that name), its Go
// comes from go.mod (GOTOOLCHAIN), and its entrypoint is debussy.
func TestDockerfilePins(t *testing.T) {
	df := readRepo(t, "Dockerfile")
	for _, m := range regexp.MustCompile(`(?m)^FROM\s+(?:--\S+\s+)*(\S+)`).FindAllStringSubmatch(df, -1) {
		if m[1] != "docker.io/library/debian:bookworm-slim" {
			t.Errorf("a stage is FROM %s, not the one Debian base", m[1])
		}
	}
	if !strings.Contains(df, "GOTOOLCHAIN=auto") || strings.Contains(df, "GOTOOLCHAIN=go") {
		t.Errorf("the Dockerfile does not build with the Go go.mod names (GOTOOLCHAIN=auto)")
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
