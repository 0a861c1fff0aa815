// Package claudetest finds and prepares the real Claude Code CLI for
// end-to-end tests: the pinned binary, an isolated environment pointed at a
// fake API, and a throw-away git repository to work in.
package claudetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Version is the CLI version the e2e tests are pinned to (see
// scripts/install-claude.sh).
const Version = "2.1.197"

// Bin returns the path of the claude binary: $DEBUSSY_TEST_CLAUDE, else
// ${DEBUSSY_CLAUDE_CACHE:-~/.cache/debussy/claude-code}/node_modules/.bin/claude.
// When it is missing the test is skipped, or fails when CI=true: CI must not
// go green by skipping every e2e test. With DEBUSSY_TEST_NO_CLI=1 (make
// check) the test is skipped, CI or not.
func Bin(t testing.TB) string {
	t.Helper()
	if NoCLI() {
		t.Skip("needs a real claude session: make check (DEBUSSY_TEST_NO_CLI=1) runs every test but those")
		return ""
	}
	bin := os.Getenv("DEBUSSY_TEST_CLAUDE")
	if bin == "" {
		bin = filepath.Join(cacheDir(), "node_modules", ".bin", "claude")
	}
	info, err := os.Stat(bin)
	if err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
		if SecondCLI() && !isCLISensitive(t) {
			t.Skip("runs on the pinned CLI only (DEBUSSY_TEST_SECOND_CLI=1): not marked claudetest.CLISensitive")
			return ""
		}
		return bin
	}
	msg := "\n" + strings.Repeat("!", 78) + "\n" +
		"!!! real Claude Code CLI not found at " + bin + "\n" +
		"!!! the end-to-end tests need it; install the pinned version with:\n" +
		"!!!     scripts/install-claude.sh\n" +
		"!!! (or point DEBUSSY_TEST_CLAUDE at a claude " + Version + " binary)\n" +
		strings.Repeat("!", 78)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	} else {
		t.Skip(msg)
	}
	return ""
}

// CLISensitive marks t (the whole top-level test) as a test of what the CLI
// does — its stream format, hooks, control requests, interrupts and
// signals, compaction, usage limits and API errors, its default model,
// window and cost, its permission modes and shell — so that it runs on every
// CLI of a run: npm's latest and, for the core, the oldest supported one.
// Every other end-to-end test runs on the pinned CLI only: on a second CLI
// (DEBUSSY_TEST_SECOND_CLI=1) Bin skips it. Call it before Bin; why says
// which CLI behaviour the test depends on.
func CLISensitive(t testing.TB, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("claudetest.CLISensitive: say which CLI behaviour the test depends on")
	}
	sensitive.Store(topLevel(t), true)
}

// sensitive holds the names of the top-level tests marked CLISensitive.
var sensitive sync.Map

func isCLISensitive(t testing.TB) bool {
	_, ok := sensitive.Load(topLevel(t))
	return ok
}

// topLevel is t's top-level test: a subtest inherits its parent's mark.
func topLevel(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// OncePerSuite skips t on the second CLI of a run (`make test-latest` sets
// DEBUSSY_TEST_SECOND_CLI=1): for a test of debussy's own logic that the
// CLI's version cannot change, so the suite stays short. why says what the
// test is about; tests of what the CLI does must not call it. Bin skips
// every test not marked CLISensitive there anyway: OncePerSuite says why
// in the test, and covers one that skips before it calls Bin.
func OncePerSuite(t testing.TB, why string) {
	t.Helper()
	if SecondCLI() {
		t.Skip("runs on the pinned CLI only (DEBUSSY_TEST_SECOND_CLI=1): " + why)
	}
}

func cacheDir() string {
	if d := os.Getenv("DEBUSSY_CLAUDE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "debussy", "claude-code")
}

// Env is the base environment for a CLI talking to the fake API at apiURL:
// the test's environment without any ANTHROPIC_*/CLAUDE* variable, with a
// fresh HOME (so no ~/.claude settings, sessions or credentials leak in or
// out), and everything that keeps the CLI offline and quiet.
func Env(t testing.TB, apiURL string) []string {
	t.Helper()
	home := t.TempDir()
	tmp := t.TempDir()
	drop := func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "ANTHROPIC_"), strings.HasPrefix(name, "CLAUDE"):
			return true // CLAUDECODE (nested-session guard), CLAUDE_CONFIG_DIR, keys, base URLs
		case strings.HasPrefix(name, "XDG_"), name == "HOME", name == "TMPDIR":
			return true
		case strings.HasPrefix(name, "DEBUSSY_"):
			return true // the runner under test sets its own
		case name == "DISABLE_TELEMETRY", name == "DISABLE_AUTOUPDATER", name == "IS_SANDBOX":
			return true
		}
		return false
	}
	var env []string
	for _, kv := range os.Environ() {
		if !drop(kv) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+home,
		// The CLI keeps task output and its shell snapshot under $TMPDIR/claude-<uid>.
		"TMPDIR="+tmp,
		"ANTHROPIC_BASE_URL="+apiURL,
		"ANTHROPIC_API_KEY=test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
	)
	if os.Geteuid() == 0 {
		// --dangerously-skip-permissions refuses to run as root otherwise.
		env = append(env, "IS_SANDBOX=1")
	}
	return env
}

// GitRepo creates a git repository in a temp dir with a local author and one
// initial commit, and returns its path with symlinks resolved (the CLI
// reports its cwd resolved).
func GitRepo(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("resolve temp dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# test repo\n"), 0o644); err != nil {
		t.Fatalf("write README: %v", err)
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Debussy Test"},
		{"config", "user.email", "test@debussy.invalid"},
		{"config", "commit.gpgsign", "false"},
		{"add", "README.md"},
		{"commit", "-q", "-m", "initial commit"},
	} {
		Git(t, dir, args...)
	}
	return dir
}

// Git runs git in dir, isolated from the user's global and system config,
// and returns its trimmed stdout; any failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// NoCLI reports whether the run leaves out every test that needs a real
// claude session (DEBUSSY_TEST_NO_CLI=1: make check, the quick loop).
func NoCLI() bool { return os.Getenv("DEBUSSY_TEST_NO_CLI") == "1" }

// SecondCLI reports whether this is the second CLI of a run (make
// test-latest), where a table may run only the rows the CLI can change.
func SecondCLI() bool { return os.Getenv("DEBUSSY_TEST_SECOND_CLI") == "1" }
