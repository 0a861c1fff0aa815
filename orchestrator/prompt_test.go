package orchestrator

import (
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/prompt"
)

// The prompt names the phase file from the repository root, where the
// agent works, not as the master plan links it.
func TestPhaseFileFromTheRoot(t *testing.T) {
	tests := []struct{ root, file, path, want string }{
		{"/repo", "phase-1.md", "/repo/docs/plans/phase-1.md", "docs/plans/phase-1.md"},
		{"/repo", "../shared/p.md", "/repo/shared/p.md", "shared/p.md"},
		{"/repo", "../../elsewhere/p.md", "/elsewhere/p.md", "../../elsewhere/p.md"},
		{"", "phase-1.md", "/repo/docs/plans/phase-1.md", "phase-1.md"},
	}
	for _, tt := range tests {
		ph := &plans.Phase{ID: "1", Title: "Setup", File: tt.file, Path: tt.path, Content: "# Setup"}
		if got := phaseFile(tt.root, ph); got != tt.want {
			t.Errorf("phaseFile(%q, %q) = %q, want %q", tt.root, tt.path, got, tt.want)
		}
		if p := prompt.Phase(&plans.Plan{Name: "P"}, ph, phaseFile(tt.root, ph)); !strings.Contains(p, "The phase file is "+tt.want+";") ||
			!strings.Contains(p, "----- phase file: "+tt.want+" -----") {
			t.Errorf("the prompt does not name %s:\n%s", tt.want, p)
		}
	}
}
