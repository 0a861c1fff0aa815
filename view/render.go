// Package view is debussy's live view on a terminal: one status line per
// running phase (session, context bar, zone, what the agent is doing, tools,
// tokens, cost, budget, restarts, elapsed), redrawn in place below the log lines. Render is a pure function
// of the state; Live owns the terminal and keeps log lines whole.
package view

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/debussy-dev/debussy/estimator"
)

// Phase is one phase as the view shows it.
type Phase struct {
	ID, Title string
	Session   int
	// Tokens is the context of the latest response; Window the context
	// window. Estimated marks a character-based guess (no usage yet).
	Tokens, Window int64
	Estimated      bool
	// WindowPending: Window is a guess (the model table's) until claude
	// says; the view shows it as unknown ("0/?") meanwhile.
	WindowPending bool
	// Threshold is context_threshold (percent; 0: unknown): the bar turns
	// yellow where the log warns the agent (10 points below) and red
	// where debussy asks for the handoff, whatever the zone says.
	Threshold   int
	Zone        string // green, yellow, red; "" when unknown
	ToolCalls   int    // main-thread tool calls this session
	TotalTokens int64  // the phase's tokens so far, all sessions, the running one included
	CostUSD     float64
	Restarts    int
	Started     time.Time // the phase's start, for the elapsed time
	Ended       bool      // the session ended; the next one or the gates follow
	// EndedAt is when the session ended (Live sets it): the elapsed time
	// stops there, and the panel stops ticking for that phase.
	EndedAt time.Time

	// Activity is what the agent is doing: exploring, planning, acting or
	// verifying; "" before its first telling tool call.
	Activity string
	// BudgetScope is whose budget BudgetPct is of, "phase" or "plan" (the
	// fuller); "" without a budget. BudgetLevel is none, note, firm, wrapup
	// or exhausted.
	BudgetScope, BudgetLevel string
	BudgetPct                float64
	// WaitingUntil is set while the phase waits for a usage limit to reset,
	// in the zone it is shown in.
	WaitingUntil time.Time
	// Running is what the main thread's tool in flight does ("wait for
	// the build"), RunningSince when it started: shown once it has run
	// longer than LongTool.
	Running      string
	RunningSince time.Time
}

// LongTool is how long a tool runs before the view says what it is doing.
const LongTool = 5 * time.Second

// barWidth is the context bar's cells; ten per 10 % would crowd an 80
// column terminal.
const barWidth = 12

// Render draws one line per phase, each at most width columns (0: no
// limit) so the terminal never wraps a line and the redraw stays exact. A
// narrow terminal loses the least useful figures first, then the line's end.
func Render(phases []Phase, now time.Time, width int, color bool) []string {
	lines := make([]string, 0, len(phases))
	for _, p := range phases {
		parts := renderParts(p, now, color)
		sep := paint(color, "2", " · ")
		line := joinParts(parts, sep)
		for width > 0 && ansi.StringWidth(line) > width && dropLeast(&parts) {
			line = joinParts(parts, sep)
		}
		if width > 0 {
			line = ansi.Truncate(line, width, "…")
		}
		lines = append(lines, line)
	}
	return lines
}

// part is one figure of a phase's line; rank orders what a narrow terminal
// drops first (highest rank).
type part struct {
	text string
	rank int
	sep  string // before it, instead of the usual separator
}

func joinParts(parts []part, sep string) string {
	var b strings.Builder
	for i, p := range parts {
		switch {
		case p.sep != "":
			b.WriteString(p.sep)
		case i > 0:
			b.WriteString(sep)
		}
		b.WriteString(p.text)
	}
	return b.String()
}

func dropLeast(parts *[]part) bool {
	worst := -1
	for i, p := range *parts {
		if p.rank > 0 && (worst < 0 || p.rank > (*parts)[worst].rank) {
			worst = i
		}
	}
	if worst < 0 {
		return false
	}
	*parts = append((*parts)[:worst], (*parts)[worst+1:]...)
	return true
}

