package runner

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Some endings no retry can fix: claude refuses its arguments or its
// environment, or the API refuses the credentials or the model. Each is
// the same on every attempt, so the session's outcome is OutcomeRefused
// with a one-sentence fix, and the caller ends the run instead of paying
// for retries (measured on 2.1.197 and 2.1.330: a 401 is retried by the
// CLI itself ten times over about three minutes).

// ErrStartRefused is wrapped by Outcome.Refused.
var ErrStartRefused = errors.New("claude cannot run here")

// RefusedError is a refusal: what claude or the API said, and the fix.
type RefusedError struct {
	Reason string
	Fix    string
}

func (e *RefusedError) Error() string { return strings.TrimRight(e.Reason, ".") + ": " + e.Fix }
func (e *RefusedError) Unwrap() error { return ErrStartRefused }

// Refused returns the refusal when the session was refused, else nil.
func (o Outcome) Refused() error {
	if o.Kind != OutcomeRefused {
		return nil
	}
	return &RefusedError{Reason: o.Reason, Fix: o.Fix}
}

// The one-sentence fixes.
const (
	fixRoot = "set IS_SANDBOX=1 in debussy's environment (only in a container or VM you trust), " +
		"or set permission_mode to acceptEdits (or default) in .debussy.yaml"
	fixAuth = "check the API key claude uses (ANTHROPIC_API_KEY, or `claude /login` as the user debussy runs as) " +
		"and that it may use this model"
	fixModel = "set model in .debussy.yaml (or --model) to a model your account can use, " +
		"or leave it empty for claude's default"
	fixFlag = "remove or correct it in extra_args (.debussy.yaml or DEBUSSY_EXTRA_ARGS), or update claude"
)

// rootRefusal is claude's stderr when it refuses --dangerously-skip-permissions as root.
const rootRefusal = "cannot be used with root/sudo privileges"

var unknownOption = regexp.MustCompile(`unknown option '([^']*)'`)

// refusal classifies a finished session: a refusal's reason and fix, or
// ok false. stderr is claude's stderr tail.
func refusal(o Outcome) (reason, fix string, ok bool) {
	if o.Kind == OutcomeRefused {
		return o.Reason, fixAuth, true // the runner stopped it on repeated 401/403 retries (authRetry)
	}
	if o.Result == nil && (o.Kind == OutcomeCrashed || o.Kind == OutcomeKilled) {
		switch m := unknownOption.FindStringSubmatch(o.Stderr); {
		case strings.Contains(o.Stderr, rootRefusal):
			return "claude refuses --dangerously-skip-permissions (permission_mode bypassPermissions) when run as root", fixRoot, true
		case m != nil:
			return fmt.Sprintf("claude does not know the option %s", m[1]), fixFlag, true
		}
	}
	if r := o.Result; r != nil && r.IsError {
		text := oneLineText(r.Text)
		switch r.APIErrorStatus {
		case 401, 403:
			return fmt.Sprintf("the API refused claude's credentials (status %d): %s", r.APIErrorStatus, text), fixAuth, true
		case 404:
			return fmt.Sprintf("the API does not know claude's model (status 404): %s", text), fixModel, true
		}
	}
	return "", "", false
}

// withRefusal turns an outcome that is a refusal into OutcomeRefused.
func withRefusal(o Outcome) Outcome {
	if reason, fix, ok := refusal(o); ok {
		o.Kind, o.Reason, o.Fix = OutcomeRefused, reason, fix
	}
	return o
}

// authRetry says why a retry line means the credentials are refused: a
// 401 or 403 retried a second time. The first may be an expired OAuth
// token the CLI refreshes before retrying; a second one is not.
func authRetry(s *System) string {
	if s == nil || s.Subtype != "api_retry" || (s.ErrorStatus != 401 && s.ErrorStatus != 403) || s.Attempt < 2 {
		return ""
	}
	return fmt.Sprintf("the API refused claude's credentials (status %d %s, %d attempts)", s.ErrorStatus, s.Error, s.Attempt)
}

// refuseOnAuth ends the session at once when ev shows the API refusing
// the credentials: the CLI would retry for minutes. No tool runs while
// the CLI waits to retry, so the interrupt cuts no work.
func (m *machine) refuseOnAuth(ev *Event, now time.Time) {
	if ev.Kind != KindSystem || m.ending() {
		return
	}
	why := authRetry(ev.System)
	if why == "" {
		return
	}
	m.cause, m.reason = OutcomeRefused, why
	m.mark("stop_requested", now, map[string]any{"kind": string(OutcomeRefused), "reason": why, "in_flight": len(m.inflight)})
	m.failSend(ErrSessionClosed)
	if m.phase < phaseInterrupting {
		m.interrupt(now)
	}
}

func oneLineText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		return string(r[:299]) + "…"
	}
	return s
}
