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
// first response at 300K. The CLI's answer says 1M, so it runs on.
func TestWindowFromCLI(t *testing.T) {
	initEv := runner.Event{Kind: runner.KindInit, Init: &runner.Init{Model: "claude-opus-5-5"}}
	resp := runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m1", Model: "claude-opus-5-5",
		Usage: runner.Usage{InputTokens: 300_000}}}
	refused := runner.Event{Kind: runner.KindContextUsage, ContextUsage: &runner.ContextUsage{Error: "claude refused get_context_usage: Unknown subtype"}}
	tests := []struct {
		name        string
		cfg         Config
		evs         []runner.Event
		wantWindow  int64
		wantCompact int64 // CompactionPoints
		wantTrigger Trigger
	}{
		{"the CLI's window", Config{ContextThreshold: 80}, []runner.Event{cliAnswer(t, "2.1.330-default.json"), initEv, resp},
			LongWindow, 967_000, TriggerNone},
		{"a failed request falls back to the table", Config{ContextThreshold: 80}, []runner.Event{refused, initEv, resp},
			DefaultWindow, 167_000, TriggerContext},
		{"no answer falls back to the table", Config{ContextThreshold: 80}, []runner.Event{initEv, resp},
			DefaultWindow, 167_000, TriggerContext},
		{"an earlier session's window until the CLI answers", Config{ContextThreshold: 80, LearnedWindow: LongWindow}, []runner.Event{refused, initEv, resp},
			LongWindow, 967_000, TriggerNone},
		{"the CLI's answer before an earlier session's", Config{ContextThreshold: 80, LearnedWindow: 2_000_000}, []runner.Event{cliAnswer(t, "2.1.330-default.json"), initEv, resp},
			LongWindow, 967_000, TriggerNone},
		{"context_window still wins", Config{ContextThreshold: 80, Window: 2_000_000}, []runner.Event{cliAnswer(t, "2.1.330-default.json"), initEv, resp},
			2_000_000, 967_000, TriggerNone},
		{"no buffer: the CLI will not compact", Config{ContextThreshold: 80}, []runner.Event{cliAnswer(t, "2.1.330-sonnet-4-5.json"), initEv},
			DefaultWindow, 0, TriggerNone},
		{"2.1.197 names the buffer only", Config{ContextThreshold: 80}, []runner.Event{cliAnswer(t, "2.1.197-sonnet-4-6.json"), initEv},
			DefaultWindow, 167_000, TriggerNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := last(run(tt.cfg, tt.evs))
			if got.Window != tt.wantWindow || got.Trigger != tt.wantTrigger {
				t.Errorf("window %d trigger %q (%s); want %d %q", got.Window, got.Trigger, got.Reason, tt.wantWindow, tt.wantTrigger)
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
