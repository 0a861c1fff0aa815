package estimator

import (
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/runner/runnertest"
)

func fixture(t *testing.T, name string) []runner.Event {
	t.Helper()
	return runnertest.Events(t, filepath.Join("testdata", name))
}

// run feeds events and returns the snapshot after each.
func run(cfg Config, evs []runner.Event) []Snapshot {
	e := New(cfg)
	out := make([]Snapshot, 0, len(evs))
	for _, ev := range evs {
		out = append(out, e.Observe(ev))
	}
	return out
}

func last(s []Snapshot) Snapshot { return s[len(s)-1] }

func TestMultiblockCountsOnce(t *testing.T) {
	snaps := run(Config{}, fixture(t, "multiblock-then-sigint.jsonl"))
	// Lines 1..3 are one response (text, Write, Bash) with the same usage.
	for i := 1; i <= 3; i++ {
		if got := snaps[i]; got.Messages != 1 || got.Tokens != 23_500 {
			t.Errorf("line %d: messages %d tokens %d, want 1 and 23500", i, got.Messages, got.Tokens)
		}
	}
	if got := snaps[3].ToolCalls; got != 2 {
		t.Errorf("tool calls after the multiblock response = %d, want 2", got)
	}
	got := last(snaps)
	want := Snapshot{Tokens: 29_000, Window: LongWindow, Percent: 2.9, Model: "claude-opus-4-8[1m]",
		ToolCalls: 3, Messages: 2, ResultWindow: LongWindow, CostUSD: 0.063375}
	if got != want {
		t.Errorf("final snapshot\n got %+v\nwant %+v", got, want)
	}
}

func TestSubagentDoesNotMoveMainContext(t *testing.T) {
	evs := fixture(t, "subagent.jsonl")
	snaps := run(Config{}, evs)
	for i, s := range snaps[1:6] {
		if s.Tokens != 20_000 {
			t.Errorf("event %d (%s): tokens %d, want the main thread's 20000", i+1, evs[i+1].Kind, s.Tokens)
		}
	}
	got := last(snaps)
	if got.Tokens != 21_500 || got.Messages != 2 || got.ToolCalls != 1 || got.SubagentCalls != 2 {
		t.Errorf("got tokens %d messages %d tool calls %d subagent calls %d, want 21500 2 1 2",
			got.Tokens, got.Messages, got.ToolCalls, got.SubagentCalls)
	}
	if got.Trigger != TriggerNone {
		t.Errorf("trigger %q from a subagent's context (%s)", got.Trigger, got.Reason)
	}
	// modelUsage has a busier haiku entry; the init model's entry wins.
	if got.ResultWindow != DefaultWindow {
		t.Errorf("result window %d, want %d", got.ResultWindow, DefaultWindow)
	}
}

