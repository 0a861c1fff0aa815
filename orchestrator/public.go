package orchestrator

import (
	"errors"
	"fmt"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/secrets"
)

// What leaves the machine (commit messages and their trailers, which
// --push and the user's own pushes publish, and GitHub's step summary)
// says why a phase ended in structured words only: a gate's name and
// ordinal and exit code, a count, a limit, or the agent's own one-line
// reason (redacted, bounded). Never a command, tool or gate output, a
// session's error text or a file excerpt: no redaction rule can know the
// shape of every secret a tool prints, so such text never goes there at
// all. The full error stays local, in the ledger and debussy logs.

// maxAgentReason bounds the agent's reason where it leaves the machine.
const maxAgentReason = 200

// publicError is an error with what may be published about it.
type publicError struct {
	err    error
	public string
}

func (e *publicError) Error() string { return e.err.Error() }
func (e *publicError) Unwrap() error { return e.err }

// Public is what a log that carries structure only (public.Handler)
// shows in place of the error's text: debussy's own words when the error
// is made of them (public.OwnErr: a setup problem and its fix), else what
// may be published.
func (e *publicError) Public() string {
	var own public.Publisher
	if errors.As(e.err, &own) {
		return own.Public()
	}
	return e.public
}

// withPublic attaches public, the structured reason, to err.
func withPublic(err error, public string) error {
	if err == nil {
		return nil
	}
	return &publicError{err: err, public: public}
}

// PublicReason is publicReason, for the last line a run logs.
func PublicReason(err error) string { return publicReason(err) }

// publicReason is what may be published about err: the reason attached
// by withPublic, else the class of error, never its text.
func publicReason(err error) string {
	if err == nil {
		return ""
	}
	var pe *publicError
	if errors.As(err, &pe) {
		return pe.public
	}
	var sf setupFailure
	for _, c := range []struct {
		is   error
		what string
	}{
		{ErrInterrupted, "interrupted"},
		{ErrBudgetExhausted, "budget exhausted"},
		{ErrUsageLimit, "usage limit reached"},
		{ErrConflict, "merge conflict with a phase merged before it"},
		{ErrBlocked, "blocked"},
		{ErrLedger, "ledger not saved"},
	} {
		if errors.Is(err, c.is) {
			return c.what
		}
	}
	switch {
	case errors.As(err, &sf), errors.Is(err, ErrSetup):
		return "setup error (see debussy logs)"
	case errors.Is(err, ErrPhaseFailed):
		return "failed (see debussy logs)"
	}
	return "error (see debussy logs)"
}

// agentReason is the agent's own reason as it may be published: one
// line, redacted, at most maxAgentReason runes.
func agentReason(s string) string {
	return text.OneLine(secrets.Redact(s), maxAgentReason)
}

// gatePublic says which gate failed and how: its ordinal and name (the
// plan's words), its exit code — not its command or output.
func gatePublic(res []gate.Result) string {
	if len(res) == 0 {
		return "a gate failed"
	}
	g := res[len(res)-1]
	name := text.OneLine(secrets.Redact(g.Gate.Name), 60)
	switch {
	case g.Err != nil:
		return fmt.Sprintf("gate %d %q could not run", len(res), name)
	case g.TimedOut:
		return fmt.Sprintf("gate %d %q timed out", len(res), name)
	case g.Missing() != "":
		return fmt.Sprintf("gate %d %q cannot run (exit %d)", len(res), name, g.ExitCode)
	}
	return fmt.Sprintf("gate %d %q failed (exit %d)", len(res), name, g.ExitCode)
}

// classWord names a session failure's class where it is published.
func classWord(c failure.Class) string {
	if c == failure.None {
		return "session failed"
	}
	return string(c)
}
