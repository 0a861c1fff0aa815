package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// blocked → exit 1 with the agent's reason, nothing retried, later phases
// not started.
func TestRunBlockedStops(t *testing.T) {
	claudetest.CLISensitive(t, "the blocked signal read from the session")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash(`debussy done --phase 1 --status blocked --reason "needs the staging API key"`)),
			turn(11000, fakeapi.Text("Blocked.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Keys"}, {ID: "2", Title: "Later", Deps: []string{"1"}}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if !strings.Contains(r.Stderr, "needs the staging API key") {
		t.Errorf("the agent's reason is not shown:\n%s", r.Stderr)
	}
	if n := len(h.API.Sessions()); n != 1 {
		t.Errorf("want exactly 1 session (no retry, phase 2 not started), got %d", n)
	}
	// The end says how to answer, and the log calls the session blocked,
	// not done or completed.
	for _, want := range []string{`debussy answer --phase 1 "…"`, `--answer "…"`, "phase 1 asks: needs the staging API key",
		"the agent signalled the phase blocked", "outcome=\"blocked"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	for _, never := range []string{"signalled `debussy done`", "outcome=completed"} {
		if strings.Contains(r.Stderr, never) {
			t.Errorf("stderr says %q of a blocked session:\n%s", never, r.Stderr)
		}
	}
}

// A rerun without an answer leaves the blocked phase blocked: exit 1, no
// session, no commit, the question and the answer command named again;
// --resume-blocked resumes it unanswered.
func TestRunBlockedRerunWithoutAnswer(t *testing.T) {
	claudetest.OncePerSuite(t, "a blocked phase rerun without an answer")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "blocks", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash(`debussy done --phase 1 --status blocked --reason "which region?"`)),
			turn(11000, fakeapi.Text("Blocked.")),
		}},
		{Name: "resumed", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")),
			turn(11000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Region"}}, "")
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 1 {
		t.Fatalf("want exit 1 (blocked): %s", r)
	}
	head := h.git("rev-parse", "HEAD")
	for range 2 {
		r := h.run("run", "plan/MASTER_PLAN.md")
		if r.Code != 1 || !strings.Contains(r.Stderr, `debussy answer --phase 1 "…"`) || !strings.Contains(r.Stderr, "which region?") ||
			!strings.Contains(r.Stderr, "still blocked") {
			t.Fatalf("the rerun without an answer: want exit 1, still blocked, naming the question and debussy answer: %s", r)
		}
		if n := len(h.API.Sessions()); n != 1 {
			t.Fatalf("%d sessions; the unanswered rerun must start none", n)
		}
	}
	if now := h.git("rev-parse", "HEAD"); now != head {
		t.Errorf("the unanswered reruns committed: %s → %s", head, now)
	}
	st := h.run("status")
	if !strings.Contains(st.Stdout, "phase 1 is blocked: which region?") {
		t.Errorf("status after the reruns:\n%s", st.Stdout)
	}
	// The answer given now goes to the question the first run asked: the
	// next run resumes the phase with it.
	if a := h.run("answer", "eu-west-1"); a.Code != 0 {
		t.Fatalf("answer: %s", a)
	}
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 0 {
		t.Fatalf("the answered rerun: want exit 0: %s", r)
	}
	if s := h.sessionsOf("eu-west-1"); len(s) != 1 || !strings.Contains(s[0], "which region?") {
		t.Errorf("want one session whose prompt holds the question and the answer; sessions: %d", len(h.API.Sessions()))
	}

	// --resume-blocked resumes it unanswered.
	h = newHarness(t, script, []phaseSpec{{ID: "1", Title: "Region"}}, "")
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 1 {
		t.Fatalf("want exit 1 (blocked): %s", r)
	}
	r := h.run("run", "plan/MASTER_PLAN.md", "--resume-blocked")
	if r.Code != 0 || len(h.API.Sessions()) != 2 {
		t.Fatalf("--resume-blocked: want exit 0 and a second session: %s", r)
	}
}

// A failing gate → a remediation session whose prompt carries the gate's
// output → the agent fixes it → exit 0.
func TestRunGateFailureRemediates(t *testing.T) {
	claudetest.OncePerSuite(t, "gates and remediation")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "first", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo 'value=wrong' > out.txt && debussy done --phase 1")),
			turn(11000, fakeapi.Text("Done, I think.")),
		}},
		{Name: "fix", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo 'value=right' > out.txt && debussy done --phase 1")),
			turn(11000, fakeapi.Text("Fixed.")),
		}},
	}}
	gate := "value: `grep -q value=right out.txt || { echo \"GATE-EVIDENCE: out.txt says $(cat out.txt)\"; exit 3; }`"
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Value", Gates: []string{gate}}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 {
		t.Fatalf("want 2 sessions, got %d", len(s))
	}
	for _, want := range []string{"GATE-EVIDENCE: out.txt says value=wrong", "Exit code: 3", "grep -q value=right out.txt", "Remediation 1/2"} {
		if !strings.Contains(s[1], want) {
			t.Errorf("remediation prompt lacks %q:\n%s", want, s[1])
		}
	}
}

