package runner

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/failure"
	fold "github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/record"
)

// Some endings no retry can fix: claude refuses its arguments or its
// environment, or the API refuses the credentials or the model. Each is
// the same on every attempt, so the session's outcome is OutcomeRefused
// with a one-sentence fix, and the caller ends the run instead of paying
// for retries (measured on 2.1.197 and 2.1.330: a 401 is retried by the
// CLI itself ten times over about three minutes). Which endings those are
// is failure.Classify's decision; Outcome.Failure carries it for every
// other class too.

// ErrStartRefused is wrapped by Outcome.Refused.
var ErrStartRefused = errors.New("claude cannot run here")

// RefusedError is a refusal: what claude or the API said, and the fix.
type RefusedError struct {
	Reason string
	Fix    string
	Class  failure.Class // failure.Auth or failure.Refused
}

func (e *RefusedError) Error() string { return strings.TrimRight(e.Reason, ".") + ": " + e.Fix }
func (e *RefusedError) Unwrap() error { return ErrStartRefused }

// Refused returns the refusal when the session was refused, else nil.
func (o Outcome) Refused() error {
	if o.Kind != OutcomeRefused {
		return nil
	}
	return &RefusedError{Reason: o.Reason, Fix: o.Failure.Fix, Class: o.Failure.Class}
}

// noteFacts keeps what a line says about a failure: the latest
// rate_limit_event, a synthetic reply's error, the CLI's retries.
func (m *machine) noteFacts(ev *Event) {
	switch ev.Kind {
	case KindRateLimit:
		m.facts.RateLimit = ev.RateLimit
	case KindAssistant:
		if ev.Assistant.MainThread() {
			m.facts.AssistantError = ev.Assistant.Error
		}
	case KindSystem:
		if s := ev.System; s.Subtype == "api_retry" {
			m.facts.Retries++
			m.facts.RetryStatus = s.ErrorStatus
		}
	}
}

// finalFacts adds the last result to the facts the stream gave.
func (m *machine) finalFacts() failure.Facts {
	f := m.facts
	f.Now = m.lastLine
	if r := m.lastResult; r != nil {
		f.HasResult, f.IsError, f.APIErrorStatus, f.Text = true, r.IsError, r.APIErrorStatus, r.Text
	}
	return f
}

// classified classifies a finished session (Outcome.Failure) and turns
// an ending no retry can fix into OutcomeRefused. A session debussy
// stopped or cancelled did not fail, whatever its last result says.
func classified(o Outcome) Outcome {
	o.facts.Stderr = o.Stderr
	switch o.Kind {
	case OutcomeStopped, OutcomeCancelled:
		return o
	case OutcomeKilled, OutcomeIdleTimeout, OutcomeSessionTimeout:
		if o.Result != nil {
			return o
		}
	}
	o.Failure = failure.Classify(o.facts)
	if o.Failure.Class.Setup() {
		o.Kind, o.Reason = OutcomeRefused, o.Failure.Reason
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
	m.facts.AuthRefused = why
	m.endNow(OutcomeRefused, string(OutcomeRefused), why, now)
}

// settingsNotInEffect answers claude's word (2.1.330+, a system line
// `informational` tagged settings_not_in_effect) that settings did not
// load. When it names the settings debussy passes (--settings, claude's
// "flag settings"), the session ends at once, refused: what they hold
// (idle compaction off, the sandbox) is not in effect, and no retry would
// change that. Another source (the user's own settings files) is theirs:
// a warning, once, pointing to `debussy doctor`.
func (m *machine) settingsNotInEffect(ev *Event, now time.Time) {
	s := ev.System
	if ev.Kind != KindSystem || s == nil || s.Subtype != "informational" || s.Tag != event.SettingsNotInEffect || m.ending() {
		return
	}
	said := fold.OneLine(s.Content, 300)
	if !NamesDebussySettings(s.Content) {
		if !m.settingsWarned {
			m.settingsWarned = true
			m.logf(slog.LevelWarn, "claude says some settings did not load and are not in effect; debussy's own did (`debussy doctor` checks your settings files)",
				"claude_said", said)
		}
		return
	}
	why := "claude did not apply the settings debussy passes it (" + SettingsFlag + "): " + said
	m.facts.SettingsRefused = why
	m.endNow(OutcomeRefused, string(OutcomeRefused), why, now)
}

// NamesDebussySettings reports whether claude's settings message is about
// the settings given on its command line (--settings), which only
// debussy gives its sessions.
func NamesDebussySettings(content string) bool {
	l := strings.ToLower(content)
	for _, w := range []string{SettingsFlag, "flagsettings", "flag settings", "command line", "command-line"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// unreachableRetries is the CLI's retry after which a connection that
// never opened ends a first contact: about 4 s in (its backoff is 0.6,
// 1.2, 2.4 s), past a one-off blip; the CLI's own ten take minutes.
const unreachableRetries = 3

// giveUpUnreachable ends the session when the CLI keeps retrying a
// connection that never opened (api_retry with no HTTP status, measured
// on 2.1.197 and 2.1.332 for a refused port, an unresolvable host and a
// TLS failure) before any answer in a run that never had one
// (Spec.FirstContact). No tool runs while the CLI waits to retry.
func (m *machine) giveUpUnreachable(ev *Event, now time.Time) {
	if m.cfg.unreachable == "" || ev.Kind != KindSystem || m.ending() || !m.lastAssistantAt.IsZero() {
		return
	}
	s := ev.System
	if s == nil || s.Subtype != "api_retry" || s.ErrorStatus != 0 || s.Attempt < unreachableRetries {
		return
	}
	why := fmt.Sprintf("claude could not connect to the API at %s (%d attempts, no answer yet in this run)", m.cfg.unreachable, s.Attempt)
	m.facts.GaveUpUnreachable = why
	m.endNow(OutcomeAPIError, "unreachable", why, now)
}

// endNow ends the session at once with cause and why: no retry would
// change what happened, and no tool runs while the CLI waits to retry, so
// the interrupt cuts no work. markKind names it in the stop's mark.
func (m *machine) endNow(cause OutcomeKind, markKind, why string, now time.Time) {
	m.cause, m.reason = cause, why
	m.mark(MarkStopRequested, now, record.MarkFields{Kind: ref(markKind), Reason: ref(why), InFlight: inFlight(len(m.inflight))})
	m.failSend(ErrSessionClosed)
	if m.phase < phaseInterrupting {
		m.interrupt(now)
	}
}

// unreachableWhere names where claude connects, for the message of a
// first contact that cannot connect: ANTHROPIC_BASE_URL's value (its
// host and port; no credentials in it are repeated) and the proxy
// variables set, by name. "" when the Spec does not ask (FirstContact).
func unreachableWhere(spec Spec) string {
	if !spec.FirstContact {
		return ""
	}
	where := "the default endpoint (ANTHROPIC_BASE_URL not set)"
	var proxies []string
	for _, kv := range childEnv(spec) {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "ANTHROPIC_BASE_URL":
			if v != "" {
				where = "ANTHROPIC_BASE_URL=" + redactURL(v)
			}
		case "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY":
			if v != "" && !slices.Contains(proxies, k) {
				proxies = append(proxies, k)
			}
		}
	}
	if len(proxies) > 0 {
		where += " through the proxy in " + strings.Join(proxies, ", ")
	}
	return where
}

// redactURL is a URL without its user info.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
