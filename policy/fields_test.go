package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/runner"
)

// Every event the policy records, with its fields as events.jsonl gets
// them (keys sorted, as the event log writes them) and, when it is
// logged, the log's key/values with their Go types (LogAttrs). The
// golden was taken when Fields was a map[string]any: the typed Fields
// changed no key and no value.
func TestEffectFields(t *testing.T) {
	read := func(i int) runner.Event {
		return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: fmt.Sprint("m", i),
			ToolUses: []runner.ToolUse{{ID: fmt.Sprint("r", i), Name: "Read", Input: []byte(fmt.Sprintf(`{"file_path":"/repo/f%d.go"}`, i))}}}}
	}
	tests := []struct {
		name  string
		cfg   func(c *Config)
		drive func(p *Policy)
	}{
		{
			name: "threshold: warning, note, handoff request, refusal, the handoff written",
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, *ctx(71))
				p.PostToolUse(*bashCall("ls", "a"))
				p.Observe(runner.Event{}, *ctx(81))
				p.PreToolUse(Call{Tool: "Bash", ToolUseID: "toolu_1", Command: "ls"}, "")
				w := writeCall(handoffPath)
				w.HandoffBytes = 120
				p.PostToolUse(*w)
			},
		},
		{
			name: "the cap's warning on a window still pending: no percent, by the cap",
			cfg:  func(c *Config) { c.ContextMaxTokens = 400_000 },
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, estimator.Snapshot{Tokens: 352_000, Window: 200_000, WindowPending: true, Percent: 176})
			},
		},
		{
			name: "zones with zero counts; a red zone's handoff with no usage",
			cfg: func(c *Config) {
				c.Zones, c.ZoneAction = estimator.ZoneConfig{ToolCallsYellow: 1, ToolCallsRed: 2}, ZoneHandoff
			},
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, estimator.Snapshot{ToolCalls: 1})
				p.Observe(runner.Event{}, estimator.Snapshot{ToolCalls: 2, LargeReads: 1})
			},
		},
		{
			name: "a budget's refusal; a loop's nudges and restart",
			drive: func(p *Policy) {
				p.PreToolUse(*bashCall("cat x", ""), "no exploring")
				for range 5 {
					p.PostToolUse(*bashCall("make", "same"))
				}
			},
		},
		{
			name: "an exploration nudge",
			drive: func(p *Policy) {
				for i := range 10 {
					p.Observe(read(i), estimator.Snapshot{})
				}
			},
		},
		{
			name: "done with a stop pending; the Stop hook",
			drive: func(p *Policy) {
				p.Stop(false, false)
				p.StopFor(TriggerBudget, "budget exhausted")
				p.PostToolUse(*doneCall())
			},
		},
		{
			name: "done alone; compaction refused",
			drive: func(p *Policy) {
				p.PostToolUse(*doneCall())
				p.PreCompact("auto")
			},
		},
		{
			name: "the handoff stage: the Stop hook twice",
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, *ctx(82))
				p.Effects()
				p.Stop(false, false)
				p.Stop(true, false)
			},
		},
		{
			name:  "the agent's handoff",
			drive: func(p *Policy) { p.PostToolUse(*handoffCmd(true)) },
		},
		{
			name:  "an emergency",
			drive: func(p *Policy) { p.Observe(runner.Event{}, *ctx(99)) },
		},
		{
			name: "zero values are recorded: an empty tool, trigger, reason",
			drive: func(p *Policy) {
				p.PreToolUse(Call{}, "no exploring")
				p.Note("a budget's note")
				p.PostToolUse(Call{})
				p.PreCompact("")
				p.StopFor(TriggerAdaptive, "")
				p.PostToolUse(Call{})
			},
		},
		{
			name: "a warning at 0 % and 0 tokens",
			cfg:  func(c *Config) { c.ContextThreshold = 5 },
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, estimator.Snapshot{Window: 200_000})
			},
		},
		{
			name: "a threshold of 0 with the cap",
			cfg:  func(c *Config) { c.ContextThreshold, c.ContextMaxTokens = 0, 400_000 },
			drive: func(p *Policy) {
				p.Observe(runner.Event{}, estimator.Snapshot{Tokens: 360_000, Window: 1_000_000, Percent: 36})
			},
		},
		{
			name:  "an empty handoff path",
			cfg:   func(c *Config) { c.HandoffPath = "" },
			drive: func(p *Policy) { p.PostToolUse(*handoffCmd(true)) },
		},
		{
			name:  "max_restarts 0: a threshold only logs",
			cfg:   func(c *Config) { c.MaxRestarts = 0 },
			drive: func(p *Policy) { p.Observe(runner.Event{}, *ctx(90)) },
		},
	}
	var b strings.Builder
	for _, tt := range tests {
		c := testConfig()
		if tt.cfg != nil {
			tt.cfg(&c)
		}
		p := New(c, nil)
		tt.drive(p)
		fmt.Fprintf(&b, "== %s\n", tt.name)
		for _, e := range p.Effects() {
			if e.Event != "" {
				fmt.Fprintf(&b, "%s %s\n", e.Event, sortedJSON(t, e.Fields))
			}
			if e.Log != "" && e.Level != LevelNone {
				fmt.Fprintf(&b, "  %s %q", e.Level, e.Log)
				kv := e.Fields.LogAttrs()
				for i := 0; i+1 < len(kv); i += 2 {
					fmt.Fprintf(&b, " %s=%v(%T)", kv[i], kv[i+1], kv[i+1])
				}
				b.WriteString("\n")
			}
		}
	}
	golden.Check(t, "testdata/effects.golden", []byte(b.String()))
}

// sortedJSON is v's JSON with its keys sorted and its values as encoded.
func sortedJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(m)
	return string(out)
}