// Gates that keep failing: the phase fails after max_retries with the last
// gate output in the message — asked for with --log-text: a piped log
// carries structure only (issue 53) — work committed as failed.
func TestRunGateFailsAfterRetries(t *testing.T) {
	claudetest.OncePerSuite(t, "gate retries and the failed commit")
	h := newHarness(t, fakeapi.Script{Default: &fakeapi.Conversation{Turns: []fakeapi.Turn{
		turn(10000, fakeapi.Bash("echo attempt >> attempts.txt && debussy done --phase 1")),
		turn(11000, fakeapi.Text("Done.")),
	}}}, []phaseSpec{{ID: "1", Title: "Never", Gates: []string{"never: `echo NOPE-OUTPUT; false`"}}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md", "--max-retries", "1", "--log-text")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if !strings.Contains(r.Stderr, "NOPE-OUTPUT") {
		t.Errorf("failure message lacks the gate output:\n%s", r.Stderr)
	}
	if ev := h.git("log", "-1", "--format=%(trailers:key=Debussy-Event,valueonly)"); strings.TrimSpace(ev) != "failed" {
		t.Errorf("last commit's event = %q, want failed", ev)
	}
	if n := len(h.API.Sessions()); n != 2 {
		t.Errorf("want 2 sessions (1 + 1 retry), got %d", n)
	}
}

// A session that ends without `debussy done` gets a remediation session
// that says so.
func TestRunNoSignalRemediates(t *testing.T) {
	claudetest.OncePerSuite(t, "the remediation session (the CLI's Stop hook: TestStagesStopHookAsksForDone)")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "forgot", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo x > x.txt")), turn(11000, fakeapi.Text("All finished!")),
		}},
		{Name: "signal", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Forgetful"}}, "")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 || !strings.Contains(s[1], "without running `debussy done --phase 1`") {
		t.Errorf("want a remediation session naming the missing signal; sessions: %d\n%s", len(s), strings.Join(s, "\n====\n"))
	}
}

// A crash of claude (killed mid-session, no result) is retried with a
// checkpoint; the retry completes.
func TestRunCrashRetried(t *testing.T) {
	claudetest.OncePerSuite(t, "the retry after a crash, which is a kill whatever the CLI")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "crash", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo before-crash > before.txt")),
			// The Bash tool's parent is the claude process: kill it.
			turn(11000, fakeapi.Bash("kill -9 $PPID")),
		}},
		{Name: "retry", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	// sandbox: off — in the sandbox the agent's commands run in a PID
	// namespace of their own (claude's sandbox): claude is not theirs to
	// kill. This test is about the retry.
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Crashy"}}, "retry_backoff: 100ms\nsandbox: off\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "crashed") || !strings.Contains(r.Stderr, "retrying") {
		t.Errorf("stderr does not report the crash and retry:\n%s", r.Stderr)
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 || !strings.Contains(s[1], "before.txt") {
		t.Errorf("the retry should start from a checkpoint naming before.txt; sessions %d", len(s))
	}
	h.noOrphans()
}

