package failure

import (
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 25, 17, 49, 0, 0, time.UTC)
	resets := time.Unix(1795635717, 0)
	tests := []struct {
		name   string
		f      Facts
		class  Class
		resets time.Time
		limit  string
	}{
		{name: "success", f: Facts{HasResult: true}, class: None},
		// Measured on 2.1.332 (OAuth, fake API answering 429 with the unified headers).
		{name: "usage limit 2.1.332", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 429,
			Text: "You've hit your 5-hour limit · resets 7:41pm (UTC)", AssistantError: "rate_limit",
			RateLimit: &RateLimit{Status: "rejected", Resets: resets, Type: "five_hour"}, Now: now},
			class: UsageLimit, resets: resets, limit: "five_hour"},
		// 2.1.197 says "session limit" and terminal_reason completed.
		{name: "usage limit 2.1.197", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 429,
			Text:      "You've hit your session limit · resets 6:44pm (UTC)",
			RateLimit: &RateLimit{Status: "rejected", Resets: resets, Type: "five_hour"}, Now: now},
			class: UsageLimit, resets: resets, limit: "five_hour"},
		{name: "usage limit from the text alone", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 429,
			Text: "You've hit your weekly limit · resets 7:41pm (UTC)", Now: now},
			class: UsageLimit, resets: time.Date(2026, 11, 25, 19, 41, 0, 0, time.UTC), limit: "weekly"},
		{name: "a reset earlier in the day is tomorrow's", f: Facts{HasResult: true, IsError: true, AssistantError: "rate_limit",
			Text: "You've hit your 5-hour limit · resets 9am (UTC)", Now: now},
			class: UsageLimit, resets: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC), limit: "5-hour"},
		{name: "an allowed rate limit event is no failure", f: Facts{HasResult: true,
			RateLimit: &RateLimit{Status: "allowed_warning", Type: "five_hour"}}, class: None},
		{name: "a short throttle is not a usage limit", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 429, AssistantError: "rate_limit",
			Text: "Server is temporarily limiting requests (not your usage limit)"}, class: Overloaded},
		{name: "plain 429 with an API key", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 429,
			Text: "API Error: Request rejected (429) · Number of request tokens has exceeded your rate limit"}, class: Overloaded},
		// Measured on both CLIs with no key and no login: no request is made.
		{name: "not logged in", f: Facts{HasResult: true, IsError: true, AssistantError: "authentication_failed",
			Text: "Not logged in · Please run /login"}, class: Auth},
		{name: "401 after the CLI's retries", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 401,
			Text: "API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\"}}"}, class: Auth},
		{name: "403", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 403, Text: "API Error: 403 permission_error"}, class: Auth},
		{name: "expired oauth token", f: Facts{HasResult: true, IsError: true, Text: "OAuth token has expired. Please run /login"}, class: Auth},
		{name: "credits required", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 400,
			Text: "Usage credits required for 1M context"}, class: Auth},
		{name: "runner ended repeated 401 retries", f: Facts{Retries: 2, RetryStatus: 401}, class: Auth},
		{name: "404 model", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 404, Text: "model: claude-x"}, class: Refused},
		{name: "root", f: Facts{Stderr: "Error: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"}, class: Refused},
		{name: "unknown option", f: Facts{Stderr: "error: unknown option '--bogus'"}, class: Refused},
		// Measured: 2.1.197 and 2.1.332 against a closed port.
		{name: "unreachable 2.1.197", f: Facts{HasResult: true, IsError: true, AssistantError: "server_error",
			Text: "API Error: Unable to connect to API (ConnectionRefused)", Retries: 10}, class: Unreachable},
		{name: "unreachable 2.1.332", f: Facts{HasResult: true, IsError: true, AssistantError: "server_error",
			Text: "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", Retries: 10}, class: Unreachable},
		// Measured: both CLIs when the connection drops mid-session.
		{name: "connection dropped 2.1.197", f: Facts{HasResult: true, IsError: true,
			Text: "API Error: Unable to connect to API (ECONNRESET)", Retries: 1}, class: Unreachable},
		{name: "connection dropped 2.1.332", f: Facts{HasResult: true, IsError: true,
			Text: "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.", Retries: 1}, class: Unreachable},
		// Measured: 2.1.112 (run by node) when the connection drops mid-session.
		{name: "connection dropped 2.1.112", f: Facts{HasResult: true, IsError: true,
			Text: "API Error: Unable to connect to API (UND_ERR_SOCKET)", Retries: 1}, class: Unreachable},
		// undici's code alone, under a wording no CLI has used yet.
		{name: "an undici code alone", f: Facts{HasResult: true, IsError: true,
			Text: "API Error: Request failed (UND_ERR_HEADERS_TIMEOUT)"}, class: Unreachable},
		{name: "connection dropped, no code", f: Facts{HasResult: true, IsError: true,
			Text: "API Error: Connection dropped. Check the gateway set in ANTHROPIC_BASE_URL, then try again."}, class: Unreachable},
		{name: "overloaded", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 529, Text: "API Error: Repeated 529 Overloaded errors"}, class: Overloaded},
		{name: "prompt too long", f: Facts{HasResult: true, IsError: true, APIErrorStatus: 400, Text: "Prompt is too long"}, class: PromptTooLong},
		{name: "crash", f: Facts{Stderr: "Segmentation fault"}, class: Crashed},
		{name: "other error", f: Facts{HasResult: true, IsError: true, Text: "something odd"}, class: Other},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.f)
			if got.Class != tc.class {
				t.Fatalf("class = %q (%s), want %q", got.Class, got.Reason, tc.class)
			}
			if !tc.resets.IsZero() && !got.Resets.Equal(tc.resets) {
				t.Errorf("resets = %v, want %v", got.Resets, tc.resets)
			}
			if tc.limit != "" && got.LimitType != tc.limit {
				t.Errorf("limit type = %q, want %q", got.LimitType, tc.limit)
			}
			if got.Class.Setup() && got.Fix == "" {
				t.Errorf("a setup failure without a fix: %+v", got)
			}
		})
	}
}

// Only what the user must fix ends a run at once; an unreachable API may
// be a blip (policy.After asks whether the run reached it before).
func TestSetup(t *testing.T) {
	want := map[Class]bool{None: false, UsageLimit: false, Auth: true, Refused: true, Unreachable: false,
		Overloaded: false, PromptTooLong: false, Crashed: false, Other: false}
	for c, setup := range want {
		if got := c.Setup(); got != setup {
			t.Errorf("%q.Setup() = %v, want %v", c, got, setup)
		}
	}
}

func TestLimitName(t *testing.T) {
	for typ, want := range map[string]string{"five_hour": "5-hour", "seven_day": "weekly", "seven_day_opus": "weekly Opus", "": "usage", "new_kind": "new kind"} {
		if got := LimitName(typ); got != want {
			t.Errorf("LimitName(%q) = %q, want %q", typ, got, want)
		}
	}
	if !ModelSpecific("seven_day_opus") || ModelSpecific("five_hour") {
		t.Error("ModelSpecific")
	}
}
