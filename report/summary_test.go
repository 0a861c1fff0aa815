package report

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// contains checks that got holds each of want, or not when it starts with "!".
func contains(t *testing.T, what, got string, want []string) {
	t.Helper()
	for _, w := range want {
		s, absent := strings.CutPrefix(w, "!")
		if strings.Contains(got, s) == absent {
			t.Errorf("%s: contains %q = %v, want %v\n%s", what, s, absent, !absent, got)
		}
	}
}

// The summaries: the phase and run spend lines, the step summary's total.
func TestSpendSummaries(t *testing.T) {
	run := &state.Run{ID: "r1", Status: state.StatusFailed, Phases: []*state.PhaseRecord{
		{ID: "1", Status: state.StatusCompleted, Tokens: 60_000, CostUSD: 0.25, Economics: &state.Economics{Tokens: 60_000, CostUSD: 0.25, APITurns: 4}},
		{ID: "2", Status: state.StatusFailed, Tokens: 101_200, CostUSD: 0.5, Economics: &state.Economics{Tokens: 101_200, CostUSD: 0.5, APITurns: 9,
			WallMs: 61_000, Limits: state.Limits{Tokens: 100_000}, Enforcement: "strict", UsedPct: 101.2, Level: "exhausted", Exhausted: true, Extensions: 1}},
	}, Economics: &state.Economics{Tokens: 161_200, CostUSD: 0.75, APITurns: 13}}
	var b strings.Builder
	Summary(&b, run)
	contains(t, "summary", b.String(), []string{"this run: 161.2K tokens, $0.75", "!plan, across its runs", "2      failed     0         0         0         101.2K  $0.50",
		"phase 2 budget: spent 101.2K tokens, $0.50, 9 API turns, 1m1s; budget tokens 100K: 101 % used, level exhausted (strict), extended 1×, exhausted", "!phase 1: spent"})
	contains(t, "step summary", StepSummary("P", run), []string{"| **total** | | | | | 161.2K | $0.75 | |",
		"**plan spend**: spent 161.2K tokens, $0.75, 13 API turns", "**phase 2**: spent 101.2K tokens"})

	// Resumed: phase 2 spent 40K in an earlier run. "this run" counts this
	// run's alone; the plan's line, every run's.
	run.Phases[1].PriorTokens, run.Phases[1].PriorCostUSD = 40_000, 0.2
	b.Reset()
	Summary(&b, run)
	want := []string{"this run: 161.2K tokens, $0.75", "plan, across its runs: 201.2K tokens, $0.95",
		"phase 2: 141.2K tokens, $0.70 across its runs (this run 101.2K, $0.50; earlier runs 40K, $0.20)"}
	contains(t, "resumed summary", b.String(), append(want, "!phase 1: 60K tokens"))

	// The report says the same figures, from the same functions: its
	// header this run's and the plan's, a phase's row this run's, its
	// section the phase's across its runs.
	run.Phases[1].Sessions = 1
	r := Build(Input{Run: run})
	var md strings.Builder
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	contains(t, "report", md.String(), append(want[:2], "\n141.2K tokens, $0.70 across its runs (this run 101.2K, $0.50; earlier runs 40K, $0.20)",
		"this run: 161.2K tokens, $0.75 · plan, across its runs: 201.2K tokens, $0.95",
		"| 2 |  | failed | 1 | 0 | 101.2K | $0.50 |"))
	var html strings.Builder
	if err := HTML(&html, r); err != nil {
		t.Fatal(err)
	}
	contains(t, "html report", html.String(), []string{"this run: 161.2K tokens, $0.75 · plan, across its runs: 201.2K tokens, $0.95",
		"this run: 101.2K tokens, $0.50 · 141.2K tokens, $0.70 across its runs (this run 101.2K, $0.50; earlier runs 40K, $0.20)"})
}

func TestLimitText(t *testing.T) {
	tests := []struct {
		name string
		l    state.Limits
		want string
	}{
		{name: "none", want: ""},
		{name: "tokens", l: state.Limits{Tokens: 100_000}, want: "tokens 100K"},
		{name: "all three", l: state.Limits{Tokens: 2_500_000, CostUSD: 2, DurationMs: 90 * 60 * 1000}, want: "tokens 2.5M, cost $2.00, time 1h30m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LimitText(tt.l); got != tt.want {
				t.Errorf("LimitText(%+v) = %q, want %q", tt.l, got, tt.want)
			}
		})
	}
	if got := SpendLine(nil); got != "" {
		t.Errorf("SpendLine(nil) = %q, want empty", got)
	}
}