func TestWindowFollowsModel(t *testing.T) {
	initEv := func(model string) runner.Event {
		return runner.Event{Kind: runner.KindInit, Init: &runner.Init{Model: model}}
	}
	resultEv := func(mu map[string]runner.ModelUsage) runner.Event {
		return runner.Event{Kind: runner.KindResult, Result: &runner.Result{ModelUsage: mu}}
	}
	tests := []struct {
		name         string
		cfg          Config
		evs          []runner.Event
		window       int64
		resultWindow int64
	}{
		{name: "opus 1m fixture", evs: fixture(t, "success-simple.jsonl")[:1], window: LongWindow},
		{name: "sonnet fixture", evs: fixture(t, "success-sonnet-200k.jsonl")[:1], window: DefaultWindow},
		{name: "opus 1m full run", evs: fixture(t, "success-simple.jsonl"), window: LongWindow, resultWindow: LongWindow},
		{name: "no init", window: DefaultWindow},
		{name: "config wins", cfg: Config{Window: 500_000}, evs: []runner.Event{initEv("claude-opus-4-8[1m]")}, window: 500_000},
		{
			name: "result corrects the model guess",
			evs: []runner.Event{initEv("claude-sonnet-4-5"), resultEv(map[string]runner.ModelUsage{
				"claude-sonnet-4-5": {InputTokens: 10, ContextWindow: 1_000_000},
			})},
			window: LongWindow, resultWindow: LongWindow,
		},
		{
			name: "result matches init model without the 1m suffix",
			evs: []runner.Event{initEv("claude-opus-4-8[1m]"), resultEv(map[string]runner.ModelUsage{
				"claude-haiku-4-5": {InputTokens: 900_000, ContextWindow: 200_000},
				"claude-opus-4-8":  {InputTokens: 10, ContextWindow: 1_000_000},
			})},
			window: LongWindow, resultWindow: LongWindow,
		},
		{
			name: "no matching entry: the busiest model",
			evs: []runner.Event{initEv("claude-x"), resultEv(map[string]runner.ModelUsage{
				"claude-haiku-4-5": {InputTokens: 100, ContextWindow: 1_000_000},
				"claude-sonnet-4-5": {InputTokens: 1000, CacheReadInputTokens: 5000,
					ContextWindow: 200_000},
			})},
			window: DefaultWindow, resultWindow: DefaultWindow,
		},
		{
			name: "config wins over result",
			cfg:  Config{Window: 300_000},
			evs: []runner.Event{initEv("claude-sonnet-4-5"), resultEv(map[string]runner.ModelUsage{
				"claude-sonnet-4-5": {ContextWindow: 200_000},
			})},
			window: 300_000, resultWindow: DefaultWindow,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(tt.cfg)
			for _, ev := range tt.evs {
				e.Observe(ev)
			}
			got := e.Snapshot()
			if got.Window != tt.window || got.ResultWindow != tt.resultWindow {
				t.Errorf("window %d result window %d, want %d %d", got.Window, got.ResultWindow, tt.window, tt.resultWindow)
			}
		})
	}
}

func TestSonnet200K(t *testing.T) {
	evs := fixture(t, "success-sonnet-200k.jsonl")
	snaps := run(Config{}, evs)
	// init, 185K response, result, 192K response, result, 1K response, result.
	wantPercent := []float64{0, 92.5, 92.5, 96, 96, 0.5, 0.5}
	for i, s := range snaps {
		if s.Percent != wantPercent[i] {
			t.Errorf("event %d (%s): percent %v, want %v", i, evs[i].Kind, s.Percent, wantPercent[i])
		}
	}
	for i, s := range snaps {
		if s.Trigger != TriggerNone {
			t.Errorf("event %d: trigger %q: the estimator measures, policy decides", i, s.Trigger)
		}
	}
	if got := last(snaps); got.Tokens != 1000 || got.CostUSD != 0.13005 || got.Estimated {
		t.Errorf("final tokens %d cost %v estimated %v", got.Tokens, got.CostUSD, got.Estimated)
	}
}

func TestCompactionTrigger(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		at      int
		reason  string
		tokens  int64
		percent float64
	}{
		// status "compacting" alone is an attempt (blocked by PreCompact,
		// or failing into "Prompt is too long"), not a compaction.
		{name: "status compacting", file: "prompt-too-long.jsonl", at: 1 << 30,
			tokens: 152_000, percent: 76},
		{name: "compact boundary", file: "compact-boundary.jsonl", at: 2,
			reason: "the CLI compacted the context at 190.5K tokens", tokens: 12_000, percent: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Thresholds are disabled: a compaction triggers regardless.
			snaps := run(Config{}, fixture(t, tt.file))
			for i, s := range snaps {
				want := TriggerNone
				if i >= tt.at {
					want = TriggerCompaction
				}
				if s.Trigger != want {
					t.Fatalf("event %d: trigger %q, want %q", i, s.Trigger, want)
				}
				if want != TriggerNone && s.Reason != tt.reason {
					t.Errorf("event %d: reason %q, want %q", i, s.Reason, tt.reason)
				}
			}
			// The synthetic zero-usage "Prompt is too long" line must not
			// reset the context figure.
			if got := last(snaps); got.Tokens != tt.tokens || got.Percent != tt.percent {
				t.Errorf("final tokens %d percent %v, want %d %v", got.Tokens, got.Percent, tt.tokens, tt.percent)
			}
		})
	}
}

