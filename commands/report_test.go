package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// debussy report on the demo's recorded run (report/testdata/demo laid out
// as .debussy/): the HTML goes beside the run and its path is printed,
// --md prints markdown with the charts; mistakes are usage errors.
func TestReportCommand(t *testing.T) {
	dir := gitRepo(t)
	const id = "20261124-0322-4626"
	src := filepath.Join("..", "report", "testdata", "demo")
	runDir := filepath.Join(dir, ".debussy", "runs", id)
	copyTree(t, src, runDir)
	if err := os.Rename(filepath.Join(runDir, "state.json"), filepath.Join(dir, ".debussy", "state.json")); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := invoke(t, dir, nil, "report")
	want := filepath.Join(runDir, "report.html")
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("report: exit %d, printed %q (want %q)\n%s", code, out, want, stderr)
	}
	page, err := os.ReadFile(want)
	if err != nil || !strings.Contains(string(page), "<svg") || !strings.Contains(string(page), "debussy run "+id) {
		t.Fatalf("report.html: %v\n%.300s", err, page)
	}

	code, out, stderr = invoke(t, dir, nil, "report", "--md", "--run", id)
	for _, s := range []string{"```mermaid", "xychart-beta", "| 1 | Greeting library | completed | 2 | 1 |"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("report --md: exit %d, lacks %q\n%s%s", code, s, out, stderr)
		}
	}

	for _, args := range [][]string{{"report", "--run", "nope"}, {"report", "--md", "--html", "x.html"}, {"report", "extra"}} {
		if code, _, stderr := invoke(t, dir, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
}
