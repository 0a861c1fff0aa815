package orchestrator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

func absPath(p string) (string, error) { return filepath.Abs(p) }

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

// writeSummary prints the final table people read in their terminal or CI log.
func writeSummary(w io.Writer, run *state.Run) {
	fmt.Fprintf(w, "\nrun %s: %s\n", run.ID, run.Status)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTATUS\tSESSIONS\tRESTARTS\tATTEMPTS\tTOKENS\tCOST\tCOMMITS")
	for _, p := range run.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t$%.2f\t%s\n", p.ID, p.Status, p.Sessions, p.Restarts, p.Attempts, estimator.FormatTokens(p.Tokens), p.CostUSD, commitList(p.Commits))
	}
	tokens, cost := runTotals(run)
	if len(run.Phases) > 1 {
		fmt.Fprintf(tw, "total\t\t\t\t\t%s\t$%.2f\t\n", estimator.FormatTokens(tokens), cost)
	}
	tw.Flush()
	for _, p := range run.Phases {
		if p.LastError != "" && p.Status != state.StatusCompleted {
			fmt.Fprintln(w, phaseError(p))
		}
	}
	for _, line := range afterFailureLines(run) {
		fmt.Fprintln(w, line)
	}
	for _, p := range run.Phases {
		if e := p.Economics; e != nil && e.Limits != (state.Limits{}) {
			fmt.Fprintf(w, "phase %s: %s\n", p.ID, SpendLine(e))
		}
	}
	if e := run.Economics; e != nil && e.Limits != (state.Limits{}) {
		fmt.Fprintf(w, "plan: %s\n", SpendLine(e))
	}
	for _, p := range run.Phases {
		if len(p.UncheckedGates) > 0 && p.Attempts > 0 { // phases that ran
			fmt.Fprintf(w, "phase %s: UNCHECKED (no command, not run): %s\n", p.ID, strings.Join(p.UncheckedGates, ", "))
		}
	}
}

// phaseError is a phase's last error as one sentence that names the
// phase once: most errors begin with "phase ID …" or "phase ID: …" already.
func phaseError(p *state.PhaseRecord) string {
	if strings.HasPrefix(p.LastError, "phase "+p.ID+" ") || strings.HasPrefix(p.LastError, "phase "+p.ID+":") {
		return p.LastError
	}
	return fmt.Sprintf("phase %s: %s", p.ID, p.LastError)
}

// appendStepSummary appends a markdown summary for GitHub Actions.
func appendStepSummary(path, planName string, run *state.Run) error {
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
		fmt.Fprintf(&b, "\n**spend**: %s\n", SpendLine(e))
	}
	for _, p := range run.Phases {
		if e := p.Economics; e != nil && e.Limits != (state.Limits{}) {
			fmt.Fprintf(&b, "\n**phase %s**: %s\n", p.ID, SpendLine(e))
		}
	}
	for _, p := range run.Phases {
		if p.LastError != "" && p.Status != state.StatusCompleted {
			fmt.Fprintf(&b, "\n%s\n", strings.ReplaceAll(phaseError(p), "\n", " "))
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
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open step summary: %w", err)
	}
	if _, err := f.WriteString(secrets.Redact(b.String()) + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write step summary: %w", err)
	}
	return f.Close()
}

// runTotals sums the tokens and cost of the run's phases, as recorded
// (a resumed phase's include what its earlier run spent).
func runTotals(run *state.Run) (int64, float64) {
	var tokens int64
	var cost float64
	for _, p := range run.Phases {
		tokens += p.Tokens
		cost += p.CostUSD
	}
	return tokens, cost
}
