package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// What ends an unattended night that is not the agent's doing: a
// subscription's usage limit (waited out), a missing login and an API that
// cannot be reached (stopped at once; retried when it answered before), a
// permission mode that refuses the agent's commands (its own always
// allowed). Each on both CLIs.

// oauth is the harness's environment logged in with a subscription's
// token instead of an API key: the CLI reports a usage limit as one only
// on that path (claude-cli.md, "Usage limits").
func oauth(env []string) []string {
	return append(withoutVar(env, "ANTHROPIC_API_KEY"), "CLAUDE_CODE_OAUTH_TOKEN=test")
}

// limitScript: the phase's agent writes a.txt, then its next request meets
// a 5-hour limit lasting limit; after the reset it writes b.txt and
// signals done.
func limitScript(limit time.Duration) fakeapi.Script { return limitScriptOf("five_hour", limit) }

// limitScriptOf is limitScript with the limit's type.
func limitScriptOf(typ string, limit time.Duration) fakeapi.Script {
	return fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			{UsageLimit: &fakeapi.UsageLimit{Type: typ, For: fakeapi.Duration(limit)}, Usage: fakeapi.Usage{Input: 21000, Output: 50},
				Blocks: []fakeapi.Block{fakeapi.Text("never said: the limit answers this turn")}},
		}},
		// The session after the reset (its prompt is the checkpoint).
		{Name: "p1-after", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(22000, fakeapi.Write("b.txt", "beta\n")),
			turn(23000, done("1")),
			turn(24000, fakeapi.Text("Done.")),
		}},
	}}
}

// requestsDuring counts the API requests that arrived in (from, to).
func (h *harness) requestsDuring(from, to time.Time) int {
	n := 0
	for _, r := range h.API.Requests() {
		if r.At.After(from) && r.At.Before(to) {
			n++
		}
	}
	return n
}

// limitHit is when the fake API first answered 429, and the last 429.
func (h *harness) limitHit() (first, last time.Time) {
	for _, r := range h.API.Requests() {
		if r.Status == 429 {
			if first.IsZero() {
				first = r.At
			}
			last = r.At
		}
	}
	return first, last
}

// A usage limit that resets within usage_limit_wait: the work is
// committed, debussy says when it resets and waits without a request, then
// goes on in the same phase from a checkpoint — no restart or retry
// counted — and the plan finishes.
func TestUsageLimitWaitsForTheReset(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's usage-limit answer")
	const limit = 6 * time.Second
	h := newHarness(t, limitScript(limit), []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"both: `test -f a.txt && test -f b.txt`"}}}, "")
	h.Env = oauth(h.Env)
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	for _, want := range []string{"5-hour limit reached; resets", "waiting — Ctrl-C stops", "limit reset: going on"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	first, last := h.limitHit()
	if first.IsZero() {
		t.Fatal("the fake API never answered with the limit")
	}
	if first != last {
		t.Errorf("%d requests met the limit, want 1 (nothing is sent while waiting)", h.requestsDuring(first.Add(-time.Millisecond), last.Add(time.Millisecond)))
	}
	if n := h.requestsDuring(first, first.Add(limit)); n != 0 {
		t.Errorf("%d requests during the limit, want none", n)
	}
	// The work before the limit was committed before the wait.
	log := h.git("log", "--format=%s", "--name-only")
	if !strings.Contains(log, "5-hour limit") || !strings.Contains(log, "a.txt") {
		t.Errorf("no commit of the work before the limit:\n%s", log)
	}
	st := h.status()
	ph := st["phases"].([]any)[0].(map[string]any)
	if ph["status"] != "completed" || ph["restarts"].(float64) != 0 || ph["attempts"].(float64) != 1 {
		t.Errorf("phase: %v; want completed with no restart or retry counted", ph)
	}
	sessions := h.sessionsOf(phaseMatch("1"))
	if len(sessions) != 2 || !strings.Contains(sessions[1], "5-hour limit") {
		t.Errorf("want the second session to start from a checkpoint naming the limit: %q", sessions)
	}
	if ev := h.runFiles("events.jsonl"); !strings.Contains(ev, `"usage_limit"`) || !strings.Contains(ev, `"usage_limit_reset"`) {
		t.Errorf("events.jsonl lacks the usage limit's events")
	}
}

