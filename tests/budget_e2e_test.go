package tests

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// climb is one session spending a 100K-token phase budget: each turn's
// context is one API call's processed tokens, so the budget reaches 30,
// 60, 75 (a note), 91 (a firmer note) and 101 % (exhausted) with the
// fifth call. What follows only an advisory run gets to.
func climb() []fakeapi.Turn {
	return []fakeapi.Turn{
		turn(30000, fakeapi.Bash("echo a > a.txt")),
		turn(30000, fakeapi.Bash("echo b > b.txt")),
		turn(15000, fakeapi.Bash("echo c > c.txt")),
		turn(16000, fakeapi.Bash("echo d > d.txt")),
		turn(10000, fakeapi.Bash("echo e > e.txt")),
		turn(5000, done("1")),
		turn(5000, fakeapi.Text("ok")),
	}
}

func budgetScript() fakeapi.Script {
	return fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: climb()},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{turn(5000, done("2")), turn(5000, fakeapi.Text("ok"))}},
	}}
}

var twoPhases = []phaseSpec{{ID: "1", Title: "Spend"}, {ID: "2", Title: "After"}}

// phaseEconomics is status --json's economics of phase i (0-based).
func phaseEconomics(t *testing.T, st map[string]any, i int) map[string]any {
	t.Helper()
	phases, _ := st["phases"].([]any)
	if len(phases) <= i {
		t.Fatalf("status has %d phases", len(phases))
	}
	p, _ := phases[i].(map[string]any)
	e, _ := p["economics"].(map[string]any)
	if e == nil {
		t.Fatalf("phase %d has no economics: %v", i+1, p)
	}
	return e
}

// bodies says which requests of a session carry s.
func bodies(reqs []fakeapi.Request, s string) []int {
	var out []int
	for i, r := range reqs {
		if strings.Contains(string(r.Body), s) {
			out = append(out, i)
		}
	}
	return out
}

// A strict phase token budget stops the phase near the budget: exit 1
// with a message naming the budget, no restart, phase 2 not started, the
// work committed, status --json showing the budget.
func TestBudgetStrictStops(t *testing.T) {
	h := newHarness(t, budgetScript(), twoPhases, "model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{"budget exhausted: phase tokens 10", "of 100K", "budget.phase.tokens", "--budget-tokens"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 1 {
		t.Fatalf("want 1 session of phase 1 (no restart), got %d", len(sessions))
	}
	if n := len(sessions[0]); n != 5 {
		t.Errorf("phase 1 made %d requests, want 5 (none after the stop)", n)
	}
	if got := bodies(sessions[0], "Budget: "); len(got) == 0 {
		t.Error("no request carried the 70 % note")
	}
	if len(h.requestsOf(phaseMatch("2"))) != 0 {
		t.Error("phase 2 started")
	}
	if !h.exists("e.txt") {
		t.Error("the running tool's work is missing")
	}
	if st := h.git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("work left uncommitted:\n%s", st)
	}
	if files := h.git("log", "--name-only", "--format=", "-3"); !strings.Contains(files, "e.txt") {
		t.Errorf("e.txt is in none of the last commits:\n%s", files)
	}
	st := h.status()
	e := phaseEconomics(t, st, 0)
	limits, _ := e["limits"].(map[string]any)
	if limits["tokens"] != float64(100000) || e["exhausted"] != true || e["level"] != "exhausted" || e["enforcement"] != "strict" {
		t.Errorf("phase 1 economics: %v", e)
	}
	phases := st["phases"].([]any)
	if p1, p2 := phases[0].(map[string]any), phases[1].(map[string]any); p1["status"] != "failed" || p1["restarts"] != float64(0) || p2["status"] != "pending" {
		t.Errorf("statuses %v (restarts %v), %v", p1["status"], p1["restarts"], p2["status"])
	}
	if text := h.run("status"); !strings.Contains(text.Stdout, "budget tokens 100K: 10") || !strings.Contains(text.Stdout, "exhausted") {
		t.Errorf("status text lacks the budget:\n%s", text.Stdout)
	}
}

