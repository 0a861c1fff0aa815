package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// What no retry can fix ends the run at once with exit 2 and the fix, and
// leaves the user's branch as it was: no retry, no remediation, no commit.

// failFast runs the plan and checks the common contract: exit 2, every
// want in stderr, HEAD and the tree unchanged, one session spawned at most,
// no retry or remediation in the events, and the ledger saying why.
func (h *harness) failFast(args []string, wants ...string) result {
	h.t.Helper()
	before := h.git("rev-parse", "HEAD")
	commits := h.git("rev-list", "--count", "HEAD")
	r := h.run(args...)
	if r.Code != 2 {
		h.t.Fatalf("want exit 2: %s", r)
	}
	for _, want := range wants {
		if !strings.Contains(r.Stderr, want) {
			h.t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if after := h.git("rev-parse", "HEAD"); after != before {
		h.t.Errorf("HEAD moved %s → %s:\n%s", before, after, h.git("log", "--format=%h %s", before+"..HEAD"))
	}
	if n := h.git("rev-list", "--count", "HEAD"); n != commits {
		h.t.Errorf("%s commits, want %s", n, commits)
	}
	if st := h.git("status", "--porcelain"); st != "" {
		h.t.Errorf("tree changed: %q", st)
	}
	events := h.runFiles("events.jsonl")
	for _, never := range []string{`"session_retry"`, `"remediation"`, `"commit"`} {
		if strings.Contains(events, never) {
			h.t.Errorf("events.jsonl has %s", never)
		}
	}
	if n := strings.Count(events, `"session_spawned"`); n > 1 {
		h.t.Errorf("%d sessions spawned, want at most 1", n)
	}
	return r
}

// lastError is phase 1's recorded error in the last run of the ledger.
func (h *harness) lastError() string {
	h.t.Helper()
	l, err := state.New(filepath.Join(h.Repo, state.DirName)).Load()
	if err != nil {
		h.t.Fatal(err)
	}
	if len(l.Runs) == 0 || len(l.Runs[len(l.Runs)-1].Phases) == 0 {
		h.t.Fatal("no run recorded")
	}
	p := l.Runs[len(l.Runs)-1].Phases[0]
	if p.Status != state.StatusFailed || p.Sessions != 0 {
		h.t.Errorf("phase %s status %s, %d sessions; want failed, 0 (the refused one does not count)", p.ID, p.Status, p.Sessions)
	}
	return p.LastError
}

func withoutSandbox(env []string) []string { return withoutVar(env, "IS_SANDBOX") }

// withoutVar is env with every setting of name removed.
func withoutVar(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// As root without IS_SANDBOX, claude refuses --dangerously-skip-permissions
// (the default permission_mode): check and --dry-run say so before any
// session (exit 2), the run exits 2 naming both fixes with nothing committed, and
// the rerun with IS_SANDBOX=1 starts the phase as if the refused run had
// never tried.
func TestFailFastRootWithoutSandbox(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's refusal of bypassPermissions as root")
	if os.Geteuid() != 0 {
		t.Skip("claude refuses bypass permissions only as root")
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "alpha\n")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}}}, "")
	sandboxed := h.Env
	h.Env = withoutSandbox(h.Env)

	// check and the dry run exit as the run would (2).
	for _, c := range []struct {
		args []string
		code int
	}{{[]string{"check", "plan/MASTER_PLAN.md"}, 2}, {[]string{"run", "plan/MASTER_PLAN.md", "--dry-run"}, 2}} {
		if r := h.run(c.args...); r.Code != c.code || !strings.Contains(r.Stderr, "IS_SANDBOX=1") || !strings.Contains(r.Stderr, "permission_mode") {
			t.Errorf("%s: want exit %d naming the root refusal: %s", strings.Join(c.args, " "), c.code, r)
		}
	}
	h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, "IS_SANDBOX=1", "permission_mode", "as root")
	if n := len(h.API.Requests()); n != 0 {
		t.Errorf("%d API requests, want none", n)
	}
	if e := h.lastError(); !strings.Contains(e, "IS_SANDBOX=1") {
		t.Errorf("the ledger does not say how to fix it: %q", e)
	}

	h.Env = sandboxed
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("the rerun with IS_SANDBOX=1: %s", r)
	}
	first := h.sessionsOf(phaseMatch("1"))
	if len(first) != 1 || strings.Contains(first[0], "checkpoint") {
		t.Errorf("the rerun should start phase 1 afresh, not resume the refused run; sessions: %q", first)
	}
}

