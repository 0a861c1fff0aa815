package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
	fold "github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

// Summary writes the table people read in their terminal or CI log when a
// run ends: each phase's outcome, sessions, tokens, cost and commits, then
// the phases' errors, what became of the phases running when one failed,
// the spend against each budget and the gates nothing could check.
func Summary(w io.Writer, run *state.Run) { summary(w, run, true) }

// PublicSummary is Summary for a log that may carry no free text (a CI
// job's, a pipe): each phase's error in structured words (its Reason, as
// the step summary says it), never a gate's output or the agent's text.
func PublicSummary(w io.Writer, run *state.Run) { summary(w, run, false) }

func summary(w io.Writer, run *state.Run, full bool) {
	fmt.Fprintf(w, "\nrun %s: %s\n", run.ID, run.Status)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTATUS\tSESSIONS\tRESTARTS\tATTEMPTS\tTOKENS\tCOST\tCOMMITS")
	for _, p := range run.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t$%.2f\t%s\n", p.ID, p.Status, p.Sessions, p.Restarts, p.Attempts, estimator.FormatTokens(p.Tokens), p.CostUSD, commitList(p.Commits))
	}
	tw.Flush()
	for _, line := range TotalsOf(run).Lines() {
		fmt.Fprintln(w, line)
	}
	for _, line := range AcrossRunsLines(run) {
		fmt.Fprintln(w, line)
	}
	for _, p := range run.Phases {
		if p.LastError != "" && p.Status != state.StatusCompleted {
			if full {
				fmt.Fprintln(w, phaseError(p))
			} else {
				fmt.Fprintln(w, fold.OneLine(publicReason(p), 0))
			}
		}
	}
	for _, line := range afterFailureLines(run) {
		fmt.Fprintln(w, line)
	}
	for _, p := range run.Phases {
		if e := p.Economics; e != nil && e.Limits != (state.Limits{}) {
			fmt.Fprintf(w, "phase %s budget: %s\n", p.ID, SpendLine(e)) // across its runs, as the budget counts
		}
	}
	if e := run.Economics; e != nil && e.Limits != (state.Limits{}) {
		fmt.Fprintf(w, "plan budget: %s\n", SpendLine(e))
	}
	for _, p := range run.Phases {
		if len(p.UncheckedGates) > 0 && p.Attempts > 0 { // phases that ran
			fmt.Fprintf(w, "phase %s: UNCHECKED (no command, not run): %s\n", p.ID, strings.Join(p.UncheckedGates, ", "))
		}
	}
}

// StepSummary is the run's summary in markdown for a GitHub Actions step
// summary, planName in its heading, secrets redacted: what Summary says,
// as a table and paragraphs.
func StepSummary(planName string, run *state.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### debussy: %s — %s\n\n", planName, run.Status)
	b.WriteString("| phase | title | outcome | sessions | restarts | tokens | cost | commits |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range run.Phases {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %s | $%.2f | %s |\n", p.ID, strings.ReplaceAll(p.Title, "|", "\\|"), p.Status,
			p.Sessions, p.Restarts, estimator.FormatTokens(p.Tokens), p.CostUSD, commitList(p.Commits))
	}
	tokens, cost := runTotals(run)
	fmt.Fprintf(&b, "| **total** | | | | | %s | $%.2f | |\n", estimator.FormatTokens(tokens), cost)
	if e := run.Economics; e != nil {
		fmt.Fprintf(&b, "\n**plan spend**: %s\n", SpendLine(e)) // every phase across its runs
	}
	for _, p := range run.Phases {
		if e := p.Economics; e != nil && e.Limits != (state.Limits{}) {
			fmt.Fprintf(&b, "\n**phase %s**: %s\n", p.ID, SpendLine(e))
		}
	}
	for _, p := range run.Phases {
		// GitHub shows the summary to whoever sees the run: why a phase
		// ended in structured words (Reason), never LastError's command
		// or tool output.
		if p.LastError != "" && p.Status != state.StatusCompleted {
			fmt.Fprintf(&b, "\n%s\n", strings.ReplaceAll(publicReason(p), "\n", " "))
		}
	}
	if lines := afterFailureLines(run); len(lines) > 0 {
		fmt.Fprintf(&b, "\n%s\n", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "- %s\n", strings.TrimSpace(l))
		}
	}
	for _, p := range run.Phases {
		if len(p.UncheckedGates) > 0 && p.Attempts > 0 { // phases that ran
			fmt.Fprintf(&b, "\n**phase %s**: UNCHECKED gates (no command, not run): %s\n", p.ID, strings.Join(p.UncheckedGates, ", "))
		}
	}
	return secrets.Redact(b.String())
}

