package tests

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// debussy doctor against the real CLI: every control request debussy relies
// on is answered, the model and window come from claude itself, and the
// login is tested with one short session — one API request, none with
// --no-login. As root without IS_SANDBOX it names the fix and exits 2.
func TestDoctorE2E(t *testing.T) {
	claudetest.CLISensitive(t, "the control requests debussy relies on")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "one"}}, "")
	res := h.run("doctor")
	if res.Code != 0 {
		t.Fatalf("doctor on a working setup:\n%s", res)
	}
	for _, want := range []string{
		"initialize with hook callbacks: answered", "interrupt: answered", "get_context_usage: answered",
		"(claude's default): window ", "(Claude Code))", "ok    login      a short session got its answer", "ok    git        git version",
		"ok: a run would work here",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, res.Stdout)
		}
	}
	if n := len(h.API.Requests()); n != 1 {
		t.Errorf("doctor made %d API requests, want the login's 1", n)
	}
	if res := h.run("doctor", "--no-login"); res.Code != 0 || strings.Contains(res.Stdout, "login") {
		t.Errorf("doctor --no-login:\n%s", res)
	}
	if n := len(h.API.Requests()); n != 1 {
		t.Errorf("doctor --no-login made an API request (%d in all)", n)
	}
	if h.git("rev-list", "--count", "HEAD") != "2" {
		t.Errorf("doctor changed the branch")
	}

	if os.Geteuid() != 0 {
		return
	}
	h.Env = slices.DeleteFunc(h.Env, func(kv string) bool { return strings.HasPrefix(kv, "IS_SANDBOX=") })
	res = h.run("doctor")
	if res.Code != 2 || !strings.Contains(res.Stdout, "FAIL  permission running as root") ||
		!strings.Contains(res.Stdout, "fix: set IS_SANDBOX=1 (only in a container or VM you trust), or permission_mode: acceptEdits with allowed_tools") {
		t.Errorf("doctor as root without IS_SANDBOX:\n%s", res)
	}
	// The rest is still checked, with a mode claude accepts as root.
	if !strings.Contains(res.Stdout, "get_context_usage: answered") {
		t.Errorf("doctor stopped at the permission problem:\n%s", res)
	}
}
