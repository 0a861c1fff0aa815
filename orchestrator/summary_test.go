package orchestrator

import (
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// A phase's last error names the phase once, whichever way it begins.
func TestPhaseErrorNamesThePhaseOnce(t *testing.T) {
	for _, tt := range []struct{ last, want string }{
		{"phase 1: budget exhausted: phase tokens 101.1K of 100K", "phase 1: budget exhausted: phase tokens 101.1K of 100K"},
		{"phase 1 failed: gate lint", "phase 1 failed: gate lint"},
		{"gate lint failed", "phase 1: gate lint failed"},
		{"phase 12: other phase's words", "phase 1: phase 12: other phase's words"},
	} {
		if got := phaseError(&state.PhaseRecord{ID: "1", LastError: tt.last}); got != tt.want {
			t.Errorf("phaseError(%q) = %q, want %q", tt.last, got, tt.want)
		}
	}
}