// 529 on every call: claude's own retries surface as warnings, then the
// session fails; debussy retries it a few times and fails clearly.
func TestRunOverloadedExhausted(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's own retries on 529")
	h := newHarness(t, fakeapi.Script{Default: &fakeapi.Conversation{Turns: []fakeapi.Turn{
		{Status: 529, Repeat: 1000},
	}}}, []phaseSpec{{ID: "1", Title: "Overloaded"}}, "retry_backoff: 100ms\n")
	h.Env = append(h.Env, "CLAUDE_CODE_MAX_RETRIES=1") // keep the CLI's own backoff short
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{"API error: claude retries", "api_status=529", "retrying", "session failed 4 times"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}

// A dirty tracked tree at start → exit 2 naming the files; no session.
func TestRunRefusesDirtyTree(t *testing.T) {
	claudetest.OncePerSuite(t, "the dirty-tree check")
	h := newHarness(t, fakeapi.Script{}, []phaseSpec{{ID: "1", Title: "Any"}}, "")
	h.write("README.md", "edited by the user\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 2 {
		t.Fatalf("want exit 2: %s", r)
	}
	if !strings.Contains(r.Stderr, "README.md") || !strings.Contains(r.Stderr, "--allow-dirty") {
		t.Errorf("stderr should name README.md and --allow-dirty:\n%s", r.Stderr)
	}
	if n := len(h.API.Requests()); n != 0 {
		t.Errorf("a session started: %d API requests", n)
	}
}

// Ctrl-C during a long tool → exit 130 within seconds, work kept, no
// orphans; the rerun resumes with a checkpoint and completes.
func TestRunInterruptAndResume(t *testing.T) {
	claudetest.CLISensitive(t, "an interrupt during a tool")
	h, cmd, stdout, stderr := startLongTool(t)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := h.wait(cmd, stdout, stderr, time.Minute)
	if r.Code != 130 {
		t.Fatalf("want exit 130: %s", r)
	}
	if took := time.Since(sent); took > 20*time.Second {
		t.Errorf("Ctrl-C took %s to exit", took)
	}
	if !strings.Contains(h.git("ls-files"), "kept.txt") {
		t.Error("the work before Ctrl-C was not committed")
	}
	h.noOrphans()

	r = h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("rerun: want exit 0: %s", r)
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 || !strings.Contains(s[1], "kept.txt") || !strings.Contains(strings.ToLower(s[1]), "resum") {
		t.Errorf("the rerun should resume from a checkpoint naming kept.txt; sessions: %d\n%s", len(s), s[len(s)-1])
	}
}

// kill -9 of debussy: the next run takes over the stale lock, marks the old
// run interrupted, kills what it left, and resumes with a checkpoint.
func TestRunResumesAfterKill9(t *testing.T) {
	claudetest.OncePerSuite(t, "resuming from the ledger after kill -9")
	h, cmd, stdout, stderr := startLongTool(t)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = h.wait(cmd, stdout, stderr, time.Minute)

	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("rerun: want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "interrupted") {
		t.Errorf("the rerun does not say the old run was interrupted:\n%s", r.Stderr)
	}
	if !strings.Contains(h.git("ls-files"), "kept.txt") {
		t.Error("the killed run's work was not committed")
	}
	s := h.sessionsOf(phaseMatch("1"))
	if len(s) != 2 || !strings.Contains(s[1], "kept.txt") {
		t.Errorf("the rerun should resume from a checkpoint naming kept.txt; sessions: %d", len(s))
	}
	h.noOrphans()
}

func waitFor(t *testing.T, cond func() bool, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An API that hangs: the idle watchdog kills the session's group, and the
// session is retried; the retry completes.
func TestRunIdleTimeoutRetried(t *testing.T) {
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "hang", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo before > before.txt")),
			{Hang: true},
		}},
		{Name: "retry", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	// The idle clock starts with the process, and on CI's loaded two cores
	// the CLI once took over 6 s to print its first line: with
	// idle_timeout 6s the retries were cut before they began. 20 s is
	// far above any start seen, and only the hung session waits it out.
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Hang"}}, "idle_timeout: 20s\nretry_backoff: 100ms\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	if !strings.Contains(r.Stderr, "idle timeout") || !strings.Contains(r.Stderr, "retrying") {
		t.Errorf("stderr does not report the idle timeout and the retry:\n%s", r.Stderr)
	}
	h.noOrphans()
}

// startLongTool starts a run whose first session writes kept.txt and then
// runs a 300 s tool, and returns once that tool is running. The session
// after it (a resume) signals done.
func startLongTool(t *testing.T) (*harness, *exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "long", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Write("kept.txt", "kept\n")),
			turn(11000, fakeapi.Bash("touch started.txt; "+pause("300"))),
		}},
		{Name: "resumed", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, done("1")), turn(11000, fakeapi.Text("ok")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Long"}}, "")
	cmd, stdout, stderr := h.command("run", "plan/MASTER_PLAN.md")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return h.exists("started.txt") }, time.Minute)
	return h, cmd, stdout, stderr
}

