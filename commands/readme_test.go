package commands

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is one fenced block of the README: its info string and text.
type readmeBlock struct {
	lang, text string
	line       int
}

// readmeBlocks reads the README's top-level fenced blocks. A fence closes
// only with at least as many backticks as opened it, so a ````markdown
// block may hold ``` blocks.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	return readmeBlocksOf(t, "../README.md")
}

func readmeBlocksOf(t *testing.T, path string) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open := regexp.MustCompile("^(`{3,})(\\S*)")
	var out []readmeBlock
	var cur *readmeBlock
	fence := ""
	for i, line := range strings.Split(string(raw), "\n") {
		switch {
		case cur == nil:
			if m := open.FindStringSubmatch(line); m != nil {
				cur, fence = &readmeBlock{lang: m[2], line: i + 1}, m[1]
			}
		case strings.TrimSpace(line) == fence:
			out = append(out, *cur)
			cur = nil
		default:
			cur.text += line + "\n"
		}
	}
	return out
}

// The README's examples stay true: its plan examples load as it says they
// do, and its quick start's commands (all but the ones that start claude
// sessions) succeed on them.
func TestReadmeExamples(t *testing.T) {
	var md, quick []readmeBlock
	for _, b := range readmeBlocks(t) {
		switch {
		case b.lang == "markdown":
			md = append(md, b)
		case b.lang == "sh" && strings.Contains(b.text, "debussy init") && !strings.Contains(b.text, "<<'EOF'"):
			quick = append(quick, b)
		}
	}
	if len(md) != 2 || len(quick) != 1 {
		t.Fatalf("README has %d markdown and %d quick-start blocks, want 2 and 1: update this test with the README", len(md), len(quick))
	}

	// The master plan example and the phase file example, in a Go
	// repository (for the go vet preset); phases 1 and 2.5 are stubs.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "docs", "plans")
	if err := os.MkdirAll(plan, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(plan, "MASTER_PLAN.md"), md[0].text)
	write(t, filepath.Join(plan, "phase-2.md"), md[1].text)
	write(t, filepath.Join(plan, "phase-1.md"), "# Phase 1: Schema\n\n## Tasks\n- [x] tables\n\n## Gates\n- ok: `true`\n")
	write(t, filepath.Join(plan, "phase-2.5.md"), "# Phase 2.5: Docs\n\n**Depends On:** Phase 2\n\n## Tasks\n- [ ] docs\n\n## Gates\n- ok: `true`\n")
	write(t, filepath.Join(dir, "go.mod"), "module example.com/payments\n\ngo 1.26\n")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "plan"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}

	code, out, stderr := invoke(t, dir, nil, "check", "--json", "docs/plans/MASTER_PLAN.md")
	if code != 0 {
		t.Fatalf("check on the README's plan: exit %d\n%s%s", code, out, stderr)
	}
	var doc struct {
		Name   string `json:"plan"`
		Phases []struct {
			ID        string
			Title     string
			Status    string
			DependsOn []string `json:"depends_on"`
			Gates     []struct {
				Name, Command     string
				Preset, Unchecked bool
			}
			ReadNotes []string `json:"read_notes"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "Payments API" || len(doc.Phases) != 3 || doc.Phases[0].Status != "completed" || doc.Phases[1].Status != "running" {
		t.Errorf("master plan example read as %+v", doc)
	}
	ph := doc.Phases[1]
	if ph.Title != "Endpoints" || strings.Join(ph.DependsOn, ",") != "1" || strings.Join(ph.ReadNotes, ",") != "notes/phase-1.md" {
		t.Errorf("phase example read as %+v", ph)
	}
	var gates []string
	for _, g := range ph.Gates {
		s := g.Name + " → " + g.Command
		switch {
		case g.Preset:
			s += " (preset)"
		case g.Unchecked:
			s += "UNCHECKED"
		}
		gates = append(gates, s)
	}
	want := []string{"tests → go test ./...", "lint → golangci-lint run", "go vet → go vet ./... (preset)", "e2e → make e2e", "types → UNCHECKED"}
	if strings.Join(gates, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's gates read as\n%s\nwant\n%s", strings.Join(gates, "\n"), strings.Join(want, "\n"))
	}

	// The quick start, line by line; a run without --dry-run would start
	// claude sessions, which the end-to-end tests cover.
	ran := 0
	for _, line := range strings.Split(quick[0].text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "debussy" {
			continue
		}
		if fields[1] == "run" && !strings.Contains(line, "--dry-run") {
			continue
		}
		code, out, stderr := invoke(t, dir, nil, fields[1:]...)
		if code != 0 {
			t.Errorf("README quick start %q: exit %d\n%s%s", line, code, out, stderr)
		}
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d quick-start commands, want init, check, run --dry-run and status", ran)
	}
}

// StarterPlan splits the README's starter plan block into its shell part
// (what writes and commits the plan) and its debussy commands.
func StarterPlan(t *testing.T, readme string) (shell string, commands [][]string) {
	t.Helper()
	var block string
	for _, b := range readmeBlocksOf(t, readme) {
		if b.lang == "sh" && strings.Contains(b.text, "cat > plan/MASTER_PLAN.md <<'EOF'") {
			block = b.text
		}
	}
	if block == "" {
		t.Fatal("README has no starter plan block")
	}
	var sh strings.Builder
	for _, line := range strings.Split(block, "\n") {
		if rest, ok := strings.CutPrefix(line, "debussy "); ok {
			rest, _, _ = strings.Cut(rest, "#")
			commands = append(commands, strings.Fields(rest))
			continue
		}
		sh.WriteString(line + "\n")
	}
	return sh.String(), commands
}

// The quick start's starter plan pastes and runs: its shell part writes
// and commits a plan that check passes, and its debussy commands (the run
// as a dry run here; the end-to-end test runs it for real) succeed.
func TestReadmeStarterPlan(t *testing.T) {
	shell, cmds := StarterPlan(t, "../README.md")
	dir := gitRepo(t)
	cmd := exec.Command("sh", "-e", "-c", shell)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the starter plan's shell part: %v\n%s", err, out)
	}
	if code, out, stderr := invoke(t, dir, nil, "check", "plan/MASTER_PLAN.md"); code != 0 || strings.Contains(out, "UNCHECKED") {
		t.Errorf("check on the starter plan: exit %d\n%s%s", code, out, stderr)
	}
	if len(cmds) != 2 || cmds[0][0] != "init" || cmds[1][0] != "run" {
		t.Fatalf("the starter plan's commands: %v, want init then run", cmds)
	}
	for _, args := range cmds {
		if args[0] == "run" {
			args = append(args, "--dry-run")
		}
		if code, out, stderr := invoke(t, dir, nil, args...); code != 0 {
			t.Errorf("debussy %v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
}