// The API refusing the key (401 on every request: the CLI alone would
// retry ten times over minutes) ends the run at the second refusal; a
// model it does not know (404 not_found_error) at once (the CLI itself
// sends two requests).
func TestFailFastAPIRefusals(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's retries on 401 and 404")
	for _, tc := range []struct {
		name, config string
		turn         fakeapi.Turn
		wants        []string
		maxRequests  int
	}{
		{name: "401", turn: fakeapi.Turn{Status: 401, ErrorMessage: "invalid x-api-key", Repeat: 50},
			wants: []string{"status 401", "ANTHROPIC_API_KEY"}, maxRequests: 3},
		{name: "404 model", config: "model: claude-nonexistent-9\n",
			turn:  fakeapi.Turn{Status: 404, ErrorMessage: "model: claude-nonexistent-9", Repeat: 50},
			wants: []string{"status 404", "claude-nonexistent-9", "set model"}, maxRequests: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := fakeapi.Script{Default: &fakeapi.Conversation{Name: "refused", Turns: []fakeapi.Turn{tc.turn}}}
			h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, tc.config)
			h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, tc.wants...)
			if n := len(h.API.Requests()); n == 0 || n > tc.maxRequests {
				t.Errorf("%d API requests, want 1 to %d", n, tc.maxRequests)
			}
			if e := h.lastError(); !strings.Contains(e, tc.wants[len(tc.wants)-1]) {
				t.Errorf("the ledger does not say how to fix it: %q", e)
			}
		})
	}
}

// An option claude does not know in extra_args ends the run at once.
func TestFailFastUnknownOption(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's answer to an unknown option")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "extra_args: [--no-such-option-for-debussy]\n")
	h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, "--no-such-option-for-debussy", "extra_args")
}

// A gate whose program is not installed: check warns, and the run spends
// no remediation session on it — the phase fails naming the program and
// gate_commands; the session's work is committed.
func TestFailFastMissingGateProgram(t *testing.T) {
	claudetest.OncePerSuite(t, "a gate program that is not installed")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "alpha\n")),
		turn(21000, done("1")),
		turn(22000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha",
		Gates: []string{"exists: `test -f a.txt`", "lint: `no-such-linter-for-debussy check .`"}}}, "")
	if r := h.run("check", "plan/MASTER_PLAN.md"); r.Code != 2 || !strings.Contains(r.Stderr, "`no-such-linter-for-debussy`, which is not on PATH") {
		t.Errorf("check does not warn about the missing gate program: %s", r)
	}
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no-such-linter-for-debussy is not installed") || !strings.Contains(r.Stderr, "gate_commands") {
		t.Fatalf("want exit 2 naming the program and gate_commands: %s", r)
	}
	events := h.runFiles("events.jsonl")
	if n := strings.Count(events, `"session_spawned"`); n != 1 || strings.Contains(events, `"remediation"`) {
		t.Errorf("%d sessions (remediation: %v), want 1 and none", n, strings.Contains(events, `"remediation"`))
	}
	if n := len(h.API.Sessions()); n != 1 {
		t.Errorf("%d sessions reached the API, want 1", n)
	}
	if files := h.git("show", "--name-only", "--format=%s", "HEAD"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "failed") {
		t.Errorf("the phase's work should be committed with its failure: %q", files)
	}
}

// A claude_bin that is executable but not a program ends the run at once
// with exit 2 and nothing committed, like a missing claude: a text file
// without #! and garbage the kernel refuses ("exec format error") are
// refused before the run starts (under the sandbox, bubblewrap's execvp
// would hand them to /bin/sh); either message says "start claude:" once.
func TestFailFastClaudeNotProgram(t *testing.T) {
	claudetest.OncePerSuite(t, "a claude_bin that is not a program")
	for _, tc := range []struct {
		name    string
		content string
	}{
		{"text", "claude \"$@\"\n"},
		{"binary", "\x01\x02\x03\xfe\xff\x00garbage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
			bin := filepath.Join(t.TempDir(), "claude")
			if err := os.WriteFile(bin, []byte(tc.content), 0o755); err != nil {
				t.Fatal(err)
			}
			h.Env = append(withoutVar(h.Env, "DEBUSSY_CLAUDE_BIN"), "DEBUSSY_CLAUDE_BIN="+bin)
			r := h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, "cannot be run", "DEBUSSY_CLAUDE_BIN")
			if strings.Contains(r.Stderr, "start claude: start claude") {
				t.Errorf("doubled \"start claude:\":\n%s", r.Stderr)
			}
			if n := len(h.API.Requests()); n != 0 {
				t.Errorf("%d API requests, want none", n)
			}
		})
	}
}
