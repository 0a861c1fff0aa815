package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// hookReceiver is a loopback webhook: it keeps every notification debussy
// POSTs, decoded, and the raw bodies (to look for what must never arrive).
type hookReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []map[string]any
	raw    []string
}

func newHookReceiver(t *testing.T, answer func(w http.ResponseWriter)) *hookReceiver {
	rc := &hookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		rc.raw = append(rc.raw, string(body))
		rc.mu.Unlock()
		if answer != nil {
			answer(w)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) got() ([]map[string]any, string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]map[string]any(nil), rc.events...), strings.Join(rc.raw, "\n")
}

// names lists the events' "event" fields in arrival order.
func names(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		s, _ := ev["event"].(string)
		out = append(out, s)
	}
	return out
}

// A phase blocks on a question → the receiver hears `blocked` with the
// question and the command that answers it, and none of the tool's output
// or secrets; `debussy answer` records the answer; the rerun resumes the
// phase with the question and answer in its first prompt, as a new
// attempt, and the receiver hears `completed`.
func TestBlockedAnsweredResumes(t *testing.T) {
	const toolSecret = "ghp_Zq8LmN3xT5vB7kR2wY4pA6sD9fG1hJ0cE2uI"
	const reasonSecret = "AKIAQWERTYUIOPASDFGH"
	const answer = "the key is in vault at secret/staging/api"
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "blocks", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash("echo TOOL-OUTPUT-MARKER "+toolSecret)),
			turn(11000, fakeapi.Bash(`debussy done --phase 1 --status blocked --reason "needs the staging API key (the old one `+reasonSecret+` is revoked)"`)),
			turn(12000, fakeapi.Text("Blocked.")),
		}},
		{Name: "answered", Match: answer, Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Write("key.txt", "used\n")),
			turn(11000, done("1")),
			turn(12000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Keys"}}, "")
	rc := newHookReceiver(t, nil)

	r := h.run("run", "plan/MASTER_PLAN.md", "--notify", rc.URL+"/hook")
	if r.Code != 1 {
		t.Fatalf("want exit 1 (blocked): %s", r)
	}
	evs, raw := rc.got()
	if got := names(evs); len(got) != 1 || got[0] != "blocked" {
		t.Fatalf("notifications %v, want [blocked]\n%s", got, raw)
	}
	ev := evs[0]
	if q, _ := ev["question"].(string); !strings.Contains(q, "needs the staging API key") {
		t.Errorf("question = %q", q)
	}
	if cmd, _ := ev["answer_command"].(string); !strings.HasPrefix(cmd, "debussy answer --phase 1 ") {
		t.Errorf("answer_command = %q", cmd)
	}
	if ev["phase"] != "1" || ev["run"] == "" || ev["summary"] == nil {
		t.Errorf("blocked event lacks its facts: %v", ev)
	}
	if sum, _ := ev["summary"].(map[string]any); sum != nil {
		if md, _ := sum["markdown"].(string); !strings.Contains(md, "— blocked") || strings.Contains(md, "— running") {
			t.Errorf("the summary's heading should say blocked:\n%s", md)
		}
	}
	for _, never := range []string{toolSecret, reasonSecret, "TOOL-OUTPUT-MARKER"} {
		if strings.Contains(raw, never) {
			t.Errorf("%q reached the receiver:\n%s", never, raw)
		}
	}

	// status shows the question and the command.
	st := h.run("status")
	for _, want := range []string{"phase 1 is blocked: needs the staging API key", `debussy answer --phase 1 "…"`} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("status does not say %q:\n%s", want, st.Stdout)
		}
	}
	// A phase that is not blocked takes no answer.
	if bad := h.run("answer", "--phase", "7", "x"); bad.Code != 2 {
		t.Errorf("answer for a phase that never ran: want exit 2: %s", bad)
	}
	if a := h.run("answer", "--phase", "1", answer); a.Code != 0 {
		t.Fatalf("answer: %s", a)
	}

	r = h.run("run", "plan/MASTER_PLAN.md", "--notify", rc.URL+"/hook")
	if r.Code != 0 {
		t.Fatalf("the rerun: want exit 0: %s", r)
	}
	sessions := h.sessionsOf(answer)
	if len(sessions) != 1 {
		t.Fatalf("want 1 session whose first prompt holds the answer, got %d of %d", len(sessions), len(h.API.Sessions()))
	}
	if !strings.Contains(sessions[0], "needs the staging API key") || strings.Contains(sessions[0], reasonSecret) {
		t.Errorf("the resumed prompt lacks the question or holds the secret:\n%s", sessions[0])
	}
	ph := h.status()["phases"].([]any)[0].(map[string]any)
	if ph["status"] != "completed" || ph["attempts"].(float64) != 2 {
		t.Errorf("phase: %v; want completed on attempt 2", ph)
	}
	evs, raw = rc.got()
	if got := names(evs); len(got) != 2 || got[1] != "completed" {
		t.Errorf("notifications %v, want [blocked completed]", got)
	}
	if len(evs) == 2 {
		if code, _ := evs[1]["exit_code"].(float64); code != 0 || evs[1]["status"] != "completed" {
			t.Errorf("completed event: %v", evs[1])
		}
	}
	if strings.Contains(raw, toolSecret) || strings.Contains(raw, "TOOL-OUTPUT-MARKER") {
		t.Errorf("tool output reached the receiver:\n%s", raw)
	}
}