// The strict stop when the 5th response lingers after its tool_use, so the
// tool is done (and its PostToolUse answered continue:false) before the
// response is: the pinned 2.1.197 sends a 6th request anyway (CI's flake of
// TestBudgetExtendedOnTerminal, under load). The agent's `debussy done` in
// that response is refused, so the phase still fails on its budget.
func TestBudgetStrictStopsWhenTheCLIGoesOn(t *testing.T) {
	claudetest.CLISensitive(t, "a PostToolUse continue:false answered before the response ends")
	script := budgetScript()
	script.Conversations[0].Turns[4].Linger = fakeapi.Duration(800 * time.Millisecond)
	h := newHarness(t, script, twoPhases, "model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 || !strings.Contains(r.Stderr, "budget exhausted: phase tokens 10") {
		t.Fatalf("want exit 1 on the budget: %s", r)
	}
	if n := len(h.requestsOf(phaseMatch("1"))[0]); n > 6 {
		t.Errorf("phase 1 made %d requests, want 5, or 6 from a CLI that goes on after a stop", n)
	} else if ignored := h.events(string(runner.MarkHookStopIgnored)); (n == 6) != (len(ignored) == 1) {
		t.Errorf("%d requests, hook_stop_ignored events %v", n, ignored)
	}
	if p1 := h.status()["phases"].([]any)[0].(map[string]any); p1["status"] != "failed" {
		t.Errorf("phase 1 %v, want failed: the done after the stop counted", p1["status"])
	}
	if !h.exists("e.txt") {
		t.Error("the stopped tool's work is missing")
	}
	if st := h.git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("work left uncommitted:\n%s", st)
	}
}

// Advisory: the same spend completes; the fake API sees the notes at 70
// and 90 % and no refusal.
func TestBudgetAdvisoryNotes(t *testing.T) {
	claudetest.OncePerSuite(t, "an advisory budget's notes (TestBudgetStrictStops and TestBudgetCostMatchesCLI run on both)")
	h := newHarness(t, budgetScript(), twoPhases, "model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n  enforcement: advisory\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 1 {
		t.Fatalf("want 1 session, got %d", len(sessions))
	}
	s := sessions[0]
	// Request i follows call i: the note of the third call (75 %) rides on
	// the fourth request, the firmer one (91 %) on the fifth.
	note, firm := bodies(s, "Budget: "), bodies(s, "Budget nearly spent")
	if len(note) == 0 || note[0] != 3 || len(firm) == 0 || firm[0] != 4 {
		t.Errorf("the 70 %% note rides on requests %v (want from 3), the 90 %% one on %v (want from 4)", note, firm)
	}
	if got := bodies(s, "Refused: the budget"); len(got) > 0 {
		t.Errorf("advisory refused tools: requests %v", got)
	}
	if len(h.requestsOf(phaseMatch("2"))) != 1 {
		t.Error("phase 2 did not run")
	}
	e := phaseEconomics(t, h.status(), 0)
	if e["enforcement"] != "advisory" || e["exhausted"] == true || e["level"] != "exhausted" {
		t.Errorf("phase 1 economics: %v", e)
	}
}

