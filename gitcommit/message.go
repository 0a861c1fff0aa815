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
	Event   string // Debussy-Event: restart, completed, failed or interrupted
	Session int    // Debussy-Session
}

// String renders subject, blank line, body, blank line, trailers. Newlines
// inside the subject and trailer values are folded to spaces so neither can
// break the format. Empty Run/Phase/Event trailers are left out; Session is
// written whenever any trailer is (session 0 is a real session). A message
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
	for _, t := range []trailer{{"Debussy-Run", m.Run}, {"Debussy-Phase", m.Phase}, {"Debussy-Event", m.Event}} {
		if v := oneLine(t.value); v != "" {
			ts = append(ts, trailer{t.key, v})
		}
	}
	if len(ts) > 0 || m.Session != 0 {
		ts = append(ts, trailer{"Debussy-Session", strconv.Itoa(m.Session)})
		b.WriteString("\n")
		for _, t := range ts {
			b.WriteString(t.key + ": " + t.value + "\n")
		}
	}
	return b.String()
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func oneLine(s string) string { return strings.TrimSpace(lineBreaks.Replace(s)) }