func TestSummaryListsUncheckedGates(t *testing.T) {
	run := &state.Run{ID: "r1", Status: state.StatusCompleted, Phases: []*state.PhaseRecord{
		{ID: "1", Status: state.StatusCompleted, Attempts: 1, UncheckedGates: []string{"i18n", "docs"}},
		{ID: "2", Status: state.StatusCompleted},
		{ID: "3", Status: state.StatusSkipped, UncheckedGates: []string{"skipped-gate"}}, // never ran: nothing to say
	}}
	var b strings.Builder
	Summary(&b, run)
	if want := "phase 1: UNCHECKED (no command, not run): i18n, docs"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "skipped-gate") {
		t.Errorf("summary lists a skipped phase's gate:\n%s", b.String())
	}
	md := StepSummary("P", run)
	if want := "**phase 1**: UNCHECKED gates (no command, not run): i18n, docs"; !strings.Contains(md, want) {
		t.Errorf("step summary lacks %q:\n%s", want, md)
	}
}

// The step summary goes to GitHub: a phase's error text (a gate's
// command and output, whatever secret it holds, of a shape no rule knows)
// does not; its structured reason does, redacted.
func TestStepSummaryRedacts(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	const unknown = "qz7Lm2pX9vRt"
	run := &state.Run{ID: "r1", Status: state.StatusFailed, Phases: []*state.PhaseRecord{
		{ID: "1", Status: state.StatusFailed, LastError: "gate test (`./check " + unknown + "`) exit 1: ANTHROPIC_API_KEY=" + key,
			Reason: `phase 1 failed on attempt 2: gate 1 "test" failed (exit 1)`},
		{ID: "2", Status: state.StatusBlocked, LastError: "old record, no reason: " + unknown}}}
	md := StepSummary("P", run)
	for _, leak := range []string{key, unknown, "./check"} {
		if strings.Contains(md, leak) {
			t.Errorf("step summary holds %q:\n%s", leak, md)
		}
	}
	for _, want := range []string{`phase 1 failed on attempt 2: gate 1 "test" failed (exit 1)`, "phase 2: blocked (see debussy logs)"} {
		if !strings.Contains(md, want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}
}

// A phase's last error names the phase once, whichever way it begins.
func TestPhaseErrorNamesThePhaseOnce(t *testing.T) {
	for _, tt := range []struct{ last, want string }{
		{"phase 1: budget exhausted: phase tokens 101.1K of 100K", "phase 1: budget exhausted: phase tokens 101.1K of 100K"},
		{"phase 1 failed: gate lint", "phase 1 failed: gate lint"},
		{"gate lint failed", "phase 1: gate lint failed"},
		{"phase 12: other phase's words", "phase 1: phase 12: other phase's words"},
	} {
		if got := phaseError(&state.PhaseRecord{ID: "1", LastError: tt.last}); got != tt.want {
			t.Errorf("phaseError(%q) = %q, want %q", tt.last, got, tt.want)
		}
	}
}

// The summary names the phases running at the failure and what became of
// each, with and without --fail-fast.
func TestAfterFailureLines(t *testing.T) {
	run := &state.Run{Phases: []*state.PhaseRecord{
		{ID: "1", Status: state.StatusFailed},
		{ID: "2", Status: state.StatusCompleted, Merge: "1111111111", Commits: []string{"aaaaaaaaaa", "1111111111"}},
		{ID: "3", Status: state.StatusInterrupted, Branch: "debussy/r/phase-3", Commits: []string{"3333333333"}},
	}}
	run.AfterFailure = &state.AfterFailure{Phase: "1", Running: []string{"2", "3"}}
	want := "phase 1 failed while phases 2, 3 were running; without --fail-fast they went on to their end:\n" +
		"  phase 2: finished: completed, merged into your branch at 1111111\n" +
		"  phase 3: interrupted, its work committed on branch debussy/r/phase-3 at 3333333; run the same command again to resume it"
	if got := strings.Join(afterFailureLines(run), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	run.AfterFailure.FailFast = true
	if got := strings.Join(afterFailureLines(run), "\n"); !strings.Contains(got, "phase 3: stopped by --fail-fast, its work committed on branch debussy/r/phase-3 at 3333333") {
		t.Errorf("fail-fast: %s", got)
	}
}
