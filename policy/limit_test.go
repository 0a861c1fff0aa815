package policy

import "testing"

// The limit that acts is the lower of the threshold's share of the window
// and the cap, with the warning WarnBelow points before it; Words names it
// as the log and the report say it.
func TestContextLimitOf(t *testing.T) {
	for _, tc := range []struct {
		name          string
		thr           int
		maxTokens     int64
		window        int64
		at, warnAt    int64
		byCap         bool
		words         string
		pending, none bool
	}{
		{name: "1M: the cap", thr: 80, maxTokens: 400_000, window: 1_000_000, at: 400_000, warnAt: 350_000, byCap: true,
			words: "the cap context_max_tokens 400K (40 % of 1M; the 80 % threshold is 800K)"},
		{name: "200K: the threshold", thr: 80, maxTokens: 400_000, window: 200_000, at: 160_000, warnAt: 140_000,
			words: "context_threshold 80 % (160K of 200K)"},
		{name: "no cap", thr: 80, window: 1_000_000, at: 800_000, warnAt: 700_000, words: "context_threshold 80 % (800K of 1M)"},
		{name: "window pending: the cap", thr: 80, maxTokens: 400_000, at: 400_000, warnAt: 350_000, byCap: true,
			words: "the cap context_max_tokens 400K (window not known yet)"},
		{name: "threshold off, cap on", thr: 100, maxTokens: 400_000, window: 1_000_000, at: 400_000, warnAt: 360_000, byCap: true,
			words: "the cap context_max_tokens 400K (40 % of 1M)"},
		{name: "both off", thr: 100, window: 1_000_000, words: "no context limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := ContextLimitOf(tc.thr, tc.maxTokens, tc.window)
			if l.At != tc.at || l.WarnAt != tc.warnAt || l.ByCap != tc.byCap {
				t.Errorf("limit %+v, want at %d warn %d byCap %v", l, tc.at, tc.warnAt, tc.byCap)
			}
			if w := l.Words(tc.thr, tc.window); w != tc.words {
				t.Errorf("words %q, want %q", w, tc.words)
			}
		})
	}
}