func TestFallbackEstimate(t *testing.T) {
	t.Run("stream without usage", func(t *testing.T) {
		snaps := run(Config{PromptChars: 800}, fixture(t, "no-usage.jsonl"))
		if snaps[0].Tokens != 0 || snaps[0].Estimated {
			t.Errorf("before any response: tokens %d estimated %v, want 0 false", snaps[0].Tokens, snaps[0].Estimated)
		}
		// 800 prompt + 25 Bash input + 11 tool result + 7 text = 843 chars.
		got := last(snaps)
		if !got.Estimated || got.Tokens != 211 || got.Messages != 2 || got.ToolCalls != 1 {
			t.Errorf("got %+v, want estimated 211 tokens, 2 messages, 1 tool call", got)
		}
	})
	t.Run("an estimate is marked", func(t *testing.T) {
		e := New(Config{PromptChars: 700_000})
		e.Observe(runner.Event{Kind: runner.KindInit, Init: &runner.Init{Model: "claude-sonnet-4-5"}})
		got := e.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m", Text: "hi"}})
		if !got.Estimated || FormatPercent(got.Percent) != "87.5" || got.Trigger != TriggerNone {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("usage replaces the estimate", func(t *testing.T) {
		snaps := run(Config{PromptChars: 1_000_000}, fixture(t, "success-simple.jsonl"))
		for i, s := range snaps {
			if s.Estimated {
				t.Errorf("event %d: estimated with usage present", i)
			}
		}
		if got := last(snaps); got.Tokens != 6000 {
			t.Errorf("tokens %d, want 6000", got.Tokens)
		}
	})
}

func TestSecondTurnSameSession(t *testing.T) {
	// Two results: cost is the latest (cumulative), not a sum.
	got := last(run(Config{}, fixture(t, "interrupt-then-followup.jsonl")))
	if got.CostUSD != 0.0879 || got.Messages != 4 || got.ToolCalls != 3 || got.Tokens != 1000 {
		t.Errorf("got %+v", got)
	}
}

func TestFormatTokens(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{950, "950"},
		{1000, "1K"},
		{83_412, "83.4K"},
		{185_000, "185K"},
		{200_000, "200K"},
		{999_949, "999.9K"},
		{999_950, "1M"},
		{1_000_000, "1M"},
		{1_250_000, "1.2M"},
		{-2500, "-2.5K"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatTokens(tt.n); got != tt.want {
				t.Errorf("FormatTokens(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

// A fork subagent (2.1.332, the Agent tool with subagent_type "fork",
// backgrounded) is a subagent: its lines carry the Agent call's id as
// parent_tool_use_id, and its context — the parent's whole conversation
// plus its own turns — never becomes the main thread's; the Agent call
// counts as a delegation for the zones. Recorded against the fake API; the
// fork's usage raised in the file (the fake answered it with the parent's
// figure) so the test can tell the two apart.
func TestForkSubagentIsASubagent(t *testing.T) {
	evs := fixture(t, "fork-subagent-2.1.332.jsonl")
	snaps := run(Config{}, evs)
	for i, ev := range evs {
		if ev.Assistant != nil && !ev.Assistant.MainThread() && snaps[i].Tokens != 53_200 {
			t.Errorf("event %d (the fork's response): main context %d, want 53200", i, snaps[i].Tokens)
		}
	}
	got := last(snaps)
	if got.Tokens != 54_300 || got.Delegations != 1 || got.ToolCalls != 1 || got.Trigger != TriggerNone {
		t.Errorf("got tokens %d delegations %d tool calls %d trigger %q; want 54300, 1, 1, none", got.Tokens, got.Delegations, got.ToolCalls, got.Trigger)
	}
}