// SpendLine says in one line what a phase or run spent and where that
// stands in its budget: "spent 101.2K tokens, $0.31, 17 API turns; budget
// tokens 100K: 101 % used, exhausted (strict)". "" without a record.
func SpendLine(e *state.Economics) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "spent %s tokens, $%.2f, %d API turns", estimator.FormatTokens(e.Tokens), e.CostUSD, e.APITurns)
	if e.WallMs > 0 {
		fmt.Fprintf(&b, ", %s", (time.Duration(e.WallMs) * time.Millisecond).Round(time.Second))
	}
	if e.Limits != (state.Limits{}) {
		fmt.Fprintf(&b, "; budget %s: %.0f %% used", LimitText(e.Limits), e.UsedPct)
		if e.Level != "" && e.Level != budget.LevelNone.String() {
			fmt.Fprintf(&b, ", level %s", e.Level)
		}
		if e.Enforcement != "" {
			fmt.Fprintf(&b, " (%s)", e.Enforcement)
		}
		if e.Extensions > 0 {
			fmt.Fprintf(&b, ", extended %d×", e.Extensions)
		}
		if e.Exhausted {
			b.WriteString(", exhausted")
		}
	}
	if n := len(e.Quarters); n > 0 {
		q := e.Quarters[n-1]
		fmt.Fprintf(&b, "; %d quarter evaluations, last at %.0f %%: %d of %d tasks, probability %.2f, %s",
			n, q.UsedPct, q.TasksDone, q.TasksTotal, q.Probability, q.Decision)
	}
	if len(e.UnknownModels) > 0 {
		fmt.Fprintf(&b, "; priced as Sonnet (unknown): %s", strings.Join(e.UnknownModels, ", "))
	}
	return b.String()
}

// LimitText names a budget's limits: "tokens 100K, cost $2.00, time 1h0m0s";
// "" when it sets none.
func LimitText(l state.Limits) string {
	var parts []string
	if l.Tokens > 0 {
		parts = append(parts, "tokens "+estimator.FormatTokens(l.Tokens))
	}
	if l.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("cost $%.2f", l.CostUSD))
	}
	if l.DurationMs > 0 {
		parts = append(parts, "time "+(time.Duration(l.DurationMs)*time.Millisecond).String())
	}
	return strings.Join(parts, ", ")
}

// commitList names a phase's commits, short, eliding the middle of a long
// list.
func commitList(hashes []string) string {
	out := make([]string, 0, len(hashes))
	for _, h := range hashes {
		out = append(out, gitcommit.Short(h))
	}
	if len(out) > 4 {
		out = append(out[:1], fmt.Sprintf("… %d more …", len(out)-2), out[len(out)-1])
	}
	return strings.Join(out, " ")
}

// phaseError is a phase's last error as one sentence that names the
// phase once: most errors begin with "phase ID …" or "phase ID: …" already.
func phaseError(p *state.PhaseRecord) string {
	if strings.HasPrefix(p.LastError, "phase "+p.ID+" ") || strings.HasPrefix(p.LastError, "phase "+p.ID+":") {
		return p.LastError
	}
	return fmt.Sprintf("phase %s: %s", p.ID, p.LastError)
}

// publicReason is what the step summary says of why p ended: its
// Reason, or for a record written before Reason existed, nothing more
// than its status.
func publicReason(p *state.PhaseRecord) string {
	r := p.Reason
	if r == "" {
		r = string(p.Status) + " (see debussy logs)"
	}
	if strings.HasPrefix(r, "phase "+p.ID+" ") || strings.HasPrefix(r, "phase "+p.ID+":") {
		return r
	}
	return fmt.Sprintf("phase %s: %s", p.ID, r)
}

// runTotals sums the tokens and cost of the run's phases in this run
// (a phase's Tokens; its earlier runs' are its PriorTokens).
func runTotals(run *state.Run) (int64, float64) {
	t := TotalsOf(run)
	return t.RunTokens, t.RunCostUSD
}

// Totals are the run's spends, one figure per meaning, which every view
// (the run's summary, status, status --json, the report) shows alike:
// this run's, and the plan's — every phase across all its runs.
type Totals struct {
	RunTokens   int64
	RunCostUSD  float64
	PlanTokens  int64
	PlanCostUSD float64
}

// TotalsOf sums run's phases.
func TotalsOf(run *state.Run) Totals {
	var t Totals
	for _, p := range run.Phases {
		t.RunTokens += p.Tokens
		t.RunCostUSD += p.CostUSD
		t.PlanTokens += p.PhaseTokens()
		t.PlanCostUSD += p.PhaseCostUSD()
	}
	return t
}

// Lines says the totals, each labelled: "this run: …", and "plan, across
// its runs: …" when earlier runs spent something too.
func (t Totals) Lines() []string {
	lines := []string{fmt.Sprintf("this run: %s tokens, $%.2f", estimator.FormatTokens(t.RunTokens), t.RunCostUSD)}
	if t.PlanTokens != t.RunTokens || t.PlanCostUSD != t.RunCostUSD {
		lines = append(lines, fmt.Sprintf("plan, across its runs: %s tokens, $%.2f", estimator.FormatTokens(t.PlanTokens), t.PlanCostUSD))
	}
	return lines
}

