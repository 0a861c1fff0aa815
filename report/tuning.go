package report

import (
	"fmt"

	"github.com/debussy-dev/debussy/estimator"
)

// Tuning is `debussy tune` on the run's own sessions (package tune, run
// by the caller): each candidate setting's modelled cost and restarts.
type Tuning struct {
	Evidence  string // what it rests on: "3 sessions of run …"
	SelfCheck string // the run replayed at its own settings: "exact …"
	Assumes   string // what the model assumed of restarts and handoffs
	Rows      []TuningRow
	// Recommended says the objective's pick and why.
	Recommended string
}

// TuningRow is one candidate.
type TuningRow struct {
	Threshold, Cap, MaxRestarts int
	CostByKind                  [4]float64 // Kinds' order
	Cost                        float64
	Restarts, OutOfRestarts     int
	Peak                        int64
	Current, Recommended        bool
}

// tuningChart is each candidate's modelled cost stacked by kind, with
// its restarts and peak context beside it; the current settings in bold.
func tuningChart(t *Tuning) chart {
	var rows []barRow
	for _, r := range t.Rows {
		label := fmt.Sprintf("%d %% · cap %s", r.Threshold, estimator.FormatCap(r.Cap))
		if r.Recommended {
			label = "* " + label
		}
		var titles []string
		for k, name := range Kinds {
			titles = append(titles, fmt.Sprintf("%s: %s for %s", label, money(r.CostByKind[k]), name))
		}
		note := fmt.Sprintf("%s · %s · peak %s", money(r.Cost), plural(r.Restarts, "restart"), estimator.FormatTokens(r.Peak))
		if r.OutOfRestarts > 0 {
			note += fmt.Sprintf(" · %d out of restarts", r.OutOfRestarts)
		}
		if r.Current {
			note += " (now)"
		}
		rows = append(rows, barRow{Label: label, Values: r.CostByKind[:], Titles: titles, Note: note, Bold: r.Current})
	}
	return stackedBars("modelled cost per candidate setting", rows, kindColors[:], 0, "")
}
