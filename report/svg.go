package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/policy"
)

// chart is one SVG picture as primitives; the template draws any chart, so
// each kind of chart is only geometry computed here.
type chart struct {
	W, H  float64
	Label string // aria-label
	Rects []rect
	Lines []line
	Polys []poly
	Dots  []dot
	Texts []text
}

type rect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
}

type line struct {
	X1, Y1, X2, Y2 float64
	Class          string
	Title          string
}

type poly struct {
	Points string
	Class  string
}

type dot struct {
	X, Y   float64
	Fill   string
	Letter string
	Title  string
}

type text struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle, end
	Class  string
}

// markStyle is how a mark looks: a letter in a coloured disc, and its name
// in the legend.
type markStyle struct {
	Letter, Fill, Name string
}

var markStyles = map[Kind]markStyle{
	KindWarning:     {"W", "#d97706", "context warning"},
	KindThreshold:   {"T", "#dc2626", "threshold crossed"},
	KindHandoff:     {"H", "#ea580c", "handoff requested"},
	KindHandoffDone: {"h", "#2563eb", "handoff written"},
	KindRefusal:     {"R", "#991b1b", "tool refused by debussy"},
	KindNudge:       {"N", "#7c3aed", "nudge"},
	KindStop:        {"S", "#111827", "session stopped at a safe point"},
	KindEmergency:   {"E", "#b91c1c", "emergency stop"},
	KindStopBlocked: {"B", "#6b7280", "turn end refused"},
	KindCompaction:  {"C", "#0891b2", "compaction"},
	KindZone:        {"Z", "#ca8a04", "zone change"},
	KindBudget:      {"$", "#0d9488", "budget note"},
	KindInterrupt:   {"I", "#4b5563", "interrupt"},
	KindDone:        {"D", "#16a34a", "debussy done"},
}

// onTimeline are the marks the timeline shows.
var onTimeline = map[Kind]bool{KindWarning: true, KindHandoff: true, KindStop: true, KindEmergency: true, KindInterrupt: true}

// markOrder is the legend's order.
var markOrder = []Kind{KindWarning, KindThreshold, KindHandoff, KindHandoffDone, KindStop, KindDone, KindRefusal, KindNudge,
	KindStopBlocked, KindEmergency, KindCompaction, KindZone, KindBudget, KindInterrupt}

// kindColors stack the token kinds: input, cache read, cache write, output.
var kindColors = [4]string{"#3b82f6", "#93c5fd", "#f59e0b", "#10b981"}

