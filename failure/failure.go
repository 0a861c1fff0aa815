// Package failure is the one classification of how a claude session
// failed. It is pure: the facts come from the session's stream (runner
// builds Facts), the answer is a Failure whose Class the runner (a setup
// class ends the run) and policy.After (every other class) act on.
//
// The facts that decide are is_error, api_error_status, the last
// rate_limit_event, the synthetic assistant reply's "error", the CLI's
// retries and its own text — never the result's subtype (a usage limit, a
// missing login and "Prompt is too long" all arrive as subtype "success"
// with is_error true), its terminal_reason (2.1.197 ends a usage limit
// "completed", 2.1.332 "api_error") nor the exit code alone (1 for all of
// them).
package failure

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/text"
)

// Class is what kind of failure ended a session.
type Class string

const (
	// None: the session did not fail (or debussy stopped it).
	None Class = ""
	// UsageLimit: a subscription's 5-hour or weekly limit. Waiting for
	// its reset is the only fix; a retry before it is refused again.
	UsageLimit Class = "usage_limit"
	// Auth: no login, a rejected key, an expired token, an account that
	// may not use the model or the window (credits required). Waiting and
	// retrying change nothing: the user must log in.
	Auth Class = "auth"
	// Refused: claude refuses its arguments or environment (root and
	// bypassPermissions, an unknown option, a model the API does not know).
	Refused Class = "refused"
	// Unreachable: the API could not be reached at all (connection
	// refused, DNS, TLS, a proxy) after the CLI's own retries.
	Unreachable Class = "unreachable"
	// Overloaded: 529/500s or a short throttle the CLI retried and gave up
	// on; it clears by itself.
	Overloaded Class = "overloaded"
	// PromptTooLong: the context filled before a trigger fired.
	PromptTooLong Class = "prompt_too_long"
	// Crashed: claude ended without a result (a crash, a kill).
	Crashed Class = "crashed"
	// Other: an error none of the above explains.
	Other Class = "other"
)

// Setup reports whether the class is one the user must fix before any
// session can run: the runner makes it OutcomeRefused and the run ends at
// once with exit 2. What follows every other class is policy.After's.
func (c Class) Setup() bool { return c == Auth || c == Refused }

// RateLimit is the latest rate_limit_event of a session.
type RateLimit struct {
	Status string    // allowed, allowed_warning, rejected
	Resets time.Time // zero when the event did not say
	Type   string    // five_hour, seven_day, seven_day_opus, seven_day_sonnet, ...
}

// Rejected reports whether the limit refused requests.
func (r *RateLimit) Rejected() bool { return r != nil && r.Status == "rejected" }

// Facts are what a session's stream and process said about its end.
type Facts struct {
	HasResult      bool   // a result line arrived
	IsError        bool   // the last result's is_error
	APIErrorStatus int    // the last result's api_error_status (0: none)
	Text           string // the last result's text
	// AssistantError is the "error" of the last synthetic assistant reply
	// (rate_limit, authentication_failed, server_error, invalid_request,
	// billing_error, ...).
	AssistantError string
	RateLimit      *RateLimit // the latest rate_limit_event; nil if none came
	// RetryStatus is the last system/api_retry line's: 0 is a connection
	// that never opened (its error is "unknown").
	RetryStatus int
	Retries     int // api_retry lines seen
	// GaveUpUnreachable is why the runner ended a first contact whose
	// connection never opened; "" when it did not.
	GaveUpUnreachable string
	// SettingsRefused is why the runner ended a session whose claude said
	// the settings debussy passes are not in effect; "" when it did not.
	SettingsRefused string
	// AuthRefused is why the runner ended a session whose requests kept
	// being refused (401/403 retries); "" when it did not.
	AuthRefused string
	Stderr      string // the tail of claude's stderr
	// Now is when the session ended: a reset time given only as a clock
	// time in the text is the next one after it.
	Now time.Time
}

// Failure is a classified ending.
type Failure struct {
	Class  Class
	Reason string // one line: what happened, in the CLI's words where it has them
	Fix    string // for setup classes: what the user must do, one sentence
	// For UsageLimit: when the limit resets (zero if nobody said) and
	// which limit it is.
	Resets    time.Time
	LimitType string
}

