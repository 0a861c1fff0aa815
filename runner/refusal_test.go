package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/failure"
)

// The endings no retry fixes, as the CLI produced them (2.1.197 and
// 2.1.330 against the fake API), and the ordinary failures that must stay
// retryable.
func TestRefusal(t *testing.T) {
	apiErr := func(status int, text string) *Result {
		return &Result{Subtype: "success", IsError: true, APIErrorStatus: status, Text: text}
	}
	tests := []struct {
		name   string
		out    Outcome
		reason string // substring; "" means not a refusal
		fix    string
	}{
		{name: "root refuses bypass", out: Outcome{Kind: OutcomeCrashed, ExitCode: 1,
			Stderr: "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"},
			reason: "as root", fix: "IS_SANDBOX=1"},
		{name: "unknown option", out: Outcome{Kind: OutcomeCrashed, ExitCode: 1, Stderr: "error: unknown option '--bogus-flag'\n"},
			reason: "option --bogus-flag", fix: "extra_args"},
		{name: "401 result", out: Outcome{Kind: OutcomeAPIError, Result: apiErr(401, "Invalid API key · Fix external API key")},
			reason: "status 401", fix: "ANTHROPIC_API_KEY"},
		{name: "403 result", out: Outcome{Kind: OutcomeAPIError, Result: apiErr(403, "Failed to authenticate. API Error: 403")},
			reason: "status 403", fix: "ANTHROPIC_API_KEY"},
		{name: "404 model", out: Outcome{Kind: OutcomeAPIError, Result: apiErr(404, "There's an issue with the selected model (claude-nope).")},
			reason: "claude-nope", fix: "set model"},
		{name: "stopped on auth retries", out: Outcome{Kind: OutcomeRefused, Reason: authRefusal, facts: failure.Facts{AuthRefused: authRefusal}},
			reason: "status 401", fix: "ANTHROPIC_API_KEY"},

		{name: "crash without a known message", out: Outcome{Kind: OutcomeCrashed, ExitCode: 1, Stderr: "TypeError: x is undefined"}},
		{name: "overloaded", out: Outcome{Kind: OutcomeAPIError, Result: apiErr(529, "Overloaded")}},
		{name: "prompt too long", out: Outcome{Kind: OutcomeAPIError, Result: apiErr(400, "Prompt is too long")}},
		{name: "completed", out: Outcome{Kind: OutcomeCompleted, Result: &Result{Subtype: "success"}}},
		{name: "root message after a result", out: Outcome{Kind: OutcomeCompleted, Result: &Result{Subtype: "success"},
			Stderr: "cannot be used with root/sudo privileges"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classified(withFacts(tt.out))
			err := got.Refused()
			if tt.reason == "" {
				if got.Kind == OutcomeRefused || err != nil {
					t.Fatalf("classified as refused: %+v", got)
				}
				if got.Kind != tt.out.Kind {
					t.Errorf("kind %s, want %s unchanged", got.Kind, tt.out.Kind)
				}
				return
			}
			if got.Kind != OutcomeRefused || !errors.Is(err, ErrStartRefused) {
				t.Fatalf("not refused: %+v (err %v)", got, err)
			}
			if !got.Failure.Class.Setup() {
				t.Errorf("refused with failure class %q: consumers read the class", got.Failure.Class)
			}
			fix := got.Failure.Fix
			if !strings.Contains(got.Reason, tt.reason) || !strings.Contains(fix, tt.fix) {
				t.Errorf("reason %q fix %q, want them to contain %q and %q", got.Reason, fix, tt.reason, tt.fix)
			}
			if !strings.Contains(err.Error(), fix) || strings.Count(fix, ". ") > 0 {
				t.Errorf("error %q: want the fix in one sentence", err)
			}
		})
	}
}

// authRefusal is refuseOnAuth's reason, as the machine records it.
const authRefusal = "the API refused claude's credentials (status 401 authentication_failed, 2 attempts)"

// withFacts gives an outcome built by hand the facts its result holds, as
// the stop machine would have gathered them.
func withFacts(o Outcome) Outcome {
	if r := o.Result; r != nil {
		o.facts = failure.Facts{HasResult: true, IsError: r.IsError, APIErrorStatus: r.APIErrorStatus, Text: r.Text}
	}
	return o
}

