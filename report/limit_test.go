package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The context chart names and draws the limit that acted for each
// session's window: on the CLI's default 1M window the 400K cap (40 %), not
// the 80 % threshold; on 200K the threshold; with the warning before it.
// The markdown chart's title names it too.
func TestChartsNameTheLimitThatActed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		threshold int
		maxTokens int64
		window    int64
		label     string   // on the HTML chart
		title     string   // in the markdown chart's title
		lines     []string // the markdown chart's due and warning lines
		never     string
	}{
		{"1M window, the cap acts", 80, 400_000, 1_000_000, "cap context_max_tokens 400K = 40 %",
			"handoff at the cap context_max_tokens 400K (40 % of 1M, the 80 % threshold is 800K), warning at 350K",
			[]string{"line [40, 40]", "line [35, 35]"}, "threshold 80 %"},
		{"200K window, the threshold acts", 80, 400_000, 200_000, "threshold 80 % = 160K",
			"handoff at context_threshold 80 % (160K of 200K), warning at 140K", []string{"line [80, 80]", "line [70, 70]"}, "cap"},
		{"1M window, a low threshold acts", 30, 400_000, 1_000_000, "threshold 30 % = 300K",
			"handoff at context_threshold 30 % (300K of 1M), warning at 200K", []string{"line [30, 30]", "line [20, 20]"}, "cap"},
		{"no cap", 80, 0, 1_000_000, "threshold 80 % = 800K", "handoff at context_threshold 80 % (800K of 1M)", nil, "cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{RunID: "r1", Threshold: tc.threshold, MaxTokens: tc.maxTokens, Phases: []*Phase{{ID: "1", Sessions: []*Session{{
				N: 1, Window: tc.window, Points: []Point{{Turn: 1, Tokens: 100_000}, {Turn: 2, Tokens: 360_000}}}}}}}
			var page bytes.Buffer
			if err := HTML(&page, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page.String(), tc.label) {
				t.Errorf("the HTML chart does not say %q", tc.label)
			}
			if strings.Contains(page.String(), ">"+tc.never) {
				t.Errorf("the HTML chart says %q", tc.never)
			}
			var md strings.Builder
			Charts(&md, r)
			if !strings.Contains(md.String(), tc.title) {
				t.Errorf("the markdown chart's title does not say %q:\n%s", tc.title, md.String())
			}
			for _, l := range tc.lines {
				if !strings.Contains(md.String(), l) {
					t.Errorf("the markdown chart lacks %q:\n%s", l, md.String())
				}
			}
		})
	}
}

// An UNCHECKED gate (no command, not run) is never drawn as a pass: no
// green ✓ after its session, a grey "?" instead, and the phase's heading
// says UNCHECKED beside its status; a failed gate beside it still reads
// as a failure.
func TestHTMLUncheckedGateNotAPass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gates  []Gate
		letter string
	}{
		{"unchecked alone", []Gate{{Name: "i18n", Unchecked: true}}, "?"},
		{"passed and unchecked", []Gate{{Name: "test", Passed: true}, {Name: "i18n", Unchecked: true}}, "?"},
		{"failed and unchecked", []Gate{{Name: "test", ExitCode: 1}, {Name: "i18n", Unchecked: true}}, "✗"},
		{"passed", []Gate{{Name: "test", Passed: true}}, "✓"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.gates {
				tc.gates[i].AfterSession = 1
			}
			r := &Report{RunID: "r1", Status: "completed", Threshold: 80, Phases: []*Phase{{ID: "1", Status: "completed",
				Sessions: []*Session{{N: 1, Window: 200_000, Points: []Point{{Turn: 1, Tokens: 1000}}}}, Gates: tc.gates}}}
			var page bytes.Buffer
			if err := HTML(&page, r); err != nil {
				t.Fatal(err)
			}
			html := page.String()
			i := strings.Index(html, "gates after session 1:")
			if i < 0 {
				t.Fatal("no gates mark")
			}
			mark := html[i:min(i+400, len(html))]
			mark = mark[:strings.Index(mark, "</g>")]
			if !strings.Contains(mark, `class="letter">`+tc.letter+`<`) {
				t.Errorf("the gates mark is not %q:\n%s", tc.letter, mark)
			}
			if tc.letter != "✓" && strings.Contains(mark, "#16a34a") {
				t.Errorf("the gates mark is green:\n%s", mark)
			}
			want := slices.ContainsFunc(tc.gates, func(g Gate) bool { return g.Unchecked })
			if got := strings.Contains(html, `<span class="status unchecked"`); got != want {
				t.Errorf("UNCHECKED beside the phase's status: %v, want %v", got, want)
			}
		})
	}
}
