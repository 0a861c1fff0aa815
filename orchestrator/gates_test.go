package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// A gate whose program is missing fails the phase as a setup problem that
// names the program and how to replace the command.
func TestMissingError(t *testing.T) {
	res := gate.Run(context.Background(), t.TempDir(), nil, plans.Gate{Name: "lint", Command: "no-such-tool-for-debussy ."}, time.Minute)
	err := missingError("2", res)
	if !errors.Is(err, ErrSetup) || !errors.Is(err, ErrPhaseFailed) || !strings.Contains(err.Error(), "gate_commands") ||
		!strings.Contains(err.Error(), "install no-such-tool-for-debussy") {
		t.Errorf("error %v: want ErrSetup naming the program and gate_commands", err)
	}
}

func TestSummaryListsUncheckedGates(t *testing.T) {
	run := &state.Run{ID: "r1", Status: state.StatusCompleted, Phases: []*state.PhaseRecord{
		{ID: "1", Status: state.StatusCompleted, Attempts: 1, UncheckedGates: []string{"i18n", "docs"}},
		{ID: "2", Status: state.StatusCompleted},
		{ID: "3", Status: state.StatusSkipped, UncheckedGates: []string{"skipped-gate"}}, // never ran: nothing to say
	}}
	var b strings.Builder
	writeSummary(&b, run)
	if want := "phase 1: UNCHECKED (no command, not run): i18n, docs"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "skipped-gate") {
		t.Errorf("summary lists a skipped phase's gate:\n%s", b.String())
	}
	step := filepath.Join(t.TempDir(), "summary.md")
	if err := appendStepSummary(step, "P", run); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(step)
	if err != nil {
		t.Fatal(err)
	}
	if want := "**phase 1**: UNCHECKED gates (no command, not run): i18n, docs"; !strings.Contains(string(md), want) {
		t.Errorf("step summary lacks %q:\n%s", want, md)
	}
}
