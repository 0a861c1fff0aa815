package session_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The boundaries hold by the import graph: a session cannot reach the
// ledger or a logger (a hook's answer cannot wait on either), and the pure
// packages reach neither the runner nor a process.
func TestImportBoundaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	const mod = "github.com/debussy-dev/debussy/"
	tests := []struct {
		pkg       string
		deps      bool // the whole graph, else direct imports
		forbidden []string
	}{
		{"session", true, []string{mod + "state", mod + "orchestrator", mod + "commands", "github.com/charmbracelet/log"}},
		{"session", false, []string{"log/slog", "log"}},
		{"policy", true, []string{"os/exec", mod + "runner", mod + "state"}},
		{"estimator", true, []string{"os/exec", mod + "runner", mod + "state"}},
		{"budget", true, []string{"os/exec", mod + "runner", mod + "state"}},
		{"checkpoint", true, []string{"os/exec", mod + "runner", mod + "state"}},
	}
	for _, tt := range tests {
		format := "{{join .Imports \"\\n\"}}"
		if tt.deps {
			format = "{{join .Deps \"\\n\"}}"
		}
		out, err := exec.Command("go", "list", "-f", format, mod+tt.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", tt.pkg, err)
		}
		have := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			have[p] = true
		}
		for _, f := range tt.forbidden {
			if have[f] {
				t.Errorf("%s imports %s (deps %v)", tt.pkg, f, tt.deps)
			}
		}
	}
}