// palette colours tool names, in the order they first appear in the run.
var palette = []string{"#2563eb", "#16a34a", "#ea580c", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#ca8a04", "#475569", "#9333ea"}

const (
	chartW = 880.0
	left   = 120.0 // room for row labels
	right  = 24.0
)

// contextChart draws a phase's sessions side by side: the context per turn,
// under each session the line where its handoff was due (the threshold or
// the cap, whichever is lower for its window) and the warning before it,
// every mark on its turn, restarts between sessions and the gates after
// the session they judged.
func contextChart(p *Phase, r *Report) chart {
	const top, plotH, bottom = 28.0, 200.0, 34.0
	c := chart{W: chartW, H: top + plotH + bottom, Label: "context per turn, phase " + p.ID}
	slots := 0
	for _, s := range p.Sessions {
		slots += max(len(s.Points), 1) + 1
	}
	slots = max(slots, 1)
	step := (chartW - left - right) / float64(slots)
	y := func(pct float64) float64 { return top + plotH - math.Min(pct, 100)/100*plotH }
	for _, v := range []float64{0, 25, 50, 75, 100} {
		c.Lines = append(c.Lines, line{X1: left, Y1: y(v), X2: chartW - right, Y2: y(v), Class: "grid"})
		c.Texts = append(c.Texts, text{X: left - 6, Y: y(v) + 4, Text: fmt.Sprintf("%g %%", v), Anchor: "end", Class: "axis"})
	}
	c.Texts = append(c.Texts, text{X: 8, Y: top + plotH/2, Text: "context", Class: "axis"},
		text{X: 8, Y: top + plotH/2 + 14, Text: "% of window", Class: "axis"})
	slot := 0
	lastLabel := ""
	for i, s := range p.Sessions {
		x0 := left + float64(slot)*step
		width := max(len(s.Points), 1)
		xOf := func(turn int) float64 {
			if turn <= 0 {
				return x0 + step*0.2
			}
			return x0 + (float64(turn)-0.5)*step
		}
		label := fmt.Sprintf("session %d", s.N)
		c.Texts = append(c.Texts, text{X: x0 + 2, Y: top - 10, Text: label, Class: "session-label"})
		lastLabel = limitLines(&c, r, s, x0, x0+float64(width)*step, y, lastLabel)
		var pts []string
		for _, pt := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xOf(pt.Turn), y(s.Percent(pt))))
			c.Dots = append(c.Dots, dot{X: xOf(pt.Turn), Y: y(s.Percent(pt)), Title: fmt.Sprintf("session %d, turn %d: %s of %s (%s %%), %d tool calls",
				s.N, pt.Turn, estimator.FormatTokens(pt.Tokens), estimator.FormatTokens(s.Window), pct(s.Percent(pt)), pt.ToolCalls)})
		}
		if len(pts) > 0 {
			c.Polys = append(c.Polys, poly{Points: strings.Join(pts, " "), Class: "curve"})
		}
		// Marks on the same turn stack upwards.
		stacked := map[int]int{}
		for _, m := range s.Marks {
			st := markStyles[m.Kind]
			yy := y(0) - 8
			if m.Turn >= 1 && m.Turn <= len(s.Points) {
				yy = y(s.Percent(s.Points[m.Turn-1])) - 14
			}
			yy -= float64(stacked[m.Turn]) * 15
			stacked[m.Turn]++
			c.Dots = append(c.Dots, dot{X: xOf(m.Turn), Y: math.Max(yy, 8), Fill: st.Fill, Letter: st.Letter,
				Title: fmt.Sprintf("session %d, turn %d: %s", s.N, m.Turn, m.Text)})
		}
		end := x0 + float64(width)*step
		var gates []Gate
		for _, g := range p.Gates {
			if g.AfterSession == s.N {
				gates = append(gates, g)
			}
		}
		if len(gates) > 0 {
			// A pass only when every gate ran and passed: an UNCHECKED
			// gate (no command, not run) is grey "?", a failure red.
			fill, letter, title := "#16a34a", "✓", "gates after session "+fmt.Sprint(s.N)+":"
			failed, unchecked := false, false
			for _, g := range gates {
				title += "\n" + gateLine(g)
				failed = failed || !g.Passed && !g.Unchecked
				unchecked = unchecked || g.Unchecked
			}
			switch {
			case failed:
				fill, letter = "#dc2626", "✗"
			case unchecked:
				fill, letter = uncheckedFill, "?"
			}
			c.Dots = append(c.Dots, dot{X: end + step*0.5, Y: y(0) - 8, Fill: fill, Letter: letter, Title: title})
			c.Texts = append(c.Texts, text{X: end + step*0.5, Y: y(0) + 14, Text: "gates", Anchor: "middle", Class: "axis"})
		}
		if i < len(p.Sessions)-1 {
			c.Lines = append(c.Lines, line{X1: end + step*0.5, Y1: top - 4, X2: end + step*0.5, Y2: y(0), Class: "restart",
				Title: "session " + fmt.Sprint(s.N) + " ended: " + s.Outcome})
			if len(gates) == 0 {
				c.Texts = append(c.Texts, text{X: end + step*0.5, Y: y(0) + 14, Text: "restart", Anchor: "middle", Class: "axis"})
			}
		}
		c.Texts = append(c.Texts, text{X: x0 + float64(width)*step/2, Y: y(0) + 28, Text: fmt.Sprintf("%d turns", len(s.Points)), Anchor: "middle", Class: "axis"})
		slot += width + 1
	}
	return c
}

