package policy

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// The context's limits: the lower of context_threshold and
// context_max_tokens, and no decision from a window still pending.
func TestContextLimit(t *testing.T) {
	at := func(tokens, window int64, pending bool) estimator.Snapshot {
		return estimator.Snapshot{Tokens: tokens, Window: window, WindowPending: pending, Percent: float64(tokens) * 100 / float64(window)}
	}
	const m, k = 1_000_000, 1_000
	tests := []struct {
		name      string
		threshold int
		cap       int64
		snap      estimator.Snapshot
		state     State
		reason    string // p.reason, "" none
		note      string // substring of the queued note, "" none
	}{
		{"1M known, 300K: runs on", 80, 400 * k, at(300*k, m, false), Working, "", ""},
		{"1M known, 352K: warned before the cap", 80, 400 * k, at(352*k, m, false), Warned, "",
			"your context is at 352K tokens; at 400K (context_max_tokens) you will be asked for a handoff"},
		{"1M known, 401K: the cap asks for the handoff", 80, 400 * k, at(401*k, m, false), HandoffRequested,
			"context 401K reached the cap context_max_tokens 400K (window 1M)", ""},
		{"200K known: the threshold is lower than the cap", 80, 400 * k, at(161*k, 200*k, false), HandoffRequested,
			"context 80.5 % of 200K ≥ 80 %", ""},
		{"200K known, warned by the threshold", 80, 400 * k, at(141*k, 200*k, false), Warned, "", "at 70% of the window; at 80%"},
		{"pending at 300K (150 % of the table's 200K): no stop, no emergency", 80, 400 * k, at(300*k, 200*k, true), Working, "", ""},
		{"pending at 250K", 80, 400 * k, at(250*k, 200*k, true), Working, "", ""},
		{"pending at 401K: the cap decides alone", 80, 400 * k, at(401*k, 200*k, true), HandoffRequested,
			"context 401K reached the cap context_max_tokens 400K (window not known yet)", ""},
		{"pending, cap off: nothing to judge", 80, 0, at(500*k, 200*k, true), Working, "", ""},
		{"cap off: the threshold of 1M", 80, 0, at(801*k, m, false), HandoffRequested, "context 80.1 % of 1M ≥ 80 %", ""},
		{"threshold off: the cap still applies", 100, 400 * k, at(401*k, m, false), HandoffRequested,
			"context 401K reached the cap context_max_tokens 400K (window 1M)", ""},
		{"threshold off: warned at 90 % of the cap", 100, 400 * k, at(361*k, m, false), Warned, "", "at 400K (context_max_tokens)"},
		{"the table's window after the CLI failed to answer is judged", 80, 400 * k, at(170*k, 200*k, false), HandoffRequested,
			"context 85 % of 200K ≥ 80 %", ""},
		{"the window's end on a known window: emergency", 80, 400 * k, at(197*k, 200*k, false), Stopping, "context 98 % of 200K ≥ 98 %", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.ContextThreshold, cfg.ContextMaxTokens = tt.threshold, tt.cap
			p := New(cfg, nil)
			p.Observe(runner.Event{}, tt.snap)
			if p.State() != tt.state || p.reason != tt.reason {
				t.Errorf("state %s reason %q, want %s %q", p.State(), p.reason, tt.state, tt.reason)
			}
			note := strings.Join(p.notes, "\n")
			if (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("note %q, want %q", note, tt.note)
			}
		})
	}
}

// An estimated context (no usage in the stream) is marked in the cap's
// reason as in the threshold's.
func TestContextLimitEstimated(t *testing.T) {
	cfg := testConfig()
	cfg.ContextMaxTokens = 400_000
	p := New(cfg, nil)
	p.Observe(runner.Event{}, estimator.Snapshot{Tokens: 401_000, Window: 1_000_000, Percent: 40.1, Estimated: true})
	if want := "context ~401K reached the cap context_max_tokens 400K (window 1M)"; p.reason != want {
		t.Errorf("reason %q, want %q", p.reason, want)
	}
}
