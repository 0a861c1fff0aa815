package gitcommit

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/fuzzguard"
)

// FuzzParseTrailers: any message parses without a panic into trailers
// whose keys git would accept (letters, digits, dashes); and the trailers
// Message writes read back as written, whatever the subject, body and
// values hold.
func FuzzParseTrailers(f *testing.F) {
	f.Add("subject\n\nDebussy-Phase: 1\nDebussy-Event: failed\n", "1", "completed", "body", "why")
	f.Add("subject\n\nDebussy-Reason: a long\n  reason folded\n\tover lines\nDebussy-Phase: 2\n", "2 b", "x", "", "")
	f.Add("subject\n\nDebussy-Phase: 1\nprose here\nSigned-off-by: A <a@b>\n", "", "", "Key: v\n\nOther: w", "multi\nline")
	f.Add("subject\r\n\r\nDebussy-Phase: 8\r\n# comment\r\n", " \t", "\n", "# not a comment\n", "\r\n")
	f.Fuzz(func(t *testing.T, msg, phase, event, body, reason string) {
		fuzzguard.Within(t, func() {
			for _, tr := range ParseTrailers(msg) {
				if tr.Key == "" || strings.Trim(tr.Key, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
					t.Fatalf("trailer key %q is not a git trailer key; message %q", tr.Key, msg)
				}
				if strings.Contains(tr.Value, "\n") {
					t.Fatalf("trailer value %q spans lines", tr.Value)
				}
			}
			m := Message{Subject: "debussy: fuzz", Body: body, Run: "r1", Phase: phase, Event: event, Session: 2, Reason: reason}
			got := map[string]string{}
			for _, tr := range ParseTrailers(m.String()) {
				got[tr.Key] = tr.Value
			}
			if got["Debussy-Run"] != "r1" || got["Debussy-Session"] != "2" {
				t.Fatalf("Run/Session do not read back from\n%s\ngot %v", m.String(), got)
			}
			if want := oneLine(phase); got["Debussy-Phase"] != want {
				t.Fatalf("Debussy-Phase: wrote %q, read %q from\n%s", want, got["Debussy-Phase"], m.String())
			}
		})
	})
}
