package orchestrator

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/plans"
)

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

func testPlan() (*plans.Plan, *plans.Phase) {
	ph := &plans.Phase{
		ID:    "2",
		Title: "Phase 2: Endpoints",
		File:  "plans/02-endpoints.md",
		Path:  "/home/dev/project/plans/02-endpoints.md",
		Gates: []plans.Gate{
			{Name: "vet", Command: "go vet ./...", Line: 14},
			{Name: "test", Command: "go test -race ./api/...", Line: 15},
		},
		ReadNotes:  []string{"notes/phase-1.md"},
		WriteNotes: []string{"notes/phase-2.md"},
		Content: "# Phase 2: Endpoints\n\n## Tasks\n\n- [x] Route table\n- [ ] `GET /items` returns JSON\n\n" +
			"## Gates\n\n- vet: `go vet ./...`\n- test: `go test -race ./api/...`\n\n\n",
	}
	plan := &plans.Plan{Name: "Items API", Path: "plans/MASTER.md", Phases: []*plans.Phase{
		{ID: "1", Title: "Phase 1: Skeleton", File: "plans/01-skeleton.md"},
		ph,
	}}
	return plan, ph
}

func TestPhasePrompt(t *testing.T) {
	plan, ph := testPlan()
	checkGolden(t, "phase-prompt", phasePrompt(plan, ph, "/home/dev/project"))
}

func TestPhasePromptWithoutGatesOrNotes(t *testing.T) {
	plan := &plans.Plan{Name: "Tiny"}
	ph := &plans.Phase{ID: "1", Title: "Setup", File: "setup.md", Content: "# Setup\n\n- [ ] Create go.mod"}
	checkGolden(t, "phase-prompt-minimal", phasePrompt(plan, ph, "/home/dev/project"))
}

func TestRemediationPrompt(t *testing.T) {
	plan, ph := testPlan()
	problem := gate.Evidence([]gate.Result{
		{Gate: ph.Gates[0], Duration: 2 * time.Second},
		{Gate: ph.Gates[1], ExitCode: 1, Duration: 9 * time.Second,
			Output: "--- FAIL: TestItems (0.01s)\n    items_test.go:31: status 500, want 200\nFAIL\nFAIL\texample.com/api\t0.021s\n"},
	})
	checkGolden(t, "remediation-prompt", remediationPrompt(ph, 1, 3, problem, phasePrompt(plan, ph, "/home/dev/project")))
}

func TestShortTitle(t *testing.T) {
	tests := []struct {
		name, id, title, want string
	}{
		{name: "colon", id: "2", title: "Phase 2: Endpoints", want: "Endpoints"},
		{name: "em dash, dotted id", id: "2.5", title: "Phase 2.5 — Docs", want: "Docs"},
		{name: "en dash", id: "4", title: "Phase 4 – Release", want: "Release"},
		{name: "no prefix", id: "2", title: "Endpoints", want: "Endpoints"},
		{name: "letter id, hyphen", id: "3a", title: "Phase 3a - Parser", want: "Parser"},
		{name: "lower case, spaces", id: "3a", title: "  phase 3A:   Parser  ", want: "Parser"},
		{name: "word starting with phase", id: "1", title: "Phasers", want: "Phasers"},
		{name: "prefix alone", id: "2", title: "Phase 2:", want: "Phase 2:"},
		{name: "other phase's number", id: "2", title: "Phase 3: Later", want: "Phase 3: Later"},
		{name: "id is a prefix of the number", id: "1", title: "Phase 10: Ten", want: "Phase 10: Ten"},
		{name: "bare phase and separator", id: "7", title: "Phase: Cleanup", want: "Cleanup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shortTitle(&plans.Phase{ID: tt.id, Title: tt.title}); got != tt.want {
				t.Errorf("shortTitle(%q, id %q) = %q, want %q", tt.title, tt.id, got, tt.want)
			}
		})
	}
}

func TestPhasePromptUncheckedGate(t *testing.T) {
	plan, ph := testPlan()
	ph.Gates = append(ph.Gates, plans.Gate{Name: "i18n", Requirement: "all strings translated (FR + EN)", Unchecked: true, Line: 16})
	got := phasePrompt(plan, ph, "/home/dev/project")
	checkGolden(t, "prompt_unchecked", got)
}

// Gate and hook output and the agent's own reason are quoted into the next
// prompt; a secret in them is not.
func TestPromptsRedactSecrets(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	plan, ph := testPlan()
	tests := []struct {
		name, prompt string
	}{
		{name: "gate output", prompt: remediationPrompt(ph, 1, 3, gate.Evidence([]gate.Result{
			{Gate: ph.Gates[1], ExitCode: 1, Output: "env: ANTHROPIC_API_KEY=" + key + "\nFAIL\n"}}), phasePrompt(plan, ph, "/home/dev/project"))},
		{name: "the agent's reason", prompt: remediationPrompt(ph, 1, 3, "you reported: failed with token "+key, "")},
		{name: "hook output", prompt: (&phaseRun{rejected: &gitcommit.HookError{Hook: "pre-commit", ExitCode: 1,
			Output: "secret found: " + key + "\n"}}).withRejection("phase")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.prompt, key) || !strings.Contains(tt.prompt, "[redacted]") {
				t.Errorf("prompt is not redacted:\n%s", tt.prompt)
			}
		})
	}
}

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
		if p := phasePrompt(&plans.Plan{Name: "P"}, ph, tt.root); !strings.Contains(p, "The phase file is "+tt.want+";") ||
			!strings.Contains(p, "----- phase file: "+tt.want+" -----") {
			t.Errorf("the prompt does not name %s:\n%s", tt.want, p)
		}
	}
}
