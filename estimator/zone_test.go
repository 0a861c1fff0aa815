package estimator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

func useEv(parent string, uses ...runner.ToolUse) runner.Event {
	return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{ParentToolUseID: parent, ToolUses: uses}}
}

func resultEv(parent string, id, content string, fullLen int) runner.Event {
	return runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{
		{ToolUseID: id, ParentToolUseID: parent, Content: content, ContentLen: fullLen}}}
}

func TestZoneCounts(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("x\n", n) }
	read := func(id string) runner.ToolUse { return runner.ToolUse{ID: id, Name: "Read", FilePath: "/p/" + id} }
	tests := []struct {
		name        string
		evs         []runner.Event
		large, dele int
	}{
		{name: "small read", evs: []runner.Event{useEv("", read("r1")), resultEv("", "r1", lines(200), 400)}},
		{name: "201 lines", evs: []runner.Event{useEv("", read("r1")), resultEv("", "r1", lines(201), 402)}, large: 1},
		{name: "over 20 KB in few lines", evs: []runner.Event{useEv("", read("r1")),
			resultEv("", "r1", strings.Repeat("y", 100), 20<<10+1)}, large: 1},
		{name: "truncated: lines scaled to the full length", evs: []runner.Event{useEv("", read("r1")),
			resultEv("", "r1", lines(150), 600)}, large: 1},
		{name: "a Bash result is no read", evs: []runner.Event{useEv("", runner.ToolUse{ID: "b1", Name: "Bash"}),
			resultEv("", "b1", lines(500), 1000)}},
		{name: "a subagent's read does not count", evs: []runner.Event{useEv("task1", read("r1")),
			resultEv("task1", "r1", lines(500), 1000)}},
		{name: "a failed read does not count", evs: []runner.Event{useEv("", read("r1")),
			{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{{ToolUseID: "r1", IsError: true, Content: lines(300)}}}}},
		{name: "a repeated result line counts once", evs: []runner.Event{useEv("", read("r1")),
			resultEv("", "r1", lines(300), 600), resultEv("", "r1", lines(300), 600)}, large: 1},
		{name: "delegations: Task and Agent, each id once, not a subagent's", evs: []runner.Event{
			useEv("", runner.ToolUse{ID: "t1", Name: "Task"}, runner.ToolUse{ID: "t2", Name: "Agent"}),
			useEv("", runner.ToolUse{ID: "t1", Name: "Task"}),
			useEv("t1", runner.ToolUse{ID: "t3", Name: "Task"}),
		}, dele: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := last(run(Config{}, tt.evs))
			if got.LargeReads != tt.large || got.Delegations != tt.dele {
				t.Errorf("large reads %d, delegations %d; want %d, %d", got.LargeReads, got.Delegations, tt.large, tt.dele)
			}
		})
	}
}

func TestZoneOf(t *testing.T) {
	def := ZoneConfig{10, 15, 2, 4, 5, 8}
	tests := []struct {
		name string
		snap Snapshot
		cfg  ZoneConfig
		want Zone
	}{
		{name: "nothing yet", cfg: def, want: ZoneGreen},
		{name: "9 calls", snap: Snapshot{ToolCalls: 9, LargeReads: 1, Delegations: 4}, cfg: def, want: ZoneGreen},
		{name: "10 calls", snap: Snapshot{ToolCalls: 10}, cfg: def, want: ZoneYellow},
		{name: "2 large reads", snap: Snapshot{LargeReads: 2}, cfg: def, want: ZoneYellow},
		{name: "5 delegations", snap: Snapshot{Delegations: 5}, cfg: def, want: ZoneYellow},
		{name: "15 calls", snap: Snapshot{ToolCalls: 15}, cfg: def, want: ZoneRed},
		{name: "red outranks yellow", snap: Snapshot{ToolCalls: 11, LargeReads: 4}, cfg: def, want: ZoneRed},
		{name: "8 delegations", snap: Snapshot{Delegations: 8}, cfg: def, want: ZoneRed},
		{name: "zero thresholds disable", snap: Snapshot{ToolCalls: 1000, LargeReads: 50, Delegations: 50}, want: ZoneGreen},
		{name: "yellow only", snap: Snapshot{ToolCalls: 1000}, cfg: ZoneConfig{ToolCallsYellow: 3}, want: ZoneYellow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ZoneOf(tt.snap, tt.cfg); got != tt.want {
				t.Errorf("ZoneOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCLIPoints(t *testing.T) {
	tests := []struct {
		name                  string
		window, maxOutput     int64
		wantCompact, wantLong int64
	}{
		// Measured: compaction at 167K and "Prompt is too long" from ~177K of 200K.
		{name: "200K, unknown max output", window: 200_000, wantCompact: 167_000, wantLong: 177_000},
		{name: "200K, 32K max output is capped at 20K", window: 200_000, maxOutput: 32_000, wantCompact: 167_000, wantLong: 177_000},
		{name: "200K, 8K max output", window: 200_000, maxOutput: 8_000, wantCompact: 179_000, wantLong: 177_000},
		{name: "1M", window: 1_000_000, wantCompact: 967_000, wantLong: 885_000},
		{name: "100K", window: 100_000, wantCompact: 67_000, wantLong: 88_500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l := CLIPoints(tt.window, tt.maxOutput)
			if c != tt.wantCompact || l != tt.wantLong {
				t.Errorf("CLIPoints = %d, %d; want %d, %d", c, l, tt.wantCompact, tt.wantLong)
			}
		})
	}
}

// input is a tool input as the runner keeps it.
func input(s string) json.RawMessage { return json.RawMessage(s) }