// limitLines draws, from x0 to x1, where session s's handoff was due and
// the warning before it, as a share of its window, titled with the limit
// that acted: on a 1M window the 400K cap, not the 80 % threshold. The
// label is written where it changes (sessions of one window share it); it
// returns the label now in force.
func limitLines(c *chart, r *Report, s *Session, x0, x1 float64, y func(float64) float64, last string) string {
	l := r.Limit(s)
	if l.At == 0 || s.Window <= 0 {
		return last
	}
	share := func(tok int64) float64 { return float64(tok) * 100 / float64(s.Window) }
	words := l.Words(r.Threshold, s.Window)
	c.Lines = append(c.Lines, line{X1: x0, Y1: y(share(l.At)), X2: x1, Y2: y(share(l.At)), Class: "threshold",
		Title: fmt.Sprintf("session %d: the handoff was due at %s", s.N, words)})
	if l.WarnAt > 0 {
		c.Lines = append(c.Lines, line{X1: x0, Y1: y(share(l.WarnAt)), X2: x1, Y2: y(share(l.WarnAt)), Class: "warnline",
			Title: fmt.Sprintf("session %d: the agent was warned at %s (%s %%)", s.N, estimator.FormatTokens(l.WarnAt), pct(share(l.WarnAt)))})
	}
	label := LimitLabel(l, s.Window)
	if label != last {
		c.Texts = append(c.Texts, text{X: x1 - 4, Y: y(share(l.At)) - 4, Text: label, Anchor: "end", Class: "threshold-label"})
	}
	return label
}

// LimitLabel is the limit's short name on a chart: "cap 400K = 40 %" or
// "threshold 80 % = 160K".
func LimitLabel(l policy.ContextLimit, window int64) string {
	share := float64(l.At) * 100 / float64(window)
	if l.ByCap {
		return fmt.Sprintf("cap context_max_tokens %s = %s %%", estimator.FormatTokens(l.At), pct(share))
	}
	return fmt.Sprintf("threshold %s %% = %s", pct(share), estimator.FormatTokens(l.At))
}

// uncheckedFill is an UNCHECKED gate's colour: neither a pass's green nor
// a failure's red.
const uncheckedFill = "#9ca3af"

func gateLine(g Gate) string {
	switch {
	case g.Unchecked:
		return g.Name + ": UNCHECKED (no command)"
	case g.Passed:
		return fmt.Sprintf("%s: passed (%s) `%s`", g.Name, g.Duration.Round(time.Millisecond), g.Command)
	default:
		return fmt.Sprintf("%s: FAILED, exit %d (%s) `%s`", g.Name, g.ExitCode, g.Duration.Round(time.Millisecond), g.Command)
	}
}

