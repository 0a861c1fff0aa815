package gitcommit

import (
	"strconv"
	"strings"
)

// Message is a commit message whose trailers make git history a ledger of
// debussy's runs: `git log --format='%(trailers:key=Debussy-Run)'` finds them.
type Message struct {
	Subject string // one line, e.g. `debussy: phase 2 "Endpoints" — checkpoint before restart 1/3`
	Body    string // optional paragraphs
	Run     string // Debussy-Run
	Phase   string // Debussy-Phase
	Event   string // Debussy-Event: restart, retry, remediation, or an outcome (see IsOutcome)
	Session int    // Debussy-Session
	// Plan is the master plan's path relative to the repository root
	// (Debussy-Plan): phase ids repeat across plans.
	Plan string
	// Sessions and Restarts (Debussy-Sessions, Debussy-Restarts) are what
	// the phase took so far; written on outcome events only.
	Sessions, Restarts int
	// Reason (Debussy-Reason) says why a phase failed or was blocked: one
	// line, cut to MaxReason runes. The caller redacts secrets first.
	Reason string
	// UsageLimit (Debussy-Usage-Limit) records a usage limit the session
	// met, "<kind>; resets=<RFC3339>": the account's, read by every job
	// that sees the commit (remote.LimitTrailer).
	UsageLimit string
}

// MaxReason bounds the Debussy-Reason trailer, in runes: a ledger entry,
// not a log.
const MaxReason = 200

// IsOutcome reports whether a Debussy-Event value ends a phase (completed,
// failed, blocked, interrupted) rather than marking a step inside it.
func IsOutcome(event string) bool {
	switch event {
	case "completed", "failed", "blocked", "interrupted":
		return true
	}
	return false
}

// String renders subject, blank line, body, blank line, trailers. Newlines
// inside the subject and trailer values are folded to spaces so neither can
// break the format. Empty Run/Plan/Phase/Event/Reason trailers are left out;
// Session is written whenever any trailer is (session 0 is a real session),
// Sessions and Restarts with every outcome event. A message
// with no subject gets one made from Phase and Event.
func (m Message) String() string {
	var b strings.Builder
	subject := oneLine(m.Subject)
	if subject == "" {
		subject = "debussy:"
		if p := oneLine(m.Phase); p != "" {
			subject += " phase " + p
		}
		if e := oneLine(m.Event); e != "" {
			subject += " — " + e
		}
	}
	b.WriteString(subject)
	b.WriteString("\n")
	if body := strings.Trim(m.Body, "\n"); strings.TrimSpace(body) != "" {
		b.WriteString("\n")
		b.WriteString(strings.TrimRight(body, " \t\n"))
		b.WriteString("\n")
	}

	type trailer struct{ key, value string }
	var ts []trailer
	for _, t := range []trailer{{"Debussy-Run", m.Run}, {"Debussy-Plan", m.Plan}, {"Debussy-Phase", m.Phase}, {"Debussy-Event", m.Event}} {
		if v := oneLine(t.value); v != "" {
			ts = append(ts, trailer{t.key, v})
		}
	}
	if len(ts) > 0 || m.Session != 0 {
		ts = append(ts, trailer{"Debussy-Session", strconv.Itoa(m.Session)})
		if IsOutcome(oneLine(m.Event)) {
			ts = append(ts, trailer{"Debussy-Sessions", strconv.Itoa(m.Sessions)},
				trailer{"Debussy-Restarts", strconv.Itoa(m.Restarts)})
		}
		if r := reasonLine(m.Reason); r != "" {
			ts = append(ts, trailer{"Debussy-Reason", r})
		}
		if l := oneLine(m.UsageLimit); l != "" {
			ts = append(ts, trailer{"Debussy-Usage-Limit", l})
		}
		b.WriteString("\n")
		for _, t := range ts {
			b.WriteString(t.key + ": " + t.value + "\n")
		}
	}
	return b.String()
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func oneLine(s string) string { return strings.TrimSpace(lineBreaks.Replace(s)) }

// reasonLine is s as one line of single spaces, at most MaxReason runes.
func reasonLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > MaxReason {
		s = strings.TrimSpace(string(r[:MaxReason-1])) + "…"
	}
	return s
}
