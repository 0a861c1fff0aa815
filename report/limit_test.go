package report

import (
	"bytes"
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