// One total per meaning after an interrupted and resumed run: the rerun's
// summary, `status` and `status --json` (whose top-level cost_usd is this
// run's) say the same "this run" and "plan, across its runs" figures.
func TestTotalsAfterResume(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's own totals")
	h, cmd, stdout, stderr := startLongTool(t)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r := h.wait(cmd, stdout, stderr, time.Minute); r.Code != 130 {
		t.Fatalf("want exit 130: %s", r)
	}
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("rerun: want exit 0: %s", r)
	}
	totals := func(text string) []string {
		var out []string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "this run: ") || strings.HasPrefix(line, "plan, across its runs: ") {
				out = append(out, line)
			}
		}
		return out
	}
	summary := totals(r.Stdout)
	st := h.run("status")
	if len(summary) != 2 || strings.Join(summary, "\n") != strings.Join(totals(st.Stdout), "\n") {
		t.Errorf("the summary's totals %q differ from status's %q (want this run and the plan's, once each)", summary, totals(st.Stdout))
	}
	js := h.status()
	cost, _ := js["cost_usd"].(float64)
	planCost, _ := js["plan_cost_usd"].(float64)
	if len(summary) == 2 && (!strings.HasSuffix(summary[0], fmt.Sprintf("$%.2f", cost)) || !strings.HasSuffix(summary[1], fmt.Sprintf("$%.2f", planCost))) {
		t.Errorf("status --json cost_usd %.4f / plan_cost_usd %.4f differ from the summary's %q", cost, planCost, summary)
	}
	// The phase's spend across its runs: once in each, the same words.
	across := func(text string) []string {
		var out []string
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "across its runs (") {
				out = append(out, strings.TrimPrefix(line, "phase 1: "))
			}
		}
		return out
	}
	if a, b := across(r.Stdout), across(st.Stdout); len(a) != 1 || strings.Join(a, "") != strings.Join(b, "") {
		t.Errorf("the phase across its runs: summary %q, status %q (want one line each, equal)", a, b)
	}
	// The report's header says this run's and the plan's as the summary
	// does; its phase section the phase's across its runs.
	rep := h.run("report", "--md")
	if rep.Code != 0 {
		t.Fatalf("report --md: %s", rep)
	}
	if len(summary) == 2 && !strings.Contains(rep.Stdout, summary[0]+" · "+summary[1]) {
		t.Errorf("the report's header differs from the summary's %q:\n%s", summary, rep.Stdout)
	}
	if a := across(r.Stdout); len(a) == 1 && !strings.Contains(rep.Stdout, "\n"+a[0]+"\n") {
		t.Errorf("the report lacks the phase across its runs %q:\n%s", a[0], rep.Stdout)
	}
}