// The fixes a user is told.
const (
	FixLogin = "log in as the user debussy runs as: run `claude login` (a Pro/Max subscription), " +
		"or set ANTHROPIC_API_KEY (an API key) or CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) in debussy's environment"
	FixCredits = "choose a model or window your account includes (model in .debussy.yaml or --model; " +
		"a 200K model needs no 1M-context credits), or add usage credits to the account"
	FixRoot = "set IS_SANDBOX=1 (only in a container or VM you trust), " +
		"or permission_mode: acceptEdits with allowed_tools: [\"Bash\"] (or the commands the plan runs)"
	FixModel = "set model in .debussy.yaml (or --model) to a model your account can use, " +
		"or leave it empty for claude's default"
	FixFlag        = "remove or correct it in extra_args (.debussy.yaml or DEBUSSY_EXTRA_ARGS), or update claude"
	FixUnreachable = "check the network, a proxy (HTTPS_PROXY) and ANTHROPIC_BASE_URL; `debussy doctor` tries the same request"
	FixSettings    = "update claude (npm install -g @anthropic-ai/claude-code), or report the claude version and its message: " +
		"debussy's own settings (its --settings) must be in effect for a run to start"
)

// RootRefusal is claude's stderr when it refuses
// --dangerously-skip-permissions as root.
const RootRefusal = "cannot be used with root/sudo privileges"

var (
	unknownOption = regexp.MustCompile(`unknown option '([^']*)'`)
	// "You've hit your 5-hour limit · resets 7:41pm (UTC)": 2.1.332;
	// "You've hit your session limit · resets …": 2.1.197.
	limitText = regexp.MustCompile(`(?i)\bhit your ([a-z0-9 -]*?)\s*limit\b`)
	// resets 7:41pm (UTC) · resets 19:41 (Europe/Paris) · resets Dec 2, 7pm (UTC)
	resetsText = regexp.MustCompile(`(?i)\bresets\s+(?:at\s+)?(?:([A-Z][a-z]{2})\s+(\d{1,2}),?\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]m)?\s*(?:\(([^)]+)\))?`)
	// What the CLI says when it cannot open a connection (2.1.197:
	// "Unable to connect to API (ConnectionRefused)"; 2.1.332:
	// "Connection refused — a firewall or proxy may be blocking it
	// (ECONNREFUSED)"), or a name that does not resolve, a TLS failure.
	// The node-run CLIs (2.1.112) name undici's error codes instead of the
	// system's: a connection the API dropped is "Unable to connect to API
	// (UND_ERR_SOCKET)", so the family UND_ERR_* is matched, not one code.
	unreachableText = regexp.MustCompile(`(?i)unable to connect|connection (?:refused|error|reset|dropped|closed)|ECONN[A-Z]+|UND_ERR_[A-Z_]+|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|getaddrinfo|certificate|socket hang up|network is unreachable|fetch failed`)
	// Credits and balances are told apart before this (FixCredits).
	authText = regexp.MustCompile(`(?i)not logged in|please run /login|invalid api key|invalid x-api-key|authentication_error|oauth token (?:has )?expired|token (?:is )?(?:expired|revoked)|does not have access|permission_error|billing`)
)

// Classify names the failure a session ended with; Class None when it
// did not fail. Order matters: a usage limit also carries a 429 and an
// error text, a missing login also ends with is_error.
func Classify(f Facts) Failure {
	line := text.OneLine(f.Text, 300)
	if f.GaveUpUnreachable != "" {
		return Failure{Class: Unreachable, Fix: FixUnreachable, Reason: f.GaveUpUnreachable}
	}
	if f.SettingsRefused != "" {
		return Failure{Class: Refused, Fix: FixSettings, Reason: f.SettingsRefused}
	}
	if f.AuthRefused != "" {
		return Failure{Class: Auth, Fix: FixLogin, Reason: f.AuthRefused}
	}
	if f.RateLimit.Rejected() || f.AssistantError == "rate_limit" || (f.IsError && limitText.MatchString(f.Text)) {
		if fl, ok := usageLimit(f, line); ok {
			return fl
		}
	}
	if !f.HasResult {
		switch m := unknownOption.FindStringSubmatch(f.Stderr); {
		case strings.Contains(f.Stderr, RootRefusal):
			return Failure{Class: Refused, Fix: FixRoot,
				Reason: "claude refuses --dangerously-skip-permissions (permission_mode bypassPermissions) when run as root"}
		case m != nil:
			return Failure{Class: Refused, Fix: FixFlag, Reason: fmt.Sprintf("claude does not know the option %s", m[1])}
		case f.Retries > 0 && (f.RetryStatus == 401 || f.RetryStatus == 403):
			// Ended by the runner on repeated 401/403 retries.
			return Failure{Class: Auth, Fix: FixLogin, Reason: fmt.Sprintf("the API refused claude's credentials (status %d)", f.RetryStatus)}
		}
		return Failure{Class: Crashed, Reason: "claude ended without a result"}
	}
	if !f.IsError {
		return Failure{}
	}
	lower := strings.ToLower(f.Text)
	switch {
	case strings.Contains(lower, "prompt is too long"):
		return Failure{Class: PromptTooLong, Reason: "the context filled up (prompt too long)"}
	case strings.Contains(lower, "credits required") || strings.Contains(lower, "credit balance is too low") || f.AssistantError == "billing_error":
		return Failure{Class: Auth, Fix: FixCredits, Reason: "the account may not use this model or window: " + line}
	case f.AssistantError == "authentication_failed" || f.APIErrorStatus == 401 || f.APIErrorStatus == 403 || authText.MatchString(f.Text):
		why := "claude is not logged in or its credentials were refused"
		if f.APIErrorStatus != 0 {
			why = fmt.Sprintf("the API refused claude's credentials (status %d)", f.APIErrorStatus)
		}
		return Failure{Class: Auth, Fix: FixLogin, Reason: why + ": " + line}
	case f.APIErrorStatus == 404:
		return Failure{Class: Refused, Fix: FixModel, Reason: "the API does not know claude's model (status 404): " + line}
	case f.APIErrorStatus == 0 && (unreachableText.MatchString(f.Text) || (f.Retries > 0 && f.RetryStatus == 0 && f.AssistantError == "server_error")):
		return Failure{Class: Unreachable, Fix: FixUnreachable, Reason: "claude could not reach the API: " + line}
	case f.APIErrorStatus == 429 || f.APIErrorStatus == 529 || f.APIErrorStatus >= 500 || strings.Contains(lower, "overloaded") ||
		strings.Contains(lower, "temporarily limiting"):
		return Failure{Class: Overloaded, Reason: "the API is overloaded or throttling: " + line}
	}
	return Failure{Class: Other, Reason: line}
}

