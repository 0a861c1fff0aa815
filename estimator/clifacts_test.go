package estimator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// cliAnswer is a get_context_usage answer recorded from the real CLI.
func cliAnswer(t *testing.T, name string) runner.Event {
	t.Helper()
	line, err := os.ReadFile(filepath.Join("..", "runner", "testdata", "contextusage", name))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := runner.Parse(line)
	if err != nil || ev.ContextUsage == nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return ev
}

// The case: 2.1.330's default model, unknown to the table, with a
// first response at 300K. The CLI's answer says 1M; while it is awaited
// the table's 200K is pending, never judged.
func TestWindowFromCLI(t *testing.T) {
	initEv := runner.Event{Kind: runner.KindInit, Init: &runner.Init{Model: "claude-opus-5-5", Version: "2.1.332"}}
	resp := runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m1", Model: "claude-opus-5-5",
		Usage: runner.Usage{InputTokens: 300_000}}}
	refused := runner.Event{Kind: runner.KindContextUsage, ContextUsage: &runner.ContextUsage{Error: "claude refused get_context_usage: Unknown subtype"}}
	known := func(version, model string) *runner.KnownContext {
		return &runner.KnownContext{Version: version, Model: model, Usage: *cliAnswer(t, "2.1.330-default.json").ContextUsage}
	}
	await := Config{AwaitCLI: true}
	tests := []struct {
		name        string
		cfg         Config
		evs         []runner.Event
		wantWindow  int64
		wantCompact int64 // CompactionPoints
		wantPending bool
	}{
		{"the CLI's window", await, []runner.Event{cliAnswer(t, "2.1.330-default.json"), initEv, resp},
			LongWindow, 967_000, false},
		{"the answer after the first response: pending until then", await, []runner.Event{initEv, resp},
			DefaultWindow, 167_000, true},
		{"the answer after the first response", await, []runner.Event{initEv, resp, cliAnswer(t, "2.1.330-default.json")},
			LongWindow, 967_000, false},
		{"a failed request falls back to the table", await, []runner.Event{refused, initEv, resp},
			DefaultWindow, 167_000, false},
		{"not asked: the table", Config{}, []runner.Event{initEv, resp},
			DefaultWindow, 167_000, false},
		{"a [1m] name says 1M itself", await, []runner.Event{
			{Kind: runner.KindInit, Init: &runner.Init{Model: "claude-opus-4-8[1m]"}}, resp},
			LongWindow, 967_000, false},
		{"an earlier session's answer for the same CLI and model", Config{Known: known("2.1.332", "claude-opus-5-5")}, []runner.Event{initEv, resp},
			LongWindow, 967_000, false},
		{"an earlier answer for another CLI version is not used", Config{Known: known("2.1.331", "claude-opus-5-5")}, []runner.Event{initEv, resp},
			DefaultWindow, 167_000, true},
		{"an earlier answer for another model is not used", Config{Known: known("2.1.332", "claude-sonnet-4-5")}, []runner.Event{initEv, resp},
			DefaultWindow, 167_000, true},
		{"an earlier session's window until the CLI answers", Config{AwaitCLI: true, LearnedWindow: LongWindow}, []runner.Event{refused, initEv, resp},
			LongWindow, 967_000, false},
		{"the CLI's answer before an earlier session's", Config{AwaitCLI: true, LearnedWindow: 2_000_000}, []runner.Event{cliAnswer(t, "2.1.330-default.json"), initEv, resp},
			LongWindow, 967_000, false},
		{"context_window still wins", Config{AwaitCLI: true, Window: 2_000_000}, []runner.Event{initEv, resp},
			2_000_000, 1_967_000, false},
		{"no buffer: the CLI will not compact", await, []runner.Event{cliAnswer(t, "2.1.330-sonnet-4-5.json"), initEv},
			DefaultWindow, 0, false},
		{"2.1.197 names the buffer only", await, []runner.Event{cliAnswer(t, "2.1.197-sonnet-4-6.json"), initEv},
			DefaultWindow, 167_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := last(run(tt.cfg, tt.evs))
			if got.Window != tt.wantWindow || got.WindowPending != tt.wantPending || got.Trigger != TriggerNone {
				t.Errorf("window %d pending %v trigger %q; want %d %v, no trigger", got.Window, got.WindowPending, got.Trigger, tt.wantWindow, tt.wantPending)
			}
			if c, _ := CompactionPoints(got); c != tt.wantCompact {
				t.Errorf("compaction point %d, want %d", c, tt.wantCompact)
			}
		})
	}
}

// A later answer (the model changed) replaces the first; the result's own
// window does not override what the CLI said at the start.
func TestCLIWindowFollowsLatestAnswer(t *testing.T) {
	e := New(Config{})
	e.Observe(cliAnswer(t, "2.1.330-default.json"))
	e.Observe(runner.Event{Kind: runner.KindResult, Result: &runner.Result{ModelUsage: map[string]runner.ModelUsage{
		"claude-opus-5-5": {InputTokens: 10, ContextWindow: LongWindow}}}})
	if s := e.Snapshot(); s.Window != LongWindow || s.CLIWindow != LongWindow || s.CLICompactAt != 967_000 {
		t.Fatalf("snapshot %+v", s)
	}
	s := e.Observe(cliAnswer(t, "2.1.330-sonnet-4-6.json"))
	if s.Window != DefaultWindow || s.CLICompactAt != 167_000 {
		t.Errorf("after the second answer: window %d compact %d", s.Window, s.CLICompactAt)
	}
}
