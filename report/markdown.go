package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
)

// Markdown writes the report for GitHub: a header, the phases' table, the
// Mermaid charts (Charts), and per phase its sessions' spend, tool calls,
// what debussy told the agent, and the files each session changed.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# debussy run %s: %s\n\n", r.RunID, r.Status)
	fmt.Fprintf(&b, "%s · started %s · took %s · %s", mdText(r.Plan), when(r.Started), took(r.Started, r.Ended), r.TotalsText())
	if r.Budget.Tokens > 0 {
		fmt.Fprintf(&b, " · plan budget %s tokens", estimator.FormatTokens(r.Budget.Tokens))
	}
	if r.Budget.Cost > 0 {
		fmt.Fprintf(&b, " · plan budget %s", money(r.Budget.Cost))
	}
	b.WriteString("\n\n| phase | title | outcome | sessions | restarts | tokens | cost | took |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | %s | %s |\n", p.ID, mdText(p.Title), p.Status, len(p.Sessions), p.Restarts,
			estimator.FormatTokens(p.Spent.RunTokens), money(p.Spent.RunCostUSD), took(p.Started, p.Ended))
	}
	for _, p := range r.NotRun {
		fmt.Fprintf(&b, "| %s | %s | %s (not run) | 0 | 0 | – | – | – |\n", p.ID, mdText(p.Title), p.Status)
	}
	b.WriteString("\n")
	Charts(&b, r)
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "\n## Phase %s: %s — %s\n\n", p.ID, mdText(p.Title), p.Status)
		if a := p.Spent.AcrossText(); a != "" { // a resumed phase: this run's figure above is not all it cost
			fmt.Fprintf(&b, "%s\n\n", a)
		}
		if p.Error != "" {
			fmt.Fprintf(&b, "%s\n\n", mdText(p.Error))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n))
		}
		if len(p.Notes) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("| session | ended | turns | peak context | input | cache read | cache write | output | cost | tool calls | refused | nudges |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range p.Sessions {
			t := s.Spend.Tokens
			fmt.Fprintf(&b, "| %d | %s | %d | %s %% | %s | %s | %s | %s | %s | %s | %d | %d |\n", s.N, mdText(s.Outcome), len(s.Points), pct(s.Peak()),
				estimator.FormatTokens(t.Input), estimator.FormatTokens(t.CacheRead), estimator.FormatTokens(t.CacheWrite),
				estimator.FormatTokens(t.Output), money(s.Spend.Cost), toolMix(s), len(s.Refusals), len(s.Nudges))
		}
		for _, g := range p.Gates {
			fmt.Fprintf(&b, "\n- after session %d, gate %s", g.AfterSession, mdText(gateLine(g)))
		}
		if len(p.Gates) > 0 {
			b.WriteString("\n")
		}
		for _, s := range p.Sessions {
			if len(s.Marks) == 0 && len(s.Commits) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n**Session %d**\n\n", s.N)
			for _, m := range s.Marks {
				fmt.Fprintf(&b, "- turn %d: %s\n", m.Turn, mdText(m.Text))
			}
			for _, c := range s.Commits {
				var files []string
				for _, ch := range c.Changes {
					files = append(files, fmt.Sprintf("`%s %s`", ch.Status, ch.Path))
				}
				if len(files) == 0 {
					files = append(files, "no files")
				}
				fmt.Fprintf(&b, "- commit `%s` %s: %s\n", gitcommit.Short(c.Hash), mdText(c.Subject), strings.Join(files, " "))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// toolMix is a session's tool calls, busiest first: "Bash ×4, Write ×2".
func toolMix(s *Session) string {
	var parts []string
	for _, t := range s.Tools {
		parts = append(parts, fmt.Sprintf("%s ×%d", t.Name, t.Calls))
	}
	if s.SubagentTools > 0 {
		parts = append(parts, fmt.Sprintf("subagents ×%d", s.SubagentTools))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Charts writes the Mermaid charts GitHub renders: a gantt of the
// sessions and gates, and per phase its context per turn against the
// limit that acted (the threshold or the cap, whichever is lower) and the
// warning before it. The step summary carries them below its table.
func Charts(w io.Writer, r *Report) {
	var b strings.Builder
	if g := gantt(r); g != "" {
		b.WriteString(g)
	}
	for _, p := range r.Phases {
		var labels, values []string
		for _, s := range p.Sessions {
			for _, pt := range s.Points {
				labels = append(labels, fmt.Sprintf("%q", fmt.Sprintf("%d.%d", s.N, pt.Turn)))
				values = append(values, pct(s.Percent(pt)))
			}
		}
		if len(values) == 0 {
			continue
		}
		// Where each session's handoff was due and its warning, as a
		// share of its window: the limit that acted, named in the title.
		var due, warn []string
		title := "no context limit"
		for _, s := range p.Sessions {
			l := r.Limit(s)
			for range s.Points {
				if l.At == 0 || s.Window <= 0 {
					due, warn = append(due, "100"), append(warn, "100")
					continue
				}
				due = append(due, pct(float64(l.At)*100/float64(s.Window)))
				warn = append(warn, pct(float64(l.WarnAt)*100/float64(s.Window)))
			}
			if l.At > 0 && s.Window > 0 && title == "no context limit" {
				title = "handoff at " + l.Words(r.Threshold, s.Window) + ", warning at " + estimator.FormatTokens(l.WarnAt)
			}
		}
		fmt.Fprintf(&b, "\n```mermaid\nxychart-beta\n    title %q\n    x-axis \"session.turn\" [%s]\n    y-axis \"context %% of window\" 0 --> 100\n    line [%s]\n    line [%s]\n    line [%s]\n```\n",
			mermaidText(fmt.Sprintf("Phase %s: context per turn (%s)", p.ID, title)),
			strings.Join(labels, ", "), strings.Join(values, ", "), strings.Join(due, ", "), strings.Join(warn, ", "))
	}
	io.WriteString(w, b.String())
}

// gantt is the run's sessions and gate runs on a clock, one section per
// phase; "" when no session has times.
func gantt(r *Report) string {
	const layout = "2006-01-02 15:04:05"
	var b strings.Builder
	tasks := 0
	fmt.Fprintf(&b, "```mermaid\ngantt\n    title %s\n    dateFormat YYYY-MM-DD HH:mm:ss\n    axisFormat %%H:%%M:%%S\n", mermaidText("run "+r.RunID+": sessions and gates"))
	for _, p := range r.Phases {
		if len(p.Sessions) == 0 || p.Sessions[0].Start.IsZero() {
			continue
		}
		fmt.Fprintf(&b, "    section %s\n", mermaidText("phase "+p.ID))
		for i, s := range p.Sessions {
			if s.Start.IsZero() {
				continue
			}
			end := s.End
			if end.IsZero() || end.Before(s.Start) {
				end = s.Start
			}
			tag := "active, "
			if i < len(p.Sessions)-1 || p.Status == "completed" {
				tag = "done, "
			}
			if i == len(p.Sessions)-1 && (p.Status == "failed" || p.Status == "blocked") {
				tag = "crit, "
			}
			fmt.Fprintf(&b, "    %s :%s%s, %s\n", mermaidText(fmt.Sprintf("session %d (%s)", s.N, plural(len(s.Points), "turn"))), tag,
				s.Start.UTC().Format(layout), end.UTC().Format(layout))
			tasks++
		}
		for _, g := range p.Gates {
			tag, label := "done, ", "gate "+g.Name
			switch {
			case g.Unchecked:
				// No command: it was not run, neither passed nor failed.
				tag, label = "", label+" (unchecked, not run)"
			case !g.Passed:
				tag = "crit, "
			}
			start := g.End.Add(-g.Duration).Truncate(time.Second)
			end := g.End
			if !end.After(start.Add(time.Second)) {
				end = start.Add(time.Second)
			}
			fmt.Fprintf(&b, "    %s :%s%s, %s\n", mermaidText(label), tag, start.UTC().Format(layout), end.UTC().Format(layout))
			tasks++
		}
	}
	b.WriteString("```\n")
	if tasks == 0 {
		return ""
	}
	return b.String()
}

// mermaidText keeps a label from breaking Mermaid's line syntax: no
// colons, semicolons, hashes or quotes.
func mermaidText(s string) string {
	return strings.NewReplacer(": ", " — ", ":", " ", ";", ",", "#", "", "\"", "'", "\n", " ").Replace(s)
}

// mdText is s on one line with table pipes escaped.
func mdText(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", "").Replace(s)
}