// PhaseSpend is one phase's spend, one figure per meaning: this run's,
// and the phase's across its runs (a resumed phase's earlier runs too).
type PhaseSpend struct {
	RunTokens     int64
	RunCostUSD    float64
	AcrossTokens  int64
	AcrossCostUSD float64
}

// PhaseSpendOf is what the phase's record says it spent.
func PhaseSpendOf(p *state.PhaseRecord) PhaseSpend {
	return PhaseSpend{RunTokens: p.Tokens, RunCostUSD: p.CostUSD, AcrossTokens: p.PhaseTokens(), AcrossCostUSD: p.PhaseCostUSD()}
}

// Resumed reports whether earlier runs spent on the phase too.
func (s PhaseSpend) Resumed() bool {
	return s.AcrossTokens != s.RunTokens || s.AcrossCostUSD != s.RunCostUSD
}

// RunText is this run's spend: "47.1K tokens, $0.05".
func (s PhaseSpend) RunText() string {
	return fmt.Sprintf("%s tokens, $%.2f", estimator.FormatTokens(s.RunTokens), s.RunCostUSD)
}

// AcrossText says the phase's spend across its runs, labelled, with this
// run's and the earlier runs' part; "" when this run is its only one.
func (s PhaseSpend) AcrossText() string {
	if !s.Resumed() {
		return ""
	}
	return fmt.Sprintf("%s tokens, $%.2f across its runs (this run %s, $%.2f; earlier runs %s, $%.2f)",
		estimator.FormatTokens(s.AcrossTokens), s.AcrossCostUSD, estimator.FormatTokens(s.RunTokens), s.RunCostUSD,
		estimator.FormatTokens(s.AcrossTokens-s.RunTokens), s.AcrossCostUSD-s.RunCostUSD)
}

// Text is the phase's spend for the report: "this run: …", then its
// spend across its runs when earlier runs spent on it too.
func (s PhaseSpend) Text() string {
	t := "this run: " + s.RunText()
	if a := s.AcrossText(); a != "" {
		t += " · " + a
	}
	return t
}

// TotalsText is the run's totals on one line, as the report's header says
// them: Totals.Lines joined.
func (r *Report) TotalsText() string { return strings.Join(r.Totals.Lines(), " · ") }

// AcrossRunsLines are "phase N: … across its runs" for each resumed phase
// of run: what the summary, status and the report say of them.
func AcrossRunsLines(run *state.Run) []string {
	var lines []string
	for _, p := range run.Phases {
		if t := PhaseSpendOf(p).AcrossText(); t != "" {
			lines = append(lines, fmt.Sprintf("phase %s: %s", p.ID, t))
		}
	}
	return lines
}

// afterFailureLines say, for the summary, which phases were running when
// the first one failed and what became of each.
func afterFailureLines(run *state.Run) []string {
	af := run.AfterFailure
	if af == nil {
		return nil
	}
	how := "without --fail-fast they went on to their end"
	if af.FailFast {
		how = "--fail-fast stopped them at a safe point"
	}
	lines := []string{fmt.Sprintf("phase %s failed while %s %s running; %s:", af.Phase, phaseList(af.Running), isAre(len(af.Running)), how)}
	for _, id := range af.Running {
		if p := run.Phase(id); p != nil {
			lines = append(lines, fmt.Sprintf("  phase %s: %s", id, afterFailureOutcome(p, af.FailFast)))
		}
	}
	return lines
}

// afterFailureOutcome is what became of a phase running at the failure.
func afterFailureOutcome(p *state.PhaseRecord, failFast bool) string {
	at := ""
	if n := len(p.Commits); n > 0 {
		at = " at " + gitcommit.Short(p.Commits[n-1])
	}
	onBranch := ""
	if p.Branch != "" {
		onBranch = ", its work committed on branch " + p.Branch + at
	}
	switch {
	case p.Status == state.StatusCompleted && p.Merge != "":
		return "finished: completed, merged into your branch at " + gitcommit.Short(p.Merge)
	case p.Status == state.StatusInterrupted && failFast:
		return "stopped by --fail-fast" + onBranch + "; run the same command again to resume it"
	case p.Status == state.StatusInterrupted:
		return "interrupted" + onBranch + "; run the same command again to resume it"
	case p.Status == state.StatusRunning:
		return "still running when debussy stopped"
	}
	return "finished: " + string(p.Status) + onBranch
}

func phaseList(ids []string) string {
	noun := "phase "
	if len(ids) > 1 {
		noun = "phases "
	}
	return noun + strings.Join(ids, ", ")
}

func isAre(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
