package runner

import (
	"strings"
	"testing"
	"time"
)

// The fake CLI answers the three requests (FAKE_CLAUDE_CTX=answer) and
// exits when stdin closes; one that refuses its flags answers nothing.
func TestProbeCLI(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "probe", map[string]string{"FAKE_CLAUDE_CTX": "answer"})
	p, err := ProbeCLI(t.Context(), spec, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Initialize.OK() || !p.ContextUsage.OK() || !p.Interrupt.OK() || p.Exited || p.ExitCode != 0 {
		t.Fatalf("probe %+v", p)
	}
	if p.Context.MaxTokens != 200_000 || p.Context.CompactionPoint() != 167_000 || p.Context.Model != "claude-sonnet-4-5" {
		t.Errorf("context %+v", p.Context)
	}
	if !strings.Contains(p.Version, "(Claude Code)") {
		t.Errorf("version %q", p.Version)
	}

	spec, _ = fakeSpec(t, "refuse", nil)
	p, err = ProbeCLI(t.Context(), spec, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Initialize.Answered || p.ContextUsage.Answered || !p.Exited || p.ExitCode != 1 || !strings.Contains(p.Stderr, "root/sudo") {
		t.Errorf("refusing CLI: %+v", p)
	}

	spec.Bin = "/nonexistent/claude"
	if _, err := ProbeCLI(t.Context(), spec, time.Second); err == nil || !strings.Contains(err.Error(), "claude CLI not found") {
		t.Errorf("missing binary: %v", err)
	}
}
