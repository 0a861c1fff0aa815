package orchestrator

import (
	"fmt"
	"os"

	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/state"
)

// appendStepSummary appends the run's markdown summary (report.StepSummary)
// to the file at path, GitHub Actions' $GITHUB_STEP_SUMMARY.
func appendStepSummary(path, planName string, run *state.Run) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open step summary: %w", err)
	}
	if _, err := f.WriteString(report.StepSummary(planName, run) + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write step summary: %w", err)
	}
	return f.Close()
}