// usageLimit builds a UsageLimit failure; ok is false when the facts name
// a limit that is not a usage limit (a short throttle).
func usageLimit(f Facts, text string) (Failure, bool) {
	if strings.Contains(strings.ToLower(f.Text), "not your usage limit") {
		return Failure{}, false
	}
	fl := Failure{Class: UsageLimit, Reason: text}
	if r := f.RateLimit; r != nil {
		fl.Resets, fl.LimitType = r.Resets, r.Type
	}
	if fl.Resets.IsZero() {
		fl.Resets = resetFromText(f.Text, f.Now)
	}
	if fl.LimitType == "" {
		if m := limitText.FindStringSubmatch(f.Text); m != nil {
			fl.LimitType = strings.TrimSpace(m[1])
		}
	}
	if fl.Reason == "" {
		fl.Reason = "usage limit reached"
	}
	return fl, true
}

// resetFromText reads "resets 7:41pm (UTC)" as the next such time after
// now; zero when the text names none (or a zone Go does not know).
func resetFromText(s string, now time.Time) time.Time {
	m := resetsText.FindStringSubmatch(s)
	if m == nil || now.IsZero() {
		return time.Time{}
	}
	loc := time.UTC
	if m[6] != "" {
		l, err := time.LoadLocation(strings.TrimSpace(m[6]))
		if err != nil {
			return time.Time{}
		}
		loc = l
	}
	var hour, minute int
	fmt.Sscan(m[3], &hour)
	if m[4] != "" {
		fmt.Sscan(m[4], &minute)
	}
	switch strings.ToLower(m[5]) {
	case "pm":
		if hour < 12 {
			hour += 12
		}
	case "am":
		if hour == 12 {
			hour = 0
		}
	}
	if hour > 23 || minute > 59 {
		return time.Time{}
	}
	n := now.In(loc)
	if m[1] != "" {
		mon, err := time.Parse("Jan", m[1])
		if err != nil {
			return time.Time{}
		}
		var day int
		fmt.Sscan(m[2], &day)
		t := time.Date(n.Year(), mon.Month(), day, hour, minute, 0, 0, loc)
		if t.Before(n.Add(-24 * time.Hour)) {
			t = t.AddDate(1, 0, 0) // "Jan 2" said in December
		}
		return t
	}
	t := time.Date(n.Year(), n.Month(), n.Day(), hour, minute, 0, 0, loc)
	if !t.After(n) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// LimitName is how a limit type reads in a message: "5-hour", "weekly",
// "weekly Opus".
func LimitName(typ string) string {
	switch typ {
	case "five_hour", "session":
		return "5-hour"
	case "seven_day":
		return "weekly"
	case "seven_day_opus":
		return "weekly Opus"
	case "seven_day_sonnet":
		return "weekly Sonnet"
	case "":
		return "usage"
	}
	return strings.ReplaceAll(typ, "_", " ")
}

// ModelSpecific reports whether a limit holds for one model family only
// (seven_day_opus): another model may go on.
func ModelSpecific(typ string) bool {
	return strings.HasSuffix(typ, "_opus") || strings.HasSuffix(typ, "_sonnet") || strings.HasSuffix(typ, "_haiku")
}