func TestAuthRetry(t *testing.T) {
	retry := func(status, attempt int) *System {
		return &System{Subtype: "api_retry", ErrorStatus: status, Attempt: attempt, MaxRetries: 10, Error: "authentication_failed"}
	}
	tests := []struct {
		name string
		s    *System
		want bool
	}{
		{"first 401: maybe a token refresh", retry(401, 1), false},
		{"second 401", retry(401, 2), true},
		{"second 403", retry(403, 2), true},
		{"529 retries", retry(529, 5), false},
		{"not a retry", &System{Subtype: "status", ErrorStatus: 401, Attempt: 2}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := authRetry(tt.s) != ""; got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The second 401 retry interrupts the session at once instead of waiting
// out the CLI's ten retries; the outcome is refused whatever result follows.
func TestStopMachineRefusesOnAuthRetries(t *testing.T) {
	retry := func(attempt int) input {
		return line(Event{Kind: KindSystem, System: &System{Subtype: "api_retry", ErrorStatus: 401, Attempt: attempt, Error: "authentication_failed"}})
	}
	trace, out, _ := run(t, stopConfig{hooks: true}, []step{
		at(0, ack(initRequestID)),
		at(time.Second, retry(1)),
		at(time.Second, retry(2)),
		at(time.Second, ack("req_1"), result("error_during_execution", true)),
		at(0, exitAndGone(exitCode(0))...),
	})
	want := []string{
		"2s stop_requested refused",
		"2s write interrupt req_1",
		"2s interrupt_sent",
		"3s interrupt_acked",
		"3s result_received",
		"3s close stdin",
		"3s stdin_closed",
	}
	want = append(want, ending("3s", "finish refused: the API refused claude's credentials (status 401 authentication_failed, 2 attempts)")...)
	if strings.Join(trace, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace:\n%s\nwant:\n%s", strings.Join(trace, "\n"), strings.Join(want, "\n"))
	}
	if out == nil || out.Kind != OutcomeRefused {
		t.Fatalf("outcome %+v", out)
	}
}

// Real streams of each failure (recorded on the CLI named in the file
// against the fake API) classify as their class: the facts come from the
// lines as the stop machine keeps them.
func TestFixtureFailures(t *testing.T) {
	tests := []struct {
		fixture string
		class   failure.Class
		limit   string
	}{
		{"usage-limit-2.1.197.jsonl", failure.UsageLimit, "five_hour"},
		{"usage-limit-2.1.332.jsonl", failure.UsageLimit, "five_hour"},
		{"not-logged-in-2.1.332.jsonl", failure.Auth, ""},
		{"unreachable-2.1.332.jsonl", failure.Unreachable, ""},
		{"prompt-too-long.jsonl", failure.PromptTooLong, ""},
		{"success-simple.jsonl", failure.None, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			m := newMachine(stopConfig{})
			for _, line := range fixtureLines(t, tt.fixture) {
				ev, err := Parse(line)
				if err != nil {
					t.Fatal(err)
				}
				m.noteFacts(&ev)
				if ev.Kind == KindResult {
					m.lastResult = ev.Result
				}
			}
			got := failure.Classify(m.finalFacts())
			if got.Class != tt.class || got.LimitType != tt.limit {
				t.Fatalf("got %+v, want class %q limit %q", got, tt.class, tt.limit)
			}
			if tt.class == failure.UsageLimit && got.Resets.IsZero() {
				t.Error("a usage limit without its reset time")
			}
		})
	}
}

// A first contact whose connection never opens (api_retry without an HTTP
// status, what a refused port, an unknown host and a TLS failure give) is
// interrupted at the third retry, seconds in, and classed unreachable:
// the CLI's own ten retries take minutes.
func TestStopMachineGivesUpUnreachable(t *testing.T) {
	retry := func(attempt int) input {
		return line(Event{Kind: KindSystem, System: &System{Subtype: "api_retry", Attempt: attempt, MaxRetries: 10, Error: "unknown"}})
	}
	trace, out, _ := run(t, stopConfig{hooks: true, unreachable: "ANTHROPIC_BASE_URL=http://127.0.0.1:9"}, []step{
		at(0, ack(initRequestID)),
		at(time.Second, retry(1)),
		at(time.Second, retry(2)),
		at(time.Second, retry(3)),
		at(time.Second, ack("req_1"), result("error_during_execution", true)),
		at(0, exitAndGone(exitCode(0))...),
	})
	if len(trace) == 0 || trace[0] != "3s stop_requested unreachable" {
		t.Errorf("trace:\n%s", strings.Join(trace, "\n"))
	}
	if out == nil {
		t.Fatal("no outcome")
	}
	o := classified(*out)
	if o.Failure.Class != failure.Unreachable || !strings.Contains(o.Failure.Reason, "ANTHROPIC_BASE_URL=http://127.0.0.1:9") {
		t.Errorf("failure %+v, want unreachable naming ANTHROPIC_BASE_URL", o.Failure)
	}
}

// Without FirstContact (some session of the run got an answer) the CLI's
// retries run their course: a network blip is retried, not a setup error.
func TestStopMachineKeepsRetryingAfterAnAnswer(t *testing.T) {
	retry := func(attempt int) input {
		return line(Event{Kind: KindSystem, System: &System{Subtype: "api_retry", Attempt: attempt, MaxRetries: 10, Error: "unknown"}})
	}
	trace, _, _ := run(t, stopConfig{hooks: true}, []step{
		at(0, ack(initRequestID)),
		at(time.Second, retry(1)), at(time.Second, retry(2)), at(time.Second, retry(3)), at(time.Second, retry(4)),
	})
	for _, l := range trace {
		if strings.Contains(l, "stop_requested") {
			t.Errorf("stopped: %s", l)
		}
	}
}

func TestUnreachableWhere(t *testing.T) {
	spec := Spec{FirstContact: true, Env: []string{"ANTHROPIC_BASE_URL=https://user:secret@proxy.example:8443/x", "HTTPS_PROXY=http://u:p@p:3128"}}
	got := unreachableWhere(spec)
	if strings.Contains(got, "secret") || strings.Contains(got, "u:p") || !strings.Contains(got, "https://proxy.example:8443/x") ||
		!strings.Contains(got, "HTTPS_PROXY") {
		t.Errorf("unreachableWhere = %q", got)
	}
	if unreachableWhere(Spec{}) != "" {
		t.Error("asked without FirstContact")
	}
}

// claude's settings_not_in_effect line (2.1.330+; synthesised in the shape
// the 2.1.332 binary builds, as the installed CLIs emit it only to Agent
// SDK apps): naming the settings debussy passes, it ends the session at
// once, refused with the fix; naming only the user's own it is a warning,
// logged once, and the session goes on.
func TestStopMachineSettingsNotInEffect(t *testing.T) {
	info := func(content string) input {
		return line(Event{Kind: KindSystem, System: &System{Subtype: "informational", Tag: "settings_not_in_effect", Level: "warning", Content: content}})
	}
	trace, out, _ := run(t, stopConfig{hooks: true}, []step{
		at(0, ack(initRequestID)),
		at(time.Second, info("flagSettings (--settings): idleCompaction: Expected boolean, received string")),
		at(time.Second, ack("req_1"), result("error_during_execution", true)),
		at(0, exitAndGone(exitCode(0))...),
	})
	if !strings.Contains(strings.Join(trace, "\n"), "1s stop_requested refused") || !strings.Contains(strings.Join(trace, "\n"), "1s write interrupt req_1") {
		t.Errorf("not stopped at once:\n%s", strings.Join(trace, "\n"))
	}
	if out == nil {
		t.Fatal("no outcome")
	}
	if got := classified(*out); got.Kind != OutcomeRefused || got.Failure.Class != failure.Refused || got.Failure.Fix != failure.FixSettings ||
		!strings.Contains(got.Reason, "idleCompaction") {
		t.Fatalf("outcome %+v", got)
	}

	trace, out, _ = run(t, stopConfig{hooks: true}, []step{
		at(0, ack(initRequestID)),
		at(time.Second, info("/home/me/.claude/settings.json: permissions.allow: Expected array, received number")),
		at(time.Second, info("/home/me/.claude/settings.json: permissions.allow: Expected array, received number")),
		at(time.Second, result("success", false)),
		at(0, exitAndGone(exitCode(0))...),
	})
	joined := strings.Join(trace, "\n")
	if strings.Contains(joined, "stop_requested") || strings.Count(joined, "did not load") != 1 {
		t.Errorf("the user's own settings: want one warning and no stop:\n%s", joined)
	}
	if out == nil || out.Kind != OutcomeCompleted {
		t.Fatalf("outcome %+v", out)
	}
}
