package plans

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/fuzzguard"
)

// Seeds: every master plan and phase file of the compatibility plans in
// ../shared (when present) and this package's testdata.
func planSeeds(f *testing.F) {
	var masters, phases []string
	for _, root := range []string{"testdata", "/work/shared/compat-plans"} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || len(data) > 64<<10 {
				return nil
			}
			if strings.Contains(strings.ToUpper(filepath.Base(p)), "MASTER") {
				masters = append(masters, string(data))
			} else if strings.HasPrefix(filepath.Base(p), "phase") {
				phases = append(phases, string(data))
			}
			return nil
		})
	}
	for i, m := range masters {
		ph := ""
		if len(phases) > 0 {
			ph = phases[i%len(phases)]
		}
		f.Add(m, ph)
	}
	f.Add("| Phase | Title | Status |\n|---|---|---|\n| 1 | [A](phase-1.md) | Not Started |\n", "# Phase 1: A\n\n**Depends On:** [Phase 1](phase-1.md)\n\n## Tasks\n- [ ] x\n\n## Gates\n- test: `go test ./...`\n")
}

// FuzzLoad: any master plan and phase file load without a panic, and every
// finding names its file and a line inside it.
func FuzzLoad(f *testing.F) {
	planSeeds(f)
	f.Fuzz(func(t *testing.T, master, phase string) {
		fuzzguard.Within(t, func() {
			dir := t.TempDir()
			mp := filepath.Join(dir, "MASTER_PLAN.md")
			write := func(p, s string) {
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(mp, master)
			lines := map[string]int{mp: markdownLines(master)}
			for _, name := range []string{"phase-1.md", "phase-2.md", "phase-3.md"} {
				write(filepath.Join(dir, name), phase)
				lines[filepath.Join(dir, name)] = markdownLines(phase)
			}
			plan, err := Load(mp, Options{Root: dir})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			for _, fd := range plan.Findings {
				if fd.File == "" {
					t.Errorf("finding without a file: %s", fd)
				}
				if n, ok := lines[fd.File]; ok && (fd.Line < 0 || fd.Line > n) {
					t.Errorf("finding at line %d of a %d-line file: %s", fd.Line, n, fd)
				}
			}
			_ = plan.Err()
			for _, ph := range plan.Phases {
				if ph.Path != "" {
					_, _ = ReadTasks(ph.Path)
				}
			}
		})
	})
}

// markdownLines counts lines as CommonMark (and so the parser) does: a lone
// "\r" ends a line too, as in an old Mac file, and editors show it so.
func markdownLines(s string) int {
	return strings.Count(strings.ReplaceAll(s, "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(s, "\r\n", ""), "\r") + 1
}
