package view

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("render differs from %s:\n got: %q\nwant: %q", path, got, want)
	}
}

func TestRender(t *testing.T) {
	now := time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)
	running := Phase{ID: "2", Title: "Parser and lexer", Session: 2, Tokens: 122_400, Window: 200_000, Zone: "yellow",
		ToolCalls: 11, TotalTokens: 1_234_567, CostUSD: 0.4234, Restarts: 1, Started: now.Add(-192 * time.Second)}
	tests := []struct {
		name   string
		phases []Phase
		width  int
		color  bool
	}{
		{name: "running", phases: []Phase{running}},
		{name: "running-color", phases: []Phase{running}, color: true},
		{name: "narrow", phases: []Phase{running}, width: 60},
		{name: "narrow-color", phases: []Phase{running}, width: 60, color: true},
		{name: "first-event", phases: []Phase{{ID: "1", Session: 1, Started: now.Add(-3 * time.Second)}}},
		// claude has not said its window yet: the table's 200K is a guess.
		{name: "window-pending", phases: []Phase{{ID: "1", Session: 1, Tokens: 0, Window: 200_000, WindowPending: true,
			Zone: "green", Started: now.Add(-3 * time.Second)}}},
		// A usage limit: the phase waits for its reset, no session runs.
		{name: "waiting-usage-limit", phases: []Phase{{ID: "1", Session: 2, Ended: true, TotalTokens: 420_000, CostUSD: 1.5,
			WaitingUntil: time.Date(2026, 11, 23, 2, 41, 0, 0, time.UTC), Started: now.Add(-time.Hour)}}},
		{name: "estimated-1m", phases: []Phase{{ID: "1", Title: "Setup", Session: 1, Tokens: 8_000, Window: 1_000_000,
			Estimated: true, Zone: "green", ToolCalls: 1, Started: now.Add(-2 * time.Hour)}}},
		{name: "full-red", phases: []Phase{{ID: "3", Session: 4, Tokens: 210_000, Window: 200_000, Zone: "red",
			ToolCalls: 15, TotalTokens: 2_000_000, CostUSD: 3, Restarts: 3, Started: now.Add(-65 * time.Minute)}}},
		{name: "ended", phases: []Phase{{ID: "2", Session: 1, Ended: true, Tokens: 170_000, Window: 200_000,
			TotalTokens: 900_000, CostUSD: 0.2, Started: now.Add(-time.Minute)}}},
		{name: "two-phases", phases: []Phase{running, {ID: "4", Title: "Docs", Session: 1, Tokens: 30_000, Window: 200_000,
			ToolCalls: 2, Started: now.Add(-10 * time.Second)}}},
		{name: "budget", phases: []Phase{withBudget(running, "phase", "note", 72.4)}},
		{name: "budget-color", phases: []Phase{withBudget(running, "phase", "firm", 91)}, color: true},
		{name: "budget-narrow", phases: []Phase{withBudget(running, "plan", "wrapup", 96)}, width: 60},
		{name: "budget-under-notes-color", phases: []Phase{withBudget(running, "phase", "none", 12)}, color: true},
		{name: "wide-title", phases: []Phase{{ID: "5", Title: "日本語のタイトルはとても長いのでここで切れるはずです", Session: 1,
			Started: now}}, width: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := Render(tt.phases, now, tt.width, tt.color)
			golden(t, tt.name, strings.Join(lines, "\n")+"\n")
			for _, l := range lines {
				if strings.Contains(l, "\n") {
					t.Errorf("line %q holds a newline", l)
				}
				if !tt.color && strings.Contains(l, "\x1b") {
					t.Errorf("line %q holds an escape code without colour", l)
				}
			}
		})
	}
}

// withBudget is p acting under a budget.
func withBudget(p Phase, scope, level string, pct float64) Phase {
	p.Activity, p.BudgetScope, p.BudgetLevel, p.BudgetPct = "acting", scope, level, pct
	return p
}

// The live view prints tokens as the log, status and the summary do.
func TestFormatTokens(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1K"}, {122_999, "123K"}, {597_500, "597.5K"}, {1_000_000, "1M"}, {1_250_000, "1.2M"}}
	for _, tt := range tests {
		if got := formatTokens(tt.n); got != tt.want {
			t.Errorf("formatTokens(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// The bar's colour agrees with the log: yellow from the warning (10 points
// below the threshold), red from the threshold, even in a green zone; a
// redder zone wins.
func TestBarZone(t *testing.T) {
	tests := []struct {
		zone      string
		pct       float64
		threshold int
		want      string
	}{
		{"green", 50, 80, "green"},
		{"green", 73, 80, "yellow"},
		{"green", 83, 80, "red"},
		{"red", 10, 80, "red"},
		{"yellow", 85, 80, "red"},
		{"green", 99, 100, "green"}, // 100 disables the trigger
		{"green", 90, 0, "green"},   // unknown threshold
		{"", 75, 80, "yellow"},
	}
	for _, tt := range tests {
		if got := barZone(tt.zone, tt.pct, tt.threshold); got != tt.want {
			t.Errorf("barZone(%q, %v, %d) = %q, want %q", tt.zone, tt.pct, tt.threshold, got, tt.want)
		}
	}
	line := Render([]Phase{{ID: "1", Session: 1, Tokens: 166_000, Window: 200_000, Threshold: 80, Zone: "green"}}, time.Time{}, 0, true)[0]
	if !strings.Contains(line, "\x1b[31m██████████") || !strings.Contains(line, "\x1b[32mgreen") {
		t.Errorf("at 83 %% of a threshold of 80 the bar is not red (the zone label stays green):\n%q", line)
	}
}

// A tool that runs long says what it does and for how long; a quick one,
// or a finished session, says nothing of it.
func TestRenderRunningTool(t *testing.T) {
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	p := Phase{ID: "1", Session: 1, Running: "wait for the build to settle", RunningSince: now.Add(-75 * time.Second)}
	if line := Render([]Phase{p}, now, 0, false)[0]; !strings.Contains(line, "running wait for the build to settle 1m15s") {
		t.Errorf("a long tool: %q", line)
	}
	p.RunningSince = now.Add(-2 * time.Second)
	if line := Render([]Phase{p}, now, 0, false)[0]; strings.Contains(line, "running") {
		t.Errorf("a quick tool: %q", line)
	}
	p.RunningSince, p.Ended = now.Add(-time.Minute), true
	if line := Render([]Phase{p}, now, 0, false)[0]; strings.Contains(line, "running") {
		t.Errorf("an ended session: %q", line)
	}
}