// timelineChart draws a phase on a clock: each session a bar from its start
// to its end with its timed marks, the gates on a row of their own, and the
// done signal.
func timelineChart(p *Phase) chart {
	t0, t1 := phaseSpan(p)
	rows := len(p.Sessions) + 1
	const top, rowH, bottom = 10.0, 30.0, 26.0
	c := chart{W: chartW, H: top + float64(rows)*rowH + bottom, Label: "timeline, phase " + p.ID}
	span := max(t1.Sub(t0), time.Second)
	plotW := chartW - left - right
	x := func(t time.Time) float64 {
		if t.IsZero() {
			return left
		}
		return left + math.Max(0, math.Min(1, float64(t.Sub(t0))/float64(span)))*plotW
	}
	axisY := top + float64(rows)*rowH
	tick := niceStep(span)
	for d := time.Duration(0); d <= span; d += tick {
		xx := left + float64(d)/float64(span)*plotW
		c.Lines = append(c.Lines, line{X1: xx, Y1: top, X2: xx, Y2: axisY, Class: "grid"})
		c.Texts = append(c.Texts, text{X: xx, Y: axisY + 16, Text: "+" + shortDur(d), Anchor: "middle", Class: "axis"})
	}
	for i, s := range p.Sessions {
		yy := top + float64(i)*rowH
		c.Texts = append(c.Texts, text{X: left - 8, Y: yy + 17, Text: fmt.Sprintf("session %d", s.N), Anchor: "end", Class: "row-label"})
		if s.Start.IsZero() {
			continue
		}
		end := s.End
		if end.IsZero() {
			end = t1
		}
		fill := "#60a5fa"
		if i == len(p.Sessions)-1 {
			fill = statusColor(p.Status)
		}
		c.Rects = append(c.Rects, rect{X: x(s.Start), Y: yy + 5, W: math.Max(x(end)-x(s.Start), 2), H: rowH - 10, Fill: fill,
			Title: fmt.Sprintf("session %d: %s, %s; ended %s", s.N, shortDur(end.Sub(s.Start)), plural(len(s.Points), "turn"), s.Outcome)})
		// The clock shows the turning points only (the context chart has
		// every mark); marks a few pixels apart fan out above and below.
		stacked := map[int]int{}
		for _, m := range s.Marks {
			if m.At.IsZero() || !onTimeline[m.Kind] {
				continue
			}
			st := markStyles[m.Kind]
			xx := x(m.At)
			k := int(xx / 14)
			n := stacked[k]
			stacked[k]++
			off := float64((n+1)/2) * 9
			if n%2 == 1 {
				off = -off
			}
			c.Dots = append(c.Dots, dot{X: xx, Y: yy + rowH/2 + off, Fill: st.Fill, Letter: st.Letter, Title: m.Text})
		}
	}
	gy := top + float64(len(p.Sessions))*rowH
	c.Texts = append(c.Texts, text{X: left - 8, Y: gy + 17, Text: "gates", Anchor: "end", Class: "row-label"})
	for _, g := range p.Gates {
		fill := statusColor("completed")
		if !g.Passed {
			fill = statusColor("failed")
		}
		if g.Unchecked {
			fill = uncheckedFill
		}
		start := g.End.Add(-g.Duration)
		c.Rects = append(c.Rects, rect{X: x(start), Y: gy + 5, W: math.Max(x(g.End)-x(start), 3), H: rowH - 10, Fill: fill, Title: gateLine(g)})
	}
	if d := p.Done; d != nil && !d.At.IsZero() && !d.At.Before(t0) {
		st := markStyles[KindDone]
		title := "debussy done: " + string(d.Status)
		if d.Reason != "" {
			title += ": " + d.Reason
		}
		row := max(len(p.Sessions)-1, 0)
		c.Dots = append(c.Dots, dot{X: x(d.At), Y: top + float64(row)*rowH + rowH/2, Fill: st.Fill, Letter: st.Letter, Title: title})
	}
	return c
}

// phaseSpan is the first and last moment anything of p happened.
func phaseSpan(p *Phase) (time.Time, time.Time) {
	var t0, t1 time.Time
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if t0.IsZero() || t.Before(t0) {
			t0 = t
		}
		if t.After(t1) {
			t1 = t
		}
	}
	see(p.Started)
	see(p.Ended)
	for _, s := range p.Sessions {
		see(s.Start)
		see(s.End)
	}
	for _, g := range p.Gates {
		see(g.End.Add(-g.Duration))
		see(g.End)
	}
	return t0, t1
}

// niceStep is a tick interval that gives 4 to 10 ticks over span.
func niceStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour} {
		if span/s <= 10 {
			return s
		}
	}
	return span / 8
}

// shortDur prints 4s, 1m30s, 2h5m.
func shortDur(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		if s := int(d.Seconds()) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", int(d.Minutes()), s)
		}
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func statusColor(status string) string {
	switch status {
	case "completed":
		return "#16a34a"
	case "failed", "blocked":
		return "#dc2626"
	case "interrupted":
		return "#6b7280"
	}
	return "#60a5fa"
}

// barRow is one row of a stacked bar chart.
type barRow struct {
	Label  string
	Values []float64
	Titles []string
	Note   string // printed after the bar
	Bold   bool
}