// With waiting off (usage_limit_wait 0, or a reset further away), the run
// ends at once with exit 75, the work committed, the reset time and the
// command that goes on; a rerun before the reset waits for it without a
// request, and finishes the plan.
func TestUsageLimitWithoutWaiting(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's usage-limit answer")
	// Long enough that the first run ends well before the reset even on
	// a loaded machine: the rerun must meet a limit still in force.
	const limit = 30 * time.Second
	h := newHarness(t, limitScript(limit), []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.Env = oauth(h.Env)
	r := h.run("run", "plan/MASTER_PLAN.md", "--usage-limit-wait", "0")
	ended := time.Now()
	if r.Code != 75 {
		t.Fatalf("want exit 75: %s", r)
	}
	for _, want := range []string{"5-hour limit reached", "it resets at", "usage_limit_wait is 0", "debussy run plan/MASTER_PLAN.md"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if files := h.git("show", "--name-only", "--format=%s", "HEAD"); !strings.Contains(files, "a.txt") {
		t.Errorf("the work before the limit is not committed: %q", files)
	}
	if st := h.git("status", "--porcelain"); st != "" {
		t.Errorf("work left uncommitted: %q", st)
	}
	first, _ := h.limitHit()
	// From the limit on, not from the start: on a loaded machine the CLI's
	// start-up alone has taken 20 s.
	if after := ended.Sub(first); after >= limit {
		t.Errorf("the run ended %s after the limit: it waited", after)
	}

	// The rerun, before the reset: it waits (the ledger has the reset)
	// and sends nothing meanwhile.
	r = h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("the rerun: want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "waiting — Ctrl-C stops") {
		t.Errorf("the rerun before the reset did not wait:\n%s", r.Stderr)
	}
	if n := h.requestsDuring(first.Add(time.Millisecond), first.Add(limit)); n != 0 {
		t.Errorf("%d requests before the reset, want none", n)
	}
	if !h.exists("b.txt") || h.git("status", "--porcelain") != "" {
		t.Errorf("the rerun did not finish the phase: %s", h.git("status", "--porcelain"))
	}
}

// Not logged in (no API key, no subscription token): the CLI answers at
// once without a request; debussy stops with exit 2 in seconds, says how to
// log in, and leaves the branch untouched.
func TestNotLoggedIn(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's answer without a login")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.Env = withoutVar(h.Env, "ANTHROPIC_API_KEY")
	start := time.Now()
	h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, "Not logged in", "claude login", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
	if took := time.Since(start); took > 45*time.Second {
		t.Errorf("took %s to give up", took)
	}
	if n := len(h.API.Requests()); n != 0 {
		t.Errorf("%d API requests, want none", n)
	}
	// doctor says the same, before any run.
	if r := h.run("doctor"); r.Code != 2 || !strings.Contains(r.Stdout, "claude login") {
		t.Errorf("doctor does not report the missing login: %s", r)
	}
}

// An API that cannot be reached before any session got an answer is a
// setup error: exit 2 in seconds (not after the CLI's minutes of retries),
// naming what to check; doctor fails on it as fast.
func TestAPIUnreachable(t *testing.T) {
	// Half the CLI's own retries (10, backoff doubling from 0.5 s up to
	// ~40 s: about 3 minutes); debussy stops at the third. It was 30 s: a
	// loaded 2-core machine took 44 s for doctor's two start-ups of the CLI.
	const unreachableBound = 90 * time.Second
	claudetest.CLISensitive(t, "the CLI's retries when the API cannot be reached")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	// A closed port: the connection is refused.
	h.Env = append(withoutVar(h.Env, "ANTHROPIC_BASE_URL"), "ANTHROPIC_BASE_URL=http://127.0.0.1:9")
	start := time.Now()
	h.failFast([]string{"run", "plan/MASTER_PLAN.md"}, "could not connect to the API", "ANTHROPIC_BASE_URL=http://127.0.0.1:9")
	if took := time.Since(start); took > unreachableBound {
		t.Errorf("run took %s to give up, want < %s", took, unreachableBound)
	}
	start = time.Now()
	r := h.run("doctor")
	if r.Code != 2 || !strings.Contains(r.Stdout, "could not connect to the API") || strings.Contains(r.Stdout, "a run would work here") {
		t.Errorf("doctor does not fail on the unreachable API: %s", r)
	}
	if took := time.Since(start); took > unreachableBound {
		t.Errorf("doctor took %s to give up, want < %s", took, unreachableBound)
	}
}

// cutSessionOff puts a proxy before the fake API that drops the
// connection of every request of the run's first session after its first
// one, as a network that goes away mid-session does; the sessions after it
// pass.
func cutSessionOff(t *testing.T, h *harness) {
	t.Helper()
	var mu sync.Mutex
	first := "" // the first session's first message
	h.proxyAPI(func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		// The session is its first message's text (the CLI moves its
		// cache_control marks from request to request), its turn the
		// responses so far.
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		session, answered := "", 0
		for i, m := range req.Messages {
			switch {
			case i == 0:
				for _, b := range m.Content {
					session += b.Text
				}
			case m.Role == "assistant":
				answered++
			}
		}
		mu.Lock()
		if first == "" {
			first = session
		}
		drop := answered > 0 && session == first
		mu.Unlock()
		hj, ok := w.(http.Hijacker)
		if !drop || !ok {
			return false
		}
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
		return true
	})
}

// An API that goes away after it answered (a network lost mid-run) is no
// setup error: the run reached it, so the session is retried from a
// checkpoint after a backoff, the work kept, and the plan finishes.
func TestAPIUnreachableAfterAnswersRetries(t *testing.T) {
	claudetest.CLISensitive(t, "how the CLI fails when the API goes away")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(20000, fakeapi.Write("a.txt", "alpha\n")),
			turn(21000, fakeapi.Text("never answered: the connection drops")),
		}},
		{Name: "p1-retry", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(22000, done("1")),
			turn(23000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha"}}, "retry_backoff: 1s\n")
	cutSessionOff(t, h)
	h.Env = append(h.Env, "CLAUDE_CODE_MAX_RETRIES=1") // one retry of the CLI's own, not ten
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	// The CLIs word the cut session differently ("… (ECONNRESET)" on
	// 2.1.197 and 2.1.332, "… (UND_ERR_SOCKET)" on 2.1.112, run by node);
	// failure classifies each as unreachable (TestClassify), and that class
	// is what this test holds to, with a reason given (the event always has
	// why: an empty one is what fails). Before any answer it would be exit 2
	// (TestAPIUnreachable).
	retries := h.events("session_retry")
	if len(retries) != 1 || retries[0]["failure"] != "unreachable" || retries[0]["why"] == "" {
		t.Errorf("session_retry events %v, want one for the dropped connection, classed unreachable", retries)
	}
	if ended := h.events("session_ended"); len(ended) != 2 || ended[0]["failure"] != "unreachable" || ended[1]["failure"] != "" {
		t.Errorf("session_ended events %v, want the cut session's class unreachable, the retry's none", ended)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 2 {
		t.Errorf("%d sessions, want 2 (the retry)", n)
	}
	if !strings.Contains(h.git("ls-files"), "a.txt") {
		t.Error("the work before the connection dropped was not committed")
	}
}

// permission_mode acceptEdits, the fix the root refusal of
// bypassPermissions names, runs the plan — as root without IS_SANDBOX too:
// debussy's own commands are allowed whatever the mode, and allowed_tools
// reaches claude for the agent's other commands. The command is git's:
// acceptEdits lets touch, echo and ls through by itself but asks for git
// ("This command requires approval"), as root or not (measured on 2.1.197
// and 2.1.332), so the test runs as any user.
func TestAcceptEditsAsRoot(t *testing.T) {
	claudetest.CLISensitive(t, "permission_mode acceptEdits and allowed_tools")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
		turn(20000, fakeapi.Write("a.txt", "alpha\n")),
		turn(21000, fakeapi.Bash("git --version > b.txt")),
		turn(22000, fakeapi.Bash(`debussy progress "a and b written"`)),
		turn(23000, done("1")),
		turn(24000, fakeapi.Text("Done.")),
	}}}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"both: `test -f a.txt && test -f b.txt`"}}},
		"permission_mode: acceptEdits\nallowed_tools: [\"Bash(git:*)\"]\n")
	h.Env = withoutSandbox(h.Env)
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if n := len(h.sessionsOf(phaseMatch("1"))); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
	for _, req := range h.API.Requests() {
		for _, res := range req.ToolResults {
			if strings.Contains(res, "requires approval") {
				t.Errorf("a tool was refused: %q", res)
			}
		}
	}
	if !strings.Contains(h.runFiles("progress.jsonl"), "a and b written") {
		t.Error("debussy progress did not run")
	}
}

