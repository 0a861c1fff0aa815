package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/state"
)

// The orchestrator's errors arrive wrapped, sometimes two at once; the
// mapping must see through both.
func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, ExitOK},
		{"interrupted", fmt.Errorf("phase 1: %w", orchestrator.ErrInterrupted), ExitInterrupted},
		{"cancelled", context.Canceled, ExitInterrupted},
		{"phase failed", fmt.Errorf("phase 1 %w on attempt 2", orchestrator.ErrPhaseFailed), ExitFailed},
		{"blocked", fmt.Errorf("phase 1 %w", orchestrator.ErrBlocked), ExitFailed},
		{"budget exhausted", fmt.Errorf("phase 1: %w: phase tokens 101K of 100K", orchestrator.ErrBudgetExhausted), ExitFailed},
		{"ledger", fmt.Errorf("%w: %w", orchestrator.ErrLedger, errors.New("save ledger /r/.debussy/state.json: disk full")), ExitFailed},
		{"ledger while interrupted", errors.Join(orchestrator.ErrInterrupted, orchestrator.ErrLedger), ExitFailed},
		{"setup wrapping a cause", fmt.Errorf("%w: %w", orchestrator.ErrSetup, errors.New("no HEAD")), ExitUsage},
		{"dirty", fmt.Errorf("%w:\n  README.md", orchestrator.ErrDirty), ExitUsage},
		{"bad plan", fmt.Errorf("%w: %w", plans.ErrInvalidPlan, errors.New("cycle")), ExitUsage},
		{"bad config", fmt.Errorf("load: %w", config.ErrInvalid), ExitUsage},
		{"locked", fmt.Errorf("lock: %w", state.ErrLocked), ExitUsage},
		{"usage", fmt.Errorf("%w: missing MASTER_PLAN.md", ErrUsage), ExitUsage},
		{"anything else", errors.New("disk on fire"), ExitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// --help names every exit code debussy uses, 75 included.
func TestHelpNamesExitCodes(t *testing.T) {
	_, out, _ := invoke(t, t.TempDir(), nil, "--help")
	for _, code := range []string{"0 all phases completed", "1 a phase failed", "2 bad usage", "75 a usage", "130"} {
		if !strings.Contains(out, code) {
			t.Errorf("--help lacks exit code %q:\n%s", code, out)
		}
	}
}
