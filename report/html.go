package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
)

//go:embed report.html.tmpl
var pageSource string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"f1":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"tokens": estimator.FormatTokens,
	"money":  money,
	"pct":    pct,
	"short":  gitcommit.Short,
	"when":   func(t time.Time) string { return when(t) },
	"dur":    func(a, b time.Time) string { return took(a, b) },
	"gate":   gateLine,
	"plural": plural,
	"join":   strings.Join,
}).Parse(pageSource))

type legendItem struct{ Name, Fill, Letter string }

type phaseView struct {
	*Phase
	Timeline, Context, Tokens, Cost, Tools chart
	ToolLegend                             []legendItem
}

type pageData struct {
	R            *Report
	Tokens, Cost chart
	Tuning       *chart
	Marks        []legendItem
	Kinds        []legendItem
	Phases       []phaseView
}

// HTML writes the report as one self-contained page: inline CSS and SVG,
// no script, nothing fetched.
func HTML(w io.Writer, r *Report) error {
	d := pageData{R: r}
	for _, k := range markOrder {
		st := markStyles[k]
		d.Marks = append(d.Marks, legendItem{Name: st.Name, Fill: st.Fill, Letter: st.Letter})
	}
	for i, k := range Kinds {
		d.Kinds = append(d.Kinds, legendItem{Name: k, Fill: kindColors[i]})
	}
	var labels []string
	var spends []Spend
	for _, p := range r.Phases {
		labels = append(labels, "phase "+p.ID)
		spends = append(spends, p.Spend)
	}
	labels = append(labels, "run")
	spends = append(spends, r.Spend)
	d.Tokens, d.Cost = spendCharts(labels, spends, len(labels)-1, r.Budget)
	if r.Tuning != nil && len(r.Tuning.Rows) > 0 {
		c := tuningChart(r.Tuning)
		d.Tuning = &c
	}
	names := toolNames(r)
	for _, p := range r.Phases {
		v := phaseView{Phase: p, Timeline: timelineChart(p), Context: contextChart(p, r)}
		labels, spends = nil, nil
		for _, s := range p.Sessions {
			labels = append(labels, fmt.Sprintf("session %d", s.N))
			spends = append(spends, s.Spend)
		}
		labels = append(labels, "phase")
		spends = append(spends, p.Spend)
		v.Tokens, v.Cost = spendCharts(labels, spends, len(labels)-1, p.Budget)
		v.Tools = toolChart(p, names)
		used := map[string]bool{}
		for _, s := range p.Sessions {
			for _, t := range s.Tools {
				used[t.Name] = true
			}
		}
		for i, n := range names {
			if used[n] {
				v.ToolLegend = append(v.ToolLegend, legendItem{Name: n, Fill: palette[i%len(palette)]})
			}
		}
		d.Phases = append(d.Phases, v)
	}
	if err := page.Execute(w, d); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// toolNames are the tools the run called, in the order they first appear
// (busiest first within a session), so a tool keeps its colour throughout.
func toolNames(r *Report) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range r.Phases {
		for _, s := range p.Sessions {
			for _, t := range s.Tools {
				if !seen[t.Name] {
					seen[t.Name] = true
					names = append(names, t.Name)
				}
			}
		}
	}
	return names
}

// when is a time in UTC to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// took is the time between a and b, or "—".
func took(a, b time.Time) string {
	if a.IsZero() || b.IsZero() {
		return "—"
	}
	return shortDur(b.Sub(a))
}
