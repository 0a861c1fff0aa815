package plans

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/golden"
)

// render is what the golden files hold: the JSON `debussy check --json`
// prints, then the findings and the run order as a human reads them.
func render(t *testing.T, p *Plan) string {
	t.Helper()
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	s.Write(b)
	s.WriteString("\n\n# findings\n")
	for _, f := range p.Findings {
		s.WriteString(f.String() + "\n")
	}
	s.WriteString("\n# order\n")
	order, err := p.Order()
	if err != nil {
		s.WriteString("error: " + err.Error() + "\n")
	}
	for _, ph := range order {
		s.WriteString(ph.ID + "\n")
	}
	return s.String()
}

func TestLoadGolden(t *testing.T) {
	for _, name := range []string{"full", "broken", "cycle", "nophases", "stray"} {
		t.Run(name, func(t *testing.T) {
			p, err := Load(filepath.Join("testdata", name, "MASTER_PLAN.md"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, p)
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
		})
	}
}

// writePlan writes files into a fresh directory and returns the master
// plan's path.
func writePlan(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "MASTER_PLAN.md")
}

func load(t *testing.T, files map[string]string, opts Options) *Plan {
	t.Helper()
	p, err := Load(writePlan(t, files), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// codes lists findings as "severity code:line", the part tests assert on.
func codes(p *Plan) []string {
	out := []string{}
	for _, f := range p.Findings {
		out = append(out, fmt.Sprintf("%s %s %s:%d", f.Severity, f.Code, filepath.Base(f.File), f.Line))
	}
	return out
}

const oneRow = "# P - Master Plan\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n| 1 | [One](p1.md) | f | Low | Pending |\n"

func TestMasterRows(t *testing.T) {
	tests := []struct {
		name       string
		master     string
		wantIDs    []string
		wantStatus []Status
		wantCodes  []string
	}{
		{
			name:       "ids with dots and letters",
			master:     "# P\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n| 1 | [A](p1.md) | f | Low | Done |\n| 2.5 | [B](p1.md#b) | f | Low | In Progress |\n| 3a | [C](p1.md#c) | f | Low | ⏳ Pending |\n",
			wantIDs:    []string{"1", "2.5", "3a"},
			wantStatus: []Status{StatusCompleted, StatusRunning, StatusPending},
			wantCodes:  []string{"warning duplicate-file MASTER_PLAN.md:6", "warning duplicate-file MASTER_PLAN.md:7", "warning duplicate-file MASTER_PLAN.md:7"},
		},
		{
			name:       "three columns, status last",
			master:     "# P\n\n| # | Name | State of play |\n|---|---|---|\n| 1 | [A](p1.md) | ✅ Done |\n",
			wantIDs:    []string{"1"},
			wantStatus: []Status{StatusCompleted},
			wantCodes:  []string{},
		},
		{
			name:       "id written as Phase 1",
			master:     "# P\n\n| Phase | Title | Status |\n|---|---|---|\n| Phase 1 | [A](p1.md) | Pending |\n",
			wantIDs:    []string{"1"},
			wantStatus: []Status{StatusPending},
			wantCodes:  []string{},
		},
		{
			name:      "fenced table is not a phase table",
			master:    "# P\n\n```\n| Phase | Title | Status |\n|---|---|---|\n| 1 | [A](p1.md) | Pending |\n```\n",
			wantCodes: []string{"error no-phases MASTER_PLAN.md:1"},
		},
		{
			name:      "link cell not a link",
			master:    oneRow + "| 2 | Two | f | Low | Pending |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{"error bad-phase-row MASTER_PLAN.md:6"},
		},
		{
			name:      "link to a URL is not a phase file",
			master:    oneRow + "| 2 | [Two](https://example.com/p2.md) | f | Low | Pending |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{"error bad-phase-row MASTER_PLAN.md:6"},
		},
		{
			name:      "empty id",
			master:    oneRow + "|  | [Two](p1.md) | f | Low | Pending |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{"error phase-no-id MASTER_PLAN.md:6"},
		},
		{
			name:      "duplicate id",
			master:    oneRow + "| 1 | [Again](p1.md) | f | Low | Pending |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{"error duplicate-id MASTER_PLAN.md:6"},
		},
		{
			name:      "unknown status",
			master:    "# P\n\n| Phase | Title | Status |\n|---|---|---|\n| 1 | [A](p1.md) | Soon™ |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{"warning unknown-status MASTER_PLAN.md:5"},
		},
		{
			name:      "missing phase file",
			master:    oneRow + "| 2 | [Two](p2.md) | f | Low | Pending |\n",
			wantIDs:   []string{"1", "2"},
			wantCodes: []string{"error missing-phase-file MASTER_PLAN.md:6"},
		},
		{
			name:      "row outside a table",
			master:    "# P\n\n| Phase | Title | Status |\n| 1 | [A](p1.md) | Pending |\n",
			wantCodes: []string{"error no-phases MASTER_PLAN.md:1", "error bad-phase-row MASTER_PLAN.md:4"},
		},
		{
			name:      "other tables are not phase tables",
			master:    oneRow + "\n| Metric | Phase 1 |\n|---|---|\n| speed | 2x |\n\n| Risk | Mitigation |\n|---|---|\n| slow | [docs](https://example.com) |\n",
			wantIDs:   []string{"1"},
			wantCodes: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := load(t, map[string]string{
				"MASTER_PLAN.md": tt.master,
				"p1.md":          "# One\n\n## Gates\n- ok: `true`\n",
			}, Options{})
			ids := []string{}
			var statuses []Status
			for _, ph := range p.Phases {
				ids = append(ids, ph.ID)
				statuses = append(statuses, ph.Status)
			}
			if tt.wantIDs == nil {
				tt.wantIDs = []string{}
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("ids = %q, want %q", ids, tt.wantIDs)
			}
			if tt.wantStatus != nil && !reflect.DeepEqual(statuses, tt.wantStatus) {
				t.Errorf("statuses = %q, want %q", statuses, tt.wantStatus)
			}
			if got := codes(p); !reflect.DeepEqual(got, tt.wantCodes) {
				t.Errorf("findings = %q, want %q\n%v", got, tt.wantCodes, p.Findings)
			}
		})
	}
}

func TestPlanName(t *testing.T) {
	tests := []struct{ h1, want string }{
		{"# Widget - Master Plan", "Widget"},
		{"# Widget — Master Plan", "Widget"},
		{"# Widget: master plan", "Widget"},
		{"# Widget Rework", "Widget Rework"},
	}
	for _, tt := range tests {
		t.Run(tt.h1, func(t *testing.T) {
			master := strings.Replace(oneRow, "# P - Master Plan", tt.h1, 1)
			p := load(t, map[string]string{"MASTER_PLAN.md": master, "p1.md": "# One\n\n## Gates\n- ok: `true`\n"}, Options{})
			if p.Name != tt.want {
				t.Errorf("Name = %q, want %q", p.Name, tt.want)
			}
		})
	}
}

func TestTitleStutter(t *testing.T) {
	tests := []struct{ h1, want string }{
		{"# Missing Phase Phase 1: Phase One", "Phase One"},
		{"# Issue-to-Plan Phase 1: GitHub Issue Fetcher", "GitHub Issue Fetcher"},
		{"# Phase 1: Setup", "Setup"},
		{"# Setup the phase", "Setup the phase"},
		{"# Phase 1", "Phase 1"},
	}
	for _, tt := range tests {
		t.Run(tt.h1, func(t *testing.T) {
			p := load(t, map[string]string{"MASTER_PLAN.md": oneRow, "p1.md": tt.h1 + "\n\n## Gates\n- ok: `true`\n"}, Options{})
			if got := p.Phases[0].Title; got != tt.want {
				t.Errorf("Title = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGates(t *testing.T) {
	cfg := map[string]string{"ruff": "uv run ruff check .", "Pyright": "uv run pyright"}
	tests := []struct {
		name      string
		heading   string
		item      string
		want      Gate
		wantCodes []string
		strict    bool
	}{
		{"backtick", "## Gates", "- lint: `make lint` - 0 errors",
			Gate{Name: "lint", Requirement: "`make lint` - 0 errors", Command: "make lint", Line: 4}, nil, false},
		{"command prefix in span", "## Gates (must pass before completion)", "- tsc: `command: cd web && tsc --noEmit` - 0 errors",
			Gate{Name: "tsc", Requirement: "`command: cd web && tsc --noEmit` - 0 errors", Command: "cd web && tsc --noEmit", Line: 4}, nil, false},
		{"parenthesised command", "## Gates", "- types: 0 errors in `src/` (command: `uv run pyright src/`)",
			Gate{Name: "types", Requirement: "0 errors in `src/` (command: `uv run pyright src/`)", Command: "uv run pyright src/", Line: 4}, nil, false},
		{"config replaces the plan's command", "## Gates", "- ruff: `ruff check .` - 0 errors",
			Gate{Name: "ruff", Requirement: "`ruff check .` - 0 errors", Command: "uv run ruff check .", FromConfig: true, Line: 4}, nil, false},
		{"bare command", "## Gates", "- fmt: (command: gofmt -l .) clean",
			Gate{Name: "fmt", Requirement: "(command: gofmt -l .) clean", Command: "gofmt -l .", Line: 4}, nil, false},
		{"named by its command", "## Validation Gates", "- command: `npm test` ➜ all pass",
			Gate{Name: "npm test", Requirement: "`npm test` ➜ all pass", Command: "npm test", Line: 4}, nil, false},
		{"double backticks", "## gates", "- shell: ``echo `date` `` - prints",
			Gate{Name: "shell", Requirement: "``echo `date` `` - prints", Command: "echo `date`", Line: 4}, nil, false},
		{"bold name", "## Gates", "- **architecture: 0 violations** (`make arch`)",
			Gate{Name: "architecture", Requirement: "0 violations (`make arch`)", Command: "make arch", Line: 4}, nil, false},
		{"from config", "## Gates", "- ruff: 0 errors",
			Gate{Name: "ruff", Requirement: "0 errors", Command: "uv run ruff check .", FromConfig: true, Line: 4}, nil, false},
		{"from config ignoring case", "## Gates", "- pyright: 0 errors",
			Gate{Name: "pyright", Requirement: "0 errors", Command: "uv run pyright", FromConfig: true, Line: 4}, nil, false},
		{"no command anywhere is unchecked", "## Gates", "- coverage: no decrease",
			Gate{Name: "coverage", Requirement: "no decrease", Unchecked: true, Line: 4}, []string{"warning gate-no-command p1.md:4"}, false},
		{"strict gates refuse unchecked", "## Gates", "- i18n: all strings translated",
			Gate{Name: "i18n", Requirement: "all strings translated", Unchecked: true, Line: 4}, []string{"error gate-no-command p1.md:4"}, true},
		{"preset", "## Gates", "- mypy: 0 errors",
			Gate{Name: "mypy", Requirement: "0 errors", Command: "mypy .", Preset: true, Line: 4}, nil, false},
		{"preset by spaced name", "## Gates", "- Go Vet: clean",
			Gate{Name: "Go Vet", Requirement: "clean", Command: "go vet ./...", Preset: true, Line: 4}, nil, false},
		{"coverage threshold preset", "## Gates", "- coverage: ≥ 80%",
			Gate{Name: "coverage", Requirement: "≥ 80%", Command: "pytest --cov --cov-fail-under=80", Preset: true, Line: 4}, nil, false},
		{"config wins over preset", "## Gates", "- ruff: 0 errors",
			Gate{Name: "ruff", Requirement: "0 errors", Command: "uv run ruff check .", FromConfig: true, Line: 4}, nil, false},
		{"fenced block", "## Gates", "- tests:\n  ```bash\n  # all of them\n  go test \\\n    ./...\n\n  go vet ./...\n  ```",
			Gate{Name: "tests", Command: "go test ./... && go vet ./...", Line: 4}, nil, false},
		{"fenced command: line", "## Gates", "- lint\n  ```\n  command: npm run lint\n  ```",
			Gate{Name: "lint", Command: "npm run lint", Line: 4}, nil, false},
		{"fenced command: line among notes", "## Gates", "- **types**: 0 errors\n\n  ```yaml\n  command: `npm run type-check`\n  expect: 0 errors\n  ```",
			Gate{Name: "types", Requirement: "0 errors", Command: "npm run type-check", Line: 4}, nil, false},
		{"fenced command: line at the margin", "## Gates", "- lint:\n```\ncommand: npm run lint\n```",
			Gate{Name: "lint", Command: "npm run lint", Line: 4}, nil, false},
		{"a plain block at the margin is not the gate's", "## Gates", "- coverage: no decrease\n\n```\nnpm test\n```",
			Gate{Name: "coverage", Requirement: "no decrease", Unchecked: true, Line: 4}, []string{"warning gate-no-command p1.md:4"}, false},
		{"comment is not a command", "## Gates", "- types: must pass  # no command: the agent checks",
			Gate{Name: "types", Requirement: "must pass  # no command: the agent checks", Unchecked: true, Line: 4}, []string{"warning gate-no-command p1.md:4"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := load(t, map[string]string{
				"MASTER_PLAN.md": oneRow,
				"p1.md":          "# One\n\n" + tt.heading + "\n" + tt.item + "\n\n## Tasks\n- [ ] 1.1: work\n",
			}, Options{GateCommands: cfg, StrictGates: tt.strict})
			gates := p.Phases[0].Gates
			if len(gates) != 1 || gates[0] != tt.want {
				t.Errorf("gates = %+v\nwant   [%+v]", gates, tt.want)
			}
			want := tt.wantCodes
			if want == nil {
				want = []string{}
			}
			if got := codes(p); !reflect.DeepEqual(got, want) {
				t.Errorf("findings = %q, want %q", got, want)
			}
		})
	}
}

func TestNoGates(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"tasks but no gates", "# One\n\n## Tasks\n- [ ] 1.1: work\n", []string{"warning no-gates p1.md:1"}},
		{"empty gates section", "# One\n\n## Gates\n\nAll must pass.\n\n## Tasks\n- [ ] 1.1: work\n", []string{"warning no-gates p1.md:3"}},
		{"nothing at all", "# One\n\nJust prose.\n", []string{"warning empty-phase p1.md:1"}},
		{"gates in a code fence do not count", "# One\n\n```\n## Gates\n- ok: `true`\n```\n- [ ] 1.1: work\n", []string{"warning no-gates p1.md:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := load(t, map[string]string{"MASTER_PLAN.md": oneRow, "p1.md": tt.body}, Options{})
			if got := codes(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDependencies(t *testing.T) {
	master := "# P\n\n| Phase | Title | Status |\n|---|---|---|\n" +
		"| 1 | [A](p1.md) | Done |\n| 2 | [B](sub/p2.md) | Pending |\n| 2.5 | [C](p2.5.md) | Pending |\n" +
		"| 3a | [D](p3a.md) | Pending |\n| 9 | [Under test](p9.md) | Pending |\n"
	gate := "\n\n## Gates\n- ok: `true`\n"
	tests := []struct {
		name      string
		body      string
		want      []string
		wantCodes []string
	}{
		{"depends on link", "**Depends On:** [Phase 1](p1.md)", []string{"1"}, nil},
		{"depends on link into a subdirectory", "**Depends On:** [Phase 2: B](sub/p2.md)", []string{"2"}, nil},
		{"depends on two links", "**Depends On:** [Phase 3a](p3a.md), [Phase 1](p1.md)", []string{"3a", "1"}, nil},
		{"depends on mention", "**Depends On:** Phase 2.5 (C) - needs its output", []string{"2.5"}, nil},
		{"mention list", "**Depends On:** Phase 1, 2 & 3a (all of them)", []string{"1", "2", "3a"}, nil},
		{"phases and", "**Depends On:** Phases 1 and 2", []string{"1", "2"}, nil},
		{"range", "**Depends On:** Phase 1-2", []string{"1", "2"}, nil},
		{"bold colon outside", "**Depends On**: Phase 1", []string{"1"}, nil},
		{"N/A", "**Depends On:** N/A", []string{}, nil},
		{"N/A mentioning a phase", "**Depends On:** N/A (runs in parallel with Phase 1)", []string{}, nil},
		{"none", "**Depends On:** None (can run independently)", []string{}, nil},
		{"dash", "**Depends On:** -", []string{}, nil},
		{"in code span is not a dependency", "**Depends On:** `Phase 1` style text", []string{}, nil},
		{"section previous phase", "## Dependencies\n- Previous phase: Phase 1 (models)\n- External: Phase 2 of another project", []string{"1"}, nil},
		{"section previous phases", "## Dependencies\n- Previous phases: Phase 1 (A), Phase 2 (B)", []string{"1", "2"}, nil},
		{"section requires link", "## Dependencies\n- Requires: [the hotfix](p2.5.md)", []string{"2.5"}, nil},
		{"section bare phase", "## Dependencies\n- Phase 3a\n- Phase 1 (foundation)", []string{"3a", "1"}, nil},
		{"section N/A", "## Dependencies\n- Previous phase: N/A (initial phase)", []string{}, nil},
		{"both forms merged", "**Depends On:** Phase 1\n\n## Dependencies\n- Previous phase: [B](sub/p2.md)\n- Previous phase: Phase 1", []string{"1", "2"}, nil},
		{"unknown id", "**Depends On:** Phase 7", []string{}, []string{"error unknown-dependency p9.md:1"}},
		{"broken link read from its text", "**Depends On:** [Phase 1](missing.md)", []string{"1"}, []string{"warning broken-dependency-link p9.md:1"}},
		{"broken link without a phase in its text", "**Depends On:** [the base](missing.md)", []string{}, []string{"error unknown-dependency p9.md:1"}},
		{"unknown file", "**Depends On:** [Phase X](px.md)", []string{}, []string{"error unknown-dependency p9.md:1"}},
		{"template placeholder is prose", "**Depends On:** {Phase N-1 link or N/A}", []string{}, nil},
		{"self", "**Depends On:** Phase 9", []string{}, []string{"warning self-dependency p9.md:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := load(t, map[string]string{
				"MASTER_PLAN.md": master,
				"p1.md":          "# A" + gate,
				"sub/p2.md":      "# B" + gate,
				"p2.5.md":        "# C" + gate,
				"p3a.md":         "# D" + gate,
				"p9.md":          tt.body + "\n\n# Under test" + gate,
			}, Options{})
			if got := p.Phase("9").DependsOn; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DependsOn = %q, want %q", got, tt.want)
			}
			want := tt.wantCodes
			if want == nil {
				want = []string{}
			}
			if got := codes(p); !reflect.DeepEqual(got, want) {
				t.Errorf("findings = %q, want %q\n%v", got, want, p.Findings)
			}
		})
	}
}

func TestTasksAndNotes(t *testing.T) {
	body := strings.Join([]string{
		"# One",              // 1
		"",                   // 2
		"## Process Wrapper", // 3
		"- [ ] Read previous notes: `notes/a.md` and `notes/b.md`", // 4
		"- [x] **[IMPLEMENTATION]**",                               // 5
		"- [ ] Write notes to: `notes/one.md`",                     // 6
		"- [ ] Write `notes/one.md` (REQUIRED)",                    // 7
		"- [ ] Read previous notes: N/A",                           // 8
		"",                                                         // 9
		"```markdown",                                              // 10
		"- [ ] inside a fence: not a task",                         // 11
		"```",                                                      // 12
		"",                                                         // 13
		"## Gates",                                                 // 14
		"- ok: `true`",                                             // 15
		"",                                                         // 16
		"## Tasks",                                                 // 17
		"- [X] 1.1: first",                                         // 18
		"  continued",                                              // 19
		"  - [ ] 1.1.1: nested",                                    // 20
		"1. [ ] 1.2: ordered list",                                 // 21
		"",
	}, "\n")
	p := load(t, map[string]string{"MASTER_PLAN.md": oneRow, "p1.md": body}, Options{})
	ph := p.Phases[0]
	// The Process Wrapper checklist is how to work, not a task.
	wantTasks := []Task{
		{Text: "1.1: first continued", Done: true, Line: 18},
		{Text: "1.1.1: nested", Line: 20},
		{Text: "1.2: ordered list", Line: 21},
	}
	if !reflect.DeepEqual(ph.Tasks, wantTasks) {
		t.Errorf("Tasks =\n%+v\nwant\n%+v", ph.Tasks, wantTasks)
	}
	if want := []string{"notes/a.md", "notes/b.md"}; !reflect.DeepEqual(ph.ReadNotes, want) {
		t.Errorf("ReadNotes = %q, want %q", ph.ReadNotes, want)
	}
	if want := []string{"notes/one.md"}; !reflect.DeepEqual(ph.WriteNotes, want) {
		t.Errorf("WriteNotes = %q, want %q", ph.WriteNotes, want)
	}
}

func TestNotesWithoutDependency(t *testing.T) {
	master := "# P\n\n| Phase | Title | Status |\n|---|---|---|\n| 1 | [A](p1.md) | Pending |\n| 2 | [B](p2.md) | Pending |\n| 3 | [C](p3.md) | Pending |\n"
	p := load(t, map[string]string{
		"MASTER_PLAN.md": master,
		"p1.md":          "# A\n\n- [ ] Write `notes/1.md`\n\n## Gates\n- ok: `true`\n",
		"p2.md":          "# B\n\n**Depends On:** Phase 1\n\n- [ ] Read previous notes: `notes/1.md`\n- [ ] Write `notes/2.md`\n\n## Gates\n- ok: `true`\n",
		"p3.md":          "# C\n\n**Depends On:** N/A\n\n- [ ] Read previous notes: `notes/2.md`\n- [ ] Read previous notes: `notes/elsewhere.md`\n\n## Gates\n- ok: `true`\n",
	}, Options{})
	if got, want := codes(p), []string{"warning notes-not-dependency p3.md:5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("findings = %q, want %q", got, want)
	}
}

func TestCRLFReadsLikeLF(t *testing.T) {
	files := map[string]string{}
	for _, name := range []string{"MASTER_PLAN.md", "phase-1.md", "phase-2.5.md", "phase-3a.md", "phase-4.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", "full", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	lf := load(t, files, Options{})
	for name, body := range files {
		files[name] = "\uFEFF" + strings.ReplaceAll(body, "\n", "\r\n")
	}
	crlf := load(t, files, Options{})

	strip := func(p *Plan) string {
		for i := range p.Findings {
			p.Findings[i].File = filepath.Base(p.Findings[i].File)
		}
		p.Path = ""
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i := range lf.Phases {
		if lf.Phases[i].Content != crlf.Phases[i].Content {
			t.Errorf("phase %s: CRLF content not normalised", lf.Phases[i].ID)
		}
	}
	if a, b := strip(lf), strip(crlf); a != b {
		t.Errorf("CRLF plan differs from LF plan:\nLF:   %s\nCRLF: %s", a, b)
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name string
		deps map[string][]string // id → depends on; ids in table order 1..5
		want []string
		err  string
	}{
		{"table order without deps", nil, []string{"1", "2", "3", "4", "5"}, ""},
		{"ties keep table order", map[string][]string{"2": {"4"}}, []string{"1", "3", "4", "2", "5"}, ""},
		{"chain reversed", map[string][]string{"1": {"2"}, "2": {"3"}, "3": {"4"}, "4": {"5"}}, []string{"5", "4", "3", "2", "1"}, ""},
		{"unknown dep ignored", map[string][]string{"1": {"42"}}, []string{"1", "2", "3", "4", "5"}, ""},
		{"cycle", map[string][]string{"1": {"3"}, "2": {"1"}, "3": {"2"}}, nil, "dependency cycle: 1 → 2 → 3 → 1"},
		{"cycle after a free phase", map[string][]string{"4": {"5"}, "5": {"4"}}, nil, "dependency cycle: 4 → 5 → 4"},
		{"self", map[string][]string{"3": {"3"}}, nil, "dependency cycle: 3 → 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Plan{}
			for _, id := range []string{"1", "2", "3", "4", "5"} {
				p.Phases = append(p.Phases, &Phase{ID: id, DependsOn: tt.deps[id]})
			}
			got, err := p.Order()
			if tt.err != "" {
				var ce *CycleError
				if !errors.As(err, &ce) || err.Error() != tt.err || !errors.Is(err, ErrInvalidPlan) {
					t.Fatalf("Order() error = %v, want CycleError %q wrapping ErrInvalidPlan", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, ph := range got {
				ids = append(ids, ph.ID)
			}
			if !reflect.DeepEqual(ids, tt.want) {
				t.Errorf("Order() = %q, want %q", ids, tt.want)
			}
		})
	}
}

func TestErr(t *testing.T) {
	p := &Plan{Path: "plan.md", Findings: []Finding{
		{Severity: SeverityWarning, Code: "no-gates", File: "p1.md", Line: 1, Message: "no gates"},
	}}
	if err := p.Err(); err != nil {
		t.Errorf("Err() with only warnings = %v, want nil", err)
	}
	p.Findings = append(p.Findings,
		Finding{Severity: SeverityError, Code: "missing-phase-file", File: "plan.md", Line: 7, Message: "phase 2: phase file p2.md not found"},
		Finding{Severity: SeverityError, Code: "no-phases", File: "plan.md", Message: "no phases"},
	)
	err := p.Err()
	if !errors.Is(err, ErrInvalidPlan) {
		t.Fatalf("Err() = %v, want it to wrap ErrInvalidPlan", err)
	}
	want := "invalid plan plan.md (2 errors):\n" +
		"  plan.md:7: error: phase 2: phase file p2.md not found [missing-phase-file]\n" +
		"  plan.md: error: no phases [no-phases]"
	if err.Error() != want {
		t.Errorf("Err() =\n%s\nwant\n%s", err, want)
	}
	if got := len(p.Errors()); got != 2 {
		t.Errorf("Errors() has %d findings, want 2", got)
	}
}

func TestJSONNeverNull(t *testing.T) {
	p := load(t, map[string]string{
		"MASTER_PLAN.md": oneRow + "| 2 | [Two](missing.md) | f | Low | Pending |\n",
		"p1.md":          "# One\n",
	}, Options{})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"depends_on":null`, `"gates":null`, `"tasks":null`, `"findings":null`, `"phases":null`} {
		if strings.Contains(string(b), field) {
			t.Errorf("JSON has %s: %s", field, b)
		}
	}
}

func TestLoadMissingMaster(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.md"), Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want os.ErrNotExist", err)
	}
}

func TestReadTasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phase.md")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# P\r\n\r\n- [ ] 1.1: a\r\n- [ ] 1.2: b\r\n")
	before, err := ReadTasks(path)
	if err != nil {
		t.Fatal(err)
	}
	write("# P\r\n\r\n- [x] 1.1: a\r\n- [ ] 1.2: b\r\n")
	after, err := ReadTasks(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{{Text: "1.1: a", Line: 3}, {Text: "1.2: b", Line: 4}}
	if !reflect.DeepEqual(before, want) {
		t.Errorf("before = %+v, want %+v", before, want)
	}
	want[0].Done = true
	if !reflect.DeepEqual(after, want) {
		t.Errorf("after = %+v, want %+v", after, want)
	}
	if _, err := ReadTasks(filepath.Join(t.TempDir(), "gone.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadTasks(missing) error = %v, want os.ErrNotExist", err)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{Severity: SeverityError, Code: "dependency-cycle", File: "p1.md", Line: 4, Message: "dependency cycle: 1 → 2 → 1"}
	if got, want := f.String(), "p1.md:4: error: dependency cycle: 1 → 2 → 1 [dependency-cycle]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// What can run now: phases not done whose dependencies, transitively, are.
func TestReady(t *testing.T) {
	plan := &Plan{Phases: []*Phase{{ID: "1"}, {ID: "2", DependsOn: []string{"1"}}, {ID: "3", DependsOn: []string{"2"}}, {ID: "4"}}}
	for _, tt := range []struct {
		done       []string
		ready      string
		unfinished string // of phase 3
	}{
		{nil, "1 4", "1 2"},
		{[]string{"1"}, "2 4", "2"},
		{[]string{"1", "2", "4"}, "3", ""},
	} {
		done := func(id string) bool { return slices.Contains(tt.done, id) }
		ready, err := plan.Ready(done)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ph := range ready {
			ids = append(ids, ph.ID)
		}
		if got := strings.Join(ids, " "); got != tt.ready {
			t.Errorf("done %v: ready %q, want %q", tt.done, got, tt.ready)
		}
		if got := strings.Join(plan.Unfinished(plan.Phases[2], done), " "); got != tt.unfinished {
			t.Errorf("done %v: phase 3 waits for %q, want %q", tt.done, got, tt.unfinished)
		}
	}
}
