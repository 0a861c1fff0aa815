package prompt

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

// testPhaseFile is testPlan's phase file as the agent sees it.
const testPhaseFile = "plans/02-endpoints.md"

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

func TestPhase(t *testing.T) {
	plan, ph := testPlan()
	checkGolden(t, "phase-prompt", Phase(plan, ph, testPhaseFile))
}

// In a sandbox, one paragraph after the rules says what is bounded; the
// rest of the prompt is unchanged.
func TestPhaseInSandbox(t *testing.T) {
	plan, ph := testPlan()
	for _, tt := range []struct {
		name   string
		bounds Bounds
	}{
		{"phase-prompt-sandbox", Bounds{Write: []string{"~/.cache/go-build"}}},
		{"phase-prompt-sandbox-domains", Bounds{Domains: []string{"proxy.golang.org", "*.npmjs.org"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := PhaseIn(plan, ph, testPhaseFile, &tt.bounds)
			checkGolden(t, tt.name, got)
			if plain := Phase(plan, ph, testPhaseFile); strings.Replace(got, "\n"+tt.bounds.paragraph(), "", 1) != plain {
				t.Errorf("the sandboxed prompt is not the plain one with one paragraph more")
			}
		})
	}
}

func TestPhaseWithoutGatesOrNotes(t *testing.T) {
	plan := &plans.Plan{Name: "Tiny"}
	ph := &plans.Phase{ID: "1", Title: "Setup", File: "setup.md", Content: "# Setup\n\n- [ ] Create go.mod"}
	checkGolden(t, "phase-prompt-minimal", Phase(plan, ph, "setup.md"))
}

func TestRemediation(t *testing.T) {
	plan, ph := testPlan()
	problem := gate.Evidence([]gate.Result{
		{Gate: ph.Gates[0], Duration: 2 * time.Second},
		{Gate: ph.Gates[1], ExitCode: 1, Duration: 9 * time.Second,
			Output: "--- FAIL: TestItems (0.01s)\n    items_test.go:31: status 500, want 200\nFAIL\nFAIL\texample.com/api\t0.021s\n"},
	})
	checkGolden(t, "remediation-prompt", Remediation(ph, 1, 3, problem, Phase(plan, ph, testPhaseFile)))
}

func TestPhaseUncheckedGate(t *testing.T) {
	plan, ph := testPlan()
	ph.Gates = append(ph.Gates, plans.Gate{Name: "i18n", Requirement: "all strings translated (FR + EN)", Unchecked: true, Line: 16})
	checkGolden(t, "prompt_unchecked", Phase(plan, ph, testPhaseFile))
}

// Gate and hook output and the agent's own reason are quoted into the next
// prompt; a secret in them is not.
func TestPromptsRedactSecrets(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	plan, ph := testPlan()
	tests := []struct {
		name, prompt string
	}{
		{name: "gate output", prompt: Remediation(ph, 1, 3, gate.Evidence([]gate.Result{
			{Gate: ph.Gates[1], ExitCode: 1, Output: "env: ANTHROPIC_API_KEY=" + key + "\nFAIL\n"}}), Phase(plan, ph, testPhaseFile))},
		{name: "the agent's reason", prompt: Remediation(ph, 1, 3, "you reported: failed with token "+key, "")},
		{name: "hook output", prompt: WithRejection(&gitcommit.HookError{Hook: "pre-commit", ExitCode: 1,
			Output: "secret found: " + key + "\n"}, "phase")},
		{name: "hook evidence", prompt: HookEvidence(&gitcommit.HookError{Hook: "pre-commit", ExitCode: 1,
			Output: "secret found: " + key + "\n"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.prompt, key) || !strings.Contains(tt.prompt, "[redacted]") {
				t.Errorf("prompt is not redacted:\n%s", tt.prompt)
			}
		})
	}
}

// Without a rejection the prompt is left as it is.
func TestWithRejectionNone(t *testing.T) {
	if got := WithRejection(nil, "phase"); got != "phase" {
		t.Errorf("WithRejection(nil) = %q, want the prompt unchanged", got)
	}
}