// Ctrl-C while waiting for a usage limit's reset ends the run at once with
// exit 130, the work committed and nothing sent; the ledger keeps the reset,
// so a rerun waits for it (TestUsageLimitWithoutWaiting).
func TestUsageLimitWaitInterrupted(t *testing.T) {
	claudetest.OncePerSuite(t, "Ctrl-C during debussy's own wait")
	const limit = time.Minute
	h := newHarness(t, limitScript(limit), []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.Env = oauth(h.Env)
	cmd, stdout, stderr := h.command("run", "plan/MASTER_PLAN.md")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stderr.String(), "waiting — Ctrl-C stops") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("debussy never waited:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := h.wait(cmd, stdout, stderr, time.Minute)
	if r.Code != 130 {
		t.Fatalf("want exit 130: %s", r)
	}
	if took := time.Since(sent); took > 10*time.Second {
		t.Errorf("Ctrl-C during the wait took %s", took)
	}
	if !strings.Contains(h.git("ls-files"), "a.txt") {
		t.Error("the work before the limit was not committed")
	}
	first, last := h.limitHit()
	if first != last || h.requestsDuring(last, time.Now()) != 0 {
		t.Errorf("requests were sent during the limit")
	}
	ph := h.status()["phases"].([]any)[0].(map[string]any)
	if w, _ := ph["waiting_until"].(string); w == "" || ph["limit"] != "five_hour" {
		t.Errorf("the ledger does not keep the reset for the rerun: %v", ph)
	}
}

// A weekly limit on one model family (seven_day_opus) with fallback_model
// set: the phase goes on at once with the fallback, recorded in the ledger
// and events, instead of waiting days.
func TestUsageLimitFallbackModel(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's choice of the fallback model")
	h := newHarness(t, limitScriptOf("seven_day_opus", 10*time.Minute), []phaseSpec{{ID: "1", Title: "Alpha"}},
		"model: claude-opus-4-8\nfallback_model: claude-sonnet-4-5\n")
	h.Env = oauth(h.Env)
	start := time.Now()
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if took := time.Since(start); took > 3*time.Minute {
		t.Errorf("took %s: it waited for the limit", took)
	}
	if !strings.Contains(r.Stderr, "going on with fallback_model claude-sonnet-4-5") {
		t.Errorf("stderr does not name the fallback:\n%s", r.Stderr)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 || sessions[0][0].Model != "claude-opus-4-8" || sessions[1][0].Model != "claude-sonnet-4-5" {
		var models []string
		for _, s := range sessions {
			models = append(models, s[0].Model)
		}
		t.Errorf("sessions' models %v, want claude-opus-4-8 then claude-sonnet-4-5", models)
	}
	ph := h.status()["phases"].([]any)[0].(map[string]any)
	if ph["model"] != "claude-sonnet-4-5" || ph["restarts"].(float64) != 0 {
		t.Errorf("phase: %v; want the fallback model recorded and no restart counted", ph)
	}
	if !strings.Contains(h.runFiles("events.jsonl"), `"fallback_model"`) {
		t.Error("events.jsonl has no fallback_model event")
	}
}
