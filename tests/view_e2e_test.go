package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// On a terminal the run draws its live panel — the phase, its session and
// context bar — below whole log lines, erases it before the summary, and
// the summary arrives intact. The same run without a terminal is covered by
// TestRunTwoPhasesComplete: plain lines, no escapes.
func TestLiveViewOnTerminal(t *testing.T) {
	claudetest.OncePerSuite(t, "the live view on a terminal")
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{
		{Name: "p1", Match: phaseMatch("1"), Turns: []fakeapi.Turn{
			turn(90000, fakeapi.Text("Writing a.txt."), fakeapi.Write("a.txt", "alpha\n")),
			// A long tool: the panel says what it does once it runs past 5 s.
			turn(92000, fakeapi.Block{Tool: "Bash", Input: map[string]any{"command": pause("7"), "description": "wait for the build to settle"}}),
			turn(95000, fakeapi.Bash(pause("1")+" && debussy done --phase 1")),
			turn(96000, fakeapi.Text("Phase 1 done.")),
		}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Alpha", Gates: []string{"exists: `test -f a.txt`"}}}, "")
	out, err := h.onTerminal(t, nil, "run", "plan/MASTER_PLAN.md")
	if err != nil {
		t.Fatalf("debussy run on a terminal: %v", err)
	}

	// No OSC queries (ESC ] 10/11 ;?): their answers would arrive on stdin.
	if i := strings.Index(out, "\x1b]1"); i >= 0 {
		t.Errorf("debussy queried the terminal: %q", out[i:min(i+20, len(out))])
	}
	plain := stripANSI(out)
	panel := regexp.MustCompile(`phase 1 Alpha · session 1 · [█░]{12} \d+% [\d.]+[kK]?/\d+[kKM]`)
	if !panel.MatchString(plain) {
		t.Errorf("no panel line with the phase, its session and context bar")
	}
	if !regexp.MustCompile(`running wait for the build to settle [5-9]s`).MatchString(plain) {
		t.Errorf("the panel never said what the long tool was doing")
	}
	// The summary comes as whole lines (the panel redraws between them),
	// and the run ends with the panel erased.
	for _, line := range []string{`run \S+: completed`, `PHASE +STATUS +SESSIONS.*`, `1 +completed +1 .*`} {
		if !regexp.MustCompile(`(?m)^\r?` + line + `\r$`).MatchString(plain) {
			t.Errorf("no whole summary line %s", line)
		}
	}
	end := strings.LastIndex(out, "\x1b[K\r\n") // the last panel line drawn
	if rest := out[end+len("\x1b[K\r\n"):]; end < 0 || !strings.HasPrefix(rest, "\x1b[1A\r\x1b[J") || strings.Contains(rest, "phase 1") {
		t.Errorf("the panel is left on the screen at the end: %q", out[max(end-200, 0):])
	}
	if !regexp.MustCompile(`(?m)INFO.*phase.*\r$`).MatchString(plain) {
		t.Errorf("no whole log line on the terminal")
	}
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }
