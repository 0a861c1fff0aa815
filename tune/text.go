package tune

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/history"
)

// Evidence names what the report rests on: "14 sessions of runs A, B and 2
// Claude Code transcripts".
func (r *Report) Evidence() string {
	sessions := 0
	var runs []string
	transcripts := 0
	for _, s := range r.Streams {
		sessions += s.Sessions
		switch s.Source {
		case history.SourceRun:
			if !slices.Contains(runs, s.Run) {
				runs = append(runs, s.Run)
			}
		case history.SourceClaude:
			transcripts++
		}
	}
	var parts []string
	if len(runs) > 0 {
		parts = append(parts, fmt.Sprintf("%s of %s %s", plural(sessions-transcripts, "session"), plural1(len(runs), "run"), strings.Join(runs, ", ")))
	}
	if transcripts > 0 {
		parts = append(parts, plural(transcripts, "Claude Code transcript"))
	}
	if len(parts) == 0 {
		return "no sessions"
	}
	return strings.Join(parts, " and ")
}

// WriteText writes the report for a person: what was read, the
// self-check, the candidates as a table, the recommendation, what the
// model assumed and the quality signals.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "debussy tune: %s\n", r.Evidence())
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  skipped %s\n", s)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if len(r.Streams) == 0 {
		fmt.Fprintln(w, "\nNothing to replay: run a plan (debussy run MASTER_PLAN.md), or read Claude Code's transcripts with --from-claude.")
		return
	}
	r.writeSelfCheck(w)
	fmt.Fprintln(w)
	r.writeTable(w)
	if r.Recommended != nil {
		fmt.Fprintf(w, "\n%s\n", r.RecommendedText())
	}
	r.writeAssumptions(w)
	r.writeQuality(w)
}

// SelfCheckText words the self-check: "exact — 2 phases, …".
func (r *Report) SelfCheckText() string {
	sc := r.SelfCheck
	if len(sc.Sessions) == 0 {
		return "none (no debussy run to replay at its own settings)"
	}
	rec, rep := 0, 0
	for _, s := range sc.Sessions {
		rec += s.RecordedRestarts
		rep += s.ReplayedRestarts
	}
	verdict := "exact"
	if !sc.Exact {
		verdict = "NOT exact"
	}
	return fmt.Sprintf("%s — %s, %d restarts recorded, %d replayed; modelled $%.2f, recorded $%.2f",
		verdict, plural(len(sc.Sessions), "phase"), rec, rep, sc.CostUSD, sc.RecordedCostUSD)
}

func (r *Report) writeSelfCheck(w io.Writer) {
	sc := r.SelfCheck
	if len(sc.Sessions) == 0 {
		fmt.Fprintln(w, "Self-check: no debussy run to replay at its own settings (transcripts only).")
		return
	}
	fmt.Fprintf(w, "Self-check at the recorded settings: %s.\n", r.SelfCheckText())
	for _, s := range sc.Sessions {
		if !s.Exact {
			fmt.Fprintf(w, "  run %s phase %s: restarts recorded at turns %v, replayed at %v\n", s.Run, s.Phase, s.RecordedAt, s.ReplayedAt)
		}
		if !s.SettingsRecorded {
			fmt.Fprintf(w, "  run %s phase %s: the run predates recorded settings; the current ones (but its threshold and window) stand in\n", s.Run, s.Phase)
		}
	}
}

// RecommendedText words the recommendation.
func (r *Report) RecommendedText() string {
	rec := r.Recommended
	if rec == nil {
		return ""
	}
	return fmt.Sprintf("Recommended (objective %s): context_threshold %d, context_max_tokens %s, max_restarts %d — %s.",
		rec.Objective, rec.ContextThreshold, estimator.FormatCap(rec.ContextMaxTokens), rec.MaxRestarts, rec.Why)
}

func (r *Report) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "threshold\tcap\tmax restarts\tsessions\trestarts\tout of restarts\tpeak\t>200K\t>400K\tcost\t")
	for _, c := range r.Candidates {
		mark := ""
		if c.Current {
			mark = " (now)"
		}
		if rec := r.Recommended; rec != nil && rec.Candidate.ContextThreshold == c.ContextThreshold &&
			rec.ContextMaxTokens == c.ContextMaxTokens && rec.MaxRestarts == c.MaxRestarts {
			mark += " *"
		}
		fmt.Fprintf(tw, "%d %%%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t$%.2f\t\n", c.ContextThreshold, mark, estimator.FormatCap(c.ContextMaxTokens),
			c.MaxRestarts, c.Sessions, c.Restarts, c.OutOfRestarts, estimator.FormatTokens(c.PeakTokens), c.TurnsOver200K, c.TurnsOver400K, c.CostUSD)
	}
	tw.Flush()
}

// Assumptions says what the model assumed beyond the recorded turns.
func (r *Report) Assumptions() string {
	m := r.Model
	return fmt.Sprintf("The model: a restart's session starts at %s tokens (%s; %.0f %% read from the cache, the rest written at the cache-write price); "+
		"the handoff turn adds %s tokens and writes %s (%s); a turn whose growth was not recorded adds %s (the median).",
		estimator.FormatTokens(m.Base), fromWords(m.BaseFrom, "the recorded restarts' first responses", "a fresh session's first response + 3K of checkpoint"), m.BaseRead*100,
		estimator.FormatTokens(m.Handoff), estimator.FormatTokens(m.HandoffOutput), fromWords(m.HandoffFrom, "measured", "default"),
		estimator.FormatTokens(m.Delta))
}

func (r *Report) writeAssumptions(w io.Writer) {
	fmt.Fprintf(w, "\n%s\n", r.Assumptions())
	for _, p := range r.Prices {
		guess := ""
		if !p.Known {
			guess = " (not in the price table: its family's price)"
		}
		fmt.Fprintf(w, "Priced as %s: $%.2f input, $%.2f output, $%.2f cache write, $%.2f cache read per M tokens%s.\n",
			p.Model, p.Price.Input, p.Price.Output, p.Price.CacheWrite, p.Price.CacheRead, guess)
	}
}

func (r *Report) writeQuality(w io.Writer) {
	q := r.Quality
	fmt.Fprintln(w, "\nQuality signals from the history (beside the cost, not in it):")
	if q.Restarts > 0 {
		fmt.Fprintf(w, "  after %s: %d gate failures in %d gate runs (elsewhere %d in %d); %d files re-read before the first edit\n",
			plural(q.Restarts, "restart"), q.GateFailuresAfterRestart, q.GatesAfterRestart, q.GateFailuresElsewhere, q.GatesElsewhere, q.RereadsAfterRestart)
	} else {
		fmt.Fprintf(w, "  no restart recorded; %d gate failures in %d gate runs\n", q.GateFailuresElsewhere, q.GatesElsewhere)
	}
	if q.Compactions > 0 {
		fmt.Fprintf(w, "  after %s by the CLI: %d files re-read before the first edit\n", plural(q.Compactions, "compaction"), q.RereadsAfterCompaction)
	}
	if q.Warned > 0 {
		fmt.Fprintf(w, "  %d sessions were told they could hand off at a task boundary: %d did, %d ran on to the threshold\n",
			q.Warned, q.AgentHandoffs, q.AgentHandoffsDeclined)
	}
}

func fromWords(from, measured, def string) string {
	if from == "measured" {
		return measured
	}
	return def
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// plural1 is plural without the count for one: "run" or "3 runs".
func plural1(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