// stackedBars draws rows of stacked segments on one scale, with the budget
// as a line when there is one.
func stackedBars(label string, rows []barRow, colors []string, limit float64, limitLabel string) chart {
	const top, rowH, bottom = 8.0, 24.0, 8.0
	noteW := 150.0
	c := chart{W: chartW, H: top + float64(len(rows))*rowH + bottom, Label: label}
	scale := limit
	for _, r := range rows {
		var sum float64
		for _, v := range r.Values {
			sum += v
		}
		scale = math.Max(scale, sum)
	}
	if scale <= 0 {
		scale = 1
	}
	plotW := chartW - left - right - noteW
	for i, r := range rows {
		yy := top + float64(i)*rowH
		class := "row-label"
		if r.Bold {
			class = "row-label bold"
		}
		c.Texts = append(c.Texts, text{X: left - 8, Y: yy + 16, Text: r.Label, Anchor: "end", Class: class})
		xx := left
		for j, v := range r.Values {
			if v <= 0 {
				continue
			}
			w := v / scale * plotW
			c.Rects = append(c.Rects, rect{X: xx, Y: yy + 4, W: w, H: rowH - 8, Fill: colors[j%len(colors)], Title: r.Titles[j]})
			xx += w
		}
		c.Texts = append(c.Texts, text{X: xx + 6, Y: yy + 16, Text: r.Note, Class: "note"})
	}
	if limit > 0 {
		lx := left + limit/scale*plotW
		c.Lines = append(c.Lines, line{X1: lx, Y1: 2, X2: lx, Y2: c.H - 2, Class: "budget", Title: limitLabel})
		c.Texts = append(c.Texts, text{X: lx + 4, Y: c.H - 4, Text: limitLabel, Class: "budget-label"})
	}
	return c
}

// spendCharts are the tokens and the cost of rows of spends, stacked by
// kind, against a budget.
func spendCharts(labels []string, spends []Spend, totalAt int, lim Limits) (tokens, cost chart) {
	var tr, cr []barRow
	for i, s := range spends {
		t := s.byKind()
		var tt, ct []string
		for k, name := range Kinds {
			tt = append(tt, fmt.Sprintf("%s: %s %s tokens", labels[i], estimator.FormatTokens(int64(t[k])), name))
			ct = append(ct, fmt.Sprintf("%s: %s for %s", labels[i], money(s.CostByKind[k]), name))
		}
		tr = append(tr, barRow{Label: labels[i], Values: t[:], Titles: tt, Note: estimator.FormatTokens(s.Tokens.Processed()) + " tokens", Bold: i == totalAt})
		cr = append(cr, barRow{Label: labels[i], Values: s.CostByKind[:], Titles: ct, Note: money(s.Cost), Bold: i == totalAt})
	}
	var tl, cl string
	if lim.Tokens > 0 {
		tl = "budget " + estimator.FormatTokens(lim.Tokens) + " tokens"
	}
	if lim.Cost > 0 {
		cl = "budget " + money(lim.Cost)
	}
	return stackedBars("tokens by kind", tr, kindColors[:], float64(lim.Tokens), tl),
		stackedBars("cost by kind", cr, kindColors[:], lim.Cost, cl)
}

// toolChart is each session's tool calls stacked by tool.
func toolChart(p *Phase, names []string) chart {
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
	}
	var rows []barRow
	for _, s := range p.Sessions {
		vals := make([]float64, len(names))
		titles := make([]string, len(names))
		for _, t := range s.Tools {
			vals[idx[t.Name]] = float64(t.Calls)
			titles[idx[t.Name]] = fmt.Sprintf("session %d: %s ×%d", s.N, t.Name, t.Calls)
		}
		note := plural(s.Calls(), "call")
		if s.SubagentTools > 0 {
			note += fmt.Sprintf(" + %d by subagents", s.SubagentTools)
		}
		rows = append(rows, barRow{Label: fmt.Sprintf("session %d", s.N), Values: vals, Titles: titles, Note: note})
	}
	return stackedBars("tool calls per session", rows, toolColors(names), 0, "")
}

func toolColors(names []string) []string {
	out := make([]string, len(names))
	for i := range names {
		out[i] = palette[i%len(palette)]
	}
	return out
}

func money(v float64) string { return fmt.Sprintf("$%.2f", v) }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
