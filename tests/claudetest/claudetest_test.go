package claudetest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
)

// recorder catches Skip/Fatal instead of ending the test.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.fatal = fmt.Sprint(args...) }

func TestBin(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cached := filepath.Join(cache, "node_modules", ".bin", "claude")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name              string
		testClaude, cache string
		ci                string
		noCLI             bool // DEBUSSY_TEST_NO_CLI=1
		want              string
		wantSkip, wantErr bool
	}{
		{name: "explicit binary", testClaude: exe, cache: cache, want: exe},
		{name: "cache dir", cache: cache, want: cached},
		{name: "missing skips", cache: t.TempDir(), wantSkip: true},
		{name: "missing in CI fails", cache: t.TempDir(), ci: "true", wantErr: true},
		{name: "not executable", testClaude: filepath.Join(dir, "nope"), wantSkip: true},
		{name: "make check skips even in CI", testClaude: exe, ci: "true", noCLI: true, wantSkip: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DEBUSSY_TEST_CLAUDE", tt.testClaude)
			t.Setenv("DEBUSSY_CLAUDE_CACHE", tt.cache)
			t.Setenv("CI", tt.ci)
			t.Setenv("DEBUSSY_TEST_SECOND_CLI", "")
			t.Setenv("DEBUSSY_TEST_NO_CLI", "")
			if tt.noCLI {
				t.Setenv("DEBUSSY_TEST_NO_CLI", "1")
			}
			r := &recorder{TB: t}
			got := claudetest.Bin(r)
			if got != tt.want || (r.skipped != "") != tt.wantSkip || (r.fatal != "") != tt.wantErr {
				t.Errorf("Bin = %q skipped=%q fatal=%q", got, r.skipped, r.fatal)
			}
			if msg := r.skipped + r.fatal; msg != "" && !tt.noCLI && !strings.Contains(msg, "scripts/install-claude.sh") {
				t.Errorf("message does not name the install script: %s", msg)
			}
		})
	}
}

// On a second CLI, Bin skips a test unless it (or its top-level test) was
// marked CLISensitive; on the pinned CLI it skips none.
func TestCLISensitive(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DEBUSSY_TEST_CLAUDE", exe)
	t.Setenv("DEBUSSY_TEST_NO_CLI", "")
	bin := func(t testing.TB) (string, string) {
		r := &recorder{TB: t}
		return claudetest.Bin(r), r.skipped
	}
	t.Setenv("DEBUSSY_TEST_SECOND_CLI", "")
	if got, skipped := bin(t); got != exe || skipped != "" {
		t.Errorf("pinned, unmarked: Bin = %q, skipped %q; want it run", got, skipped)
	}
	t.Setenv("DEBUSSY_TEST_SECOND_CLI", "1")
	if got, skipped := bin(t); got != "" || !strings.Contains(skipped, "CLISensitive") {
		t.Errorf("second CLI, unmarked: Bin = %q, skipped %q; want a skip naming the marker", got, skipped)
	}
	t.Run("marked", func(t *testing.T) {
		claudetest.CLISensitive(t, "the test's own mark")
		if got, skipped := bin(t); got != exe || skipped != "" {
			t.Errorf("second CLI, marked: Bin = %q, skipped %q", got, skipped)
		}
	})
	t.Run("sibling", func(t *testing.T) {
		if got, skipped := bin(t); got != exe || skipped != "" {
			t.Errorf("second CLI, marked top-level test: Bin = %q, skipped %q", got, skipped)
		}
	})
}

func TestEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "real-key")
	t.Setenv("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CONFIG_DIR", "/home/me/.claude")
	t.Setenv("DEBUSSY_RUN_ID", "leak")
	t.Setenv("KEEP_ME", "yes")
	env := claudetest.Env(t, "http://127.0.0.1:1234")

	get := func(name string) (string, int) {
		val, n := "", 0
		for _, kv := range env {
			if k, v, _ := strings.Cut(kv, "="); k == name {
				val, n = v, n+1
			}
		}
		return val, n
	}
	for name, want := range map[string]string{
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:1234",
		"ANTHROPIC_API_KEY":                        "test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"KEEP_ME":                                  "yes",
	} {
		if got, n := get(name); got != want || n != 1 {
			t.Errorf("%s = %q (%d times), want %q once", name, got, n, want)
		}
	}
	for _, name := range []string{"CLAUDECODE", "CLAUDE_CONFIG_DIR", "DEBUSSY_RUN_ID"} {
		if _, n := get(name); n != 0 {
			t.Errorf("%s leaked into the CLI env", name)
		}
	}
	home, _ := get("HOME")
	if real, _ := os.UserHomeDir(); home == "" || home == real {
		t.Errorf("HOME = %q, want a fresh temp dir", home)
	}
	if _, n := get("IS_SANDBOX"); (n == 1) != (os.Geteuid() == 0) {
		t.Errorf("IS_SANDBOX set %d times as uid %d", n, os.Geteuid())
	}
}

func TestGitRepo(t *testing.T) {
	dir := claudetest.GitRepo(t)
	if got := claudetest.Git(t, dir, "rev-list", "--count", "HEAD"); got != "1" {
		t.Errorf("commits = %s, want 1", got)
	}
	if got := claudetest.Git(t, dir, "branch", "--show-current"); got != "main" {
		t.Errorf("branch = %s", got)
	}
	if got := claudetest.Git(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("tree not clean: %q", got)
	}
	author := claudetest.Git(t, dir, "config", "--local", "--get-regexp", "^user\\.")
	if lines := strings.Split(author, "\n"); len(lines) != 2 || !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "user.email ")
	}) {
		t.Errorf("local author config = %q", author)
	}
}