func paint(color bool, code, s string) string {
	if !color || code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func renderParts(p Phase, now time.Time, color bool) []part {
	var parts []part
	add := func(rank int, text string) { parts = append(parts, part{text: text, rank: rank}) }
	// Ranks: a narrow terminal drops the highest first; a budget outlasts
	// the zone, whose colour the bar already shows.
	add(0, paint(color, "1", "phase "+p.ID))
	if t := strings.TrimSpace(p.Title); t != "" {
		// Without room, the title goes first; the id stays.
		parts = append(parts, part{text: paint(color, "1", ansi.Truncate(t, 28, "…")), rank: 90, sep: " "})
	}
	if !p.WaitingUntil.IsZero() {
		add(0, paint(color, "33", "waiting until "+p.WaitingUntil.Format("15:04")+" (usage limit)"))
	}
	if p.Session > 0 {
		s := fmt.Sprintf("session %d", p.Session)
		if p.Ended {
			s += " ended"
		}
		add(40, s)
	}
	switch {
	case p.Ended:
	case p.WindowPending:
		approx := ""
		if p.Estimated {
			approx = "~"
		}
		add(0, fmt.Sprintf("%s%s/?", approx, formatTokens(p.Tokens)))
	case p.Window > 0:
		pct := float64(p.Tokens) / float64(p.Window) * 100
		filled := min(barWidth, int(pct*barWidth/100+0.5))
		bar := paint(color, zoneColor(barZone(p.Zone, pct, p.Threshold)), strings.Repeat("█", filled)) + paint(color, "2", strings.Repeat("░", barWidth-filled))
		approx := ""
		if p.Estimated {
			approx = "~"
		}
		shown := fmt.Sprintf("%d%%", int(pct))
		if p.Tokens > 0 && pct < 1 {
			shown = "<1%"
		}
		add(0, fmt.Sprintf("%s %s%s %s/%s", bar, approx, shown, formatTokens(p.Tokens), formatTokens(p.Window)))
	}
	if p.Zone != "" && !p.Ended {
		add(10, paint(color, zoneColor(p.Zone), p.Zone))
	}
	if p.Activity != "" && !p.Ended {
		add(65, p.Activity)
	}
	if !p.Ended {
		add(50, plural(p.ToolCalls, "tool"))
		if p.Running != "" && !p.RunningSince.IsZero() && now.Sub(p.RunningSince) >= LongTool {
			add(35, "running "+ansi.Truncate(p.Running, 40, "…")+" "+formatElapsed(now.Sub(p.RunningSince)))
		}
	}
	if p.TotalTokens > 0 {
		add(70, formatTokens(p.TotalTokens)+" tokens")
	}
	add(30, fmt.Sprintf("$%.2f", p.CostUSD))
	if p.BudgetScope != "" {
		label := "budget"
		if p.BudgetScope == "plan" {
			label = "plan budget"
		}
		add(5, paint(color, levelColor(p.BudgetLevel), fmt.Sprintf("%s %d%%", label, int(p.BudgetPct))))
	}
	if p.Restarts > 0 {
		add(60, plural(p.Restarts, "restart"))
	}
	if !p.Started.IsZero() {
		end := now
		if p.Ended && !p.EndedAt.IsZero() {
			end = p.EndedAt
		}
		add(20, formatElapsed(end.Sub(p.Started)))
	}
	return parts
}

// levelColor paints a budget: plain below its notes, yellow from 70 %,
// red from 90 % (exploration refused under strict).
func levelColor(level string) string {
	switch level {
	case "note":
		return "33"
	case "firm", "wrapup", "exhausted":
		return "31"
	}
	return ""
}

// barZone is the worse of the session's zone and where its context stands
// against the threshold: the bar is not green at 83 % while the log warns.
func barZone(zone string, pct float64, threshold int) string {
	rank := map[string]int{"green": 1, "yellow": 2, "red": 3}
	ctx := ""
	switch {
	case threshold <= 0 || threshold >= 100:
	case pct >= float64(threshold):
		ctx = "red"
	case pct >= float64(threshold-10):
		ctx = "yellow"
	}
	if rank[ctx] > rank[zone] {
		return ctx
	}
	return zone
}

func zoneColor(zone string) string {
	switch zone {
	case "green":
		return "32"
	case "yellow":
		return "33"
	case "red":
		return "31"
	}
	return "36"
}

// formatTokens is debussy's one way to print tokens: 950, 122.5K, 1.2M
// (the log's, status's and the summary's).
func formatTokens(n int64) string { return estimator.FormatTokens(n) }

// formatElapsed is 42s, 3m12s, 1h04m.
func formatElapsed(d time.Duration) string {
	d = max(d, 0).Truncate(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}