// A receiver that hangs, and one that answers 500, slow the run by no more
// than their timeout, and leave a warning and an event.
func TestNotifyDeadReceiverBounded(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's notification sender")
	release := make(chan struct{})
	hang := newHookReceiver(t, func(http.ResponseWriter) { <-release })
	defer close(release)
	fail := newHookReceiver(t, func(w http.ResponseWriter) { w.WriteHeader(500) })
	config := "notify:\n" +
		"  - kind: webhook\n    url: " + hang.URL + "\n    timeout: 3s\n" +
		"  - kind: ntfy\n    url: " + fail.URL + "/topic\n    timeout: 3s\n"
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(10000, done("1")), turn(11000, fakeapi.Text("Done."))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "One"}}, config)
	r := h.run("run", "plan/MASTER_PLAN.md")
	ended := time.Now()
	if r.Code != 0 {
		t.Fatalf("want exit 0 whatever the receivers do: %s", r)
	}
	// From the run's end (its completed notification) to the process's:
	// the receivers' 3 s timeout, not three tries of it. Loose: a loaded
	// machine adds its own seconds.
	var runEnded time.Time
	for _, line := range strings.Split(h.runFiles("events.jsonl"), "\n") {
		var ev struct {
			TS    time.Time `json:"ts"`
			Event string    `json:"event"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "run_ended" {
			runEnded = ev.TS
		}
	}
	if runEnded.IsZero() {
		t.Fatal("no run_ended event")
	}
	if added := ended.Sub(runEnded); added > 7*time.Second {
		t.Errorf("the receivers added %s to the run, want about their 3 s timeout", added)
	}
	if !strings.Contains(r.Stderr, "notification not delivered") {
		t.Errorf("no warning about the failed deliveries:\n%s", r.Stderr)
	}
	if ev := h.runFiles("events.jsonl"); strings.Count(ev, `"notify_failed"`) != 2 {
		t.Errorf("events.jsonl lacks a notify_failed per receiver:\n%s", ev)
	}
	if _, raw := fail.got(); !strings.Contains(raw, "run ") {
		t.Errorf("the 500 receiver was not tried: %q", raw)
	}
}

// A usage-limit wait is announced with its reset time; the end after it
// too.
func TestNotifyUsageLimitWait(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's usage-limit notification")
	const limit = 4 * time.Second
	rc := newHookReceiver(t, nil)
	h := newHarness(t, limitScript(limit), []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.Env = oauth(h.Env)
	r := h.run("run", "plan/MASTER_PLAN.md", "--notify", rc.URL)
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	evs, raw := rc.got()
	if got := names(evs); len(got) != 2 || got[0] != "usage_limit" || got[1] != "completed" {
		t.Fatalf("notifications %v, want [usage_limit completed]\n%s", got, raw)
	}
	ev := evs[0]
	resets, _ := time.Parse(time.RFC3339, ev["resets"].(string))
	until, _ := time.Parse(time.RFC3339, ev["until"].(string))
	if ev["waiting"] != true || ev["limit"] != "five_hour" || resets.IsZero() || until.Before(resets) {
		t.Errorf("usage_limit event: %v", ev)
	}
	if msg, _ := ev["message"].(string); !strings.Contains(msg, "waiting until "+until.Format("15:04")) {
		t.Errorf("message = %q", msg)
	}
}

// With waiting off the run ends with exit 75 and the notification says so,
// with the reset.
func TestNotifyUsageLimitExit75(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's usage-limit notification")
	rc := newHookReceiver(t, nil)
	h := newHarness(t, limitScript(30*time.Second), []phaseSpec{{ID: "1", Title: "Alpha"}}, "")
	h.Env = oauth(h.Env)
	r := h.run("run", "plan/MASTER_PLAN.md", "--usage-limit-wait", "0", "--notify", rc.URL)
	if r.Code != 75 {
		t.Fatalf("want exit 75: %s", r)
	}
	evs, raw := rc.got()
	if got := names(evs); len(got) != 1 || got[0] != "usage_limit" {
		t.Fatalf("notifications %v, want [usage_limit]\n%s", got, raw)
	}
	if ev := evs[0]; ev["exit_code"] != float64(75) || ev["waiting"] != nil || ev["resets"] == nil {
		t.Errorf("usage_limit event: %v", ev)
	}
}

// run --answer answers the single blocked phase and resumes it at once.
func TestRunAnswerResumes(t *testing.T) {
	claudetest.OncePerSuite(t, "run --answer records what debussy answer does")
	const answer = "use the sandbox key from 1password"
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "blocks", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(10000, fakeapi.Bash(`debussy done --phase 1 --status blocked --reason "which key?"`)),
			turn(11000, fakeapi.Text("Blocked.")),
		}},
		{Name: "answered", Match: answer, Turns: []fakeapi.Turn{
			turn(10000, done("1")),
			turn(11000, fakeapi.Text("Done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Keys"}}, "")
	if r := h.run("run", "plan/MASTER_PLAN.md"); r.Code != 1 {
		t.Fatalf("want exit 1 (blocked): %s", r)
	}
	r := h.run("run", "plan/MASTER_PLAN.md", "--answer", answer)
	if r.Code != 0 {
		t.Fatalf("run --answer: want exit 0: %s", r)
	}
	if s := h.sessionsOf(answer); len(s) != 1 || !strings.Contains(s[0], "which key?") {
		t.Errorf("want one session whose first prompt holds the question and the answer: %q", s)
	}
	if r := h.run("run", "plan/MASTER_PLAN.md", "--answer", "again"); r.Code != 2 || !strings.Contains(r.Stderr, "no phase is blocked") {
		t.Errorf("run --answer with nothing blocked: want exit 2: %s", r)
	}
}