// The cost debussy computes from its price table matches the CLI's own
// total_cost_usd within 1 % over several turns with every kind of token
// (the CLI prices claude-sonnet-4-5 at $3/$15, cache writes 1.25×, reads
// 0.1× input — the defaults debussy uses).
func TestBudgetCostMatchesCLI(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's own total_cost_usd")
	u := func(in, write, read, out int64) fakeapi.Usage {
		return fakeapi.Usage{Input: in, CacheCreation: write, CacheRead: read, Output: out}
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			{Usage: u(3000, 20000, 0, 400), Blocks: []fakeapi.Block{fakeapi.Bash("echo a > a.txt")}},
			{Usage: u(500, 1500, 20000, 900), Blocks: []fakeapi.Block{fakeapi.Bash("echo b > b.txt")}},
			{Usage: u(800, 2500, 21500, 1200), Blocks: []fakeapi.Block{fakeapi.Write("c.txt", "gamma\n")}},
			{Usage: u(200, 900, 24000, 300), Blocks: []fakeapi.Block{done("1")}},
			{Usage: u(100, 400, 24900, 50), Blocks: []fakeapi.Block{fakeapi.Text("ok")}},
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Cost"}}, "model: claude-sonnet-4-5\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	e := phaseEconomics(t, h.status(), 0)
	computed, _ := e["cost_usd"].(float64)
	reported, _ := e["reported_cost_usd"].(float64)
	t.Logf("computed $%.6f, CLI $%.6f, tokens %v, turns %v", computed, reported, e["tokens"], e["api_turns"])
	if reported <= 0 || math.Abs(computed-reported) > 0.01*reported {
		t.Errorf("computed $%.6f and the CLI's $%.6f differ by more than 1 %%", computed, reported)
	}
	if turns, _ := e["api_turns"].(float64); turns < 5 {
		t.Errorf("api_turns %v, want at least the 5 scripted", e["api_turns"])
	}
}

// An adaptive phase records an evaluation at each quarter of its budget;
// at 100 % with its task undone it restarts with the lessons so far.
func TestBudgetAdaptiveRestarts(t *testing.T) {
	claudetest.OncePerSuite(t, "an adaptive budget's evaluations and restart")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "s1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(30000, fakeapi.Bash("echo a > a.txt")), // 30 %: quarter 1
			turn(30000, fakeapi.Bash("echo b > b.txt")), // 60 %: quarter 2
			turn(20000, fakeapi.Bash("echo c > c.txt")), // 80 %: quarter 3
			turn(25000, fakeapi.Bash("echo d > d.txt")), // 105 %: quarter 4, restart
			turn(5000, fakeapi.Text("never asked")),
		}},
		{Name: "s2", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(10000, done("1")), turn(10000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Adaptive"}},
		"model: claude-sonnet-4-5\nbudget:\n  phase: {tokens: 100000}\n  enforcement: adaptive\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions (one adaptive restart), got %d", len(sessions))
	}
	if p := sessions[1][0].FirstUser; !strings.Contains(p, "Lessons so far") || !strings.Contains(p, "0 of 1 tasks done") {
		t.Errorf("the restart prompt lacks the lessons:\n%s", p)
	}
	e := phaseEconomics(t, h.status(), 0)
	qs, _ := e["quarters"].([]any)
	if len(qs) != 4 {
		t.Fatalf("quarters %v, want 4", e["quarters"])
	}
	for i, q := range qs {
		m := q.(map[string]any)
		want := "continue"
		if i == 3 {
			want = "restart"
		}
		if m["decision"] != want || m["tasks_total"] != float64(1) || m["at"] == nil {
			t.Errorf("quarter %d: %v, want %s", i+1, m, want)
		}
	}
	if n := strings.Count(h.runFiles("events.jsonl"), `"budget_quarter"`); n != 4 {
		t.Errorf("events.jsonl has %d budget_quarter events, want 4", n)
	}
}

// A duration budget stops a phase whose tool runs on in silence: no
// stream event arrives during the sleep, the timer fires, the tool is
// interrupted after stop_grace and the run ends exit 1 naming the time
// budget, phase 2 not started.
func TestBudgetDurationSilentTool(t *testing.T) {
	claudetest.OncePerSuite(t, "the duration budget")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(1000, fakeapi.Bash(pause("120"))), turn(1000, done("1")), turn(1000, fakeapi.Text("ok"))}},
		{Name: "p2", Match: phaseMatch("2"), Turns: []fakeapi.Turn{turn(1000, done("2")), turn(1000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, twoPhases, "model: claude-sonnet-4-5\nstop_grace: 1s\nbudget:\n  phase: {duration: 6s}\n")
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	for _, want := range []string{"budget exhausted: phase time", "of 6s", "budget.phase.duration"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if len(h.requestsOf(phaseMatch("2"))) != 0 {
		t.Error("phase 2 started")
	}
	e := phaseEconomics(t, h.status(), 0)
	if e["exhausted"] != true || e["dimension"] != "duration" {
		t.Errorf("phase 1 economics: %v", e)
	}
}
