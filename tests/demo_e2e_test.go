package tests

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
)

// make demo PLAN=… SCRIPT=… runs an evaluator's own plan against the fake
// API (docs/fake-api.md), and a demo leaves in TMPDIR only its repository
// and logs: the binaries (about 44 MB) are built into one cache directory.
func TestDemoOwnPlan(t *testing.T) {
	claudetest.OncePerSuite(t, "scripts/demo.sh")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	plan := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(plan, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("MASTER_PLAN.md", "# Mine - Master Plan\n\n| Phase | Title | Focus | Risk | Status |\n|---|---|---|---|---|\n"+
		"| 1 | [First](phase-1.md) | docs | Low | Not Started |\n")
	write("phase-1.md", "# Phase 1: First\n\n## Tasks\n- [ ] nothing\n\n## Gates\n- plan: `test -f plan/MASTER_PLAN.md`\n")
	tmp, bin := t.TempDir(), t.TempDir()
	cmd := exec.Command("bash", "scripts/demo.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "DEBUSSY_DEMO_BIN="+bin, "DEBUSSY_DEMO_CLAUDE="+claudetest.Bin(t),
		"PLAN="+filepath.Join(plan, "MASTER_PLAN.md"), "SCRIPT=examples/demo/done.json")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "run ") || !strings.Contains(string(out), "completed") {
		t.Fatalf("make demo with a plan of one's own: %v\n%s", err, out)
	}
	var size int64
	_ = filepath.WalkDir(tmp, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	if size > 5<<20 {
		t.Errorf("the demo left %d MB in TMPDIR, want its repository and logs only", size>>20)
	}
	if _, err := os.Stat(filepath.Join(bin, "debussy")); err != nil {
		t.Errorf("the binaries are not in DEBUSSY_DEMO_BIN: %v", err)
	}
	// Without SCRIPT, PLAN is refused with what to do.
	cmd = exec.Command("bash", "scripts/demo.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "PLAN="+filepath.Join(plan, "MASTER_PLAN.md"))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "docs/fake-api.md") {
		t.Errorf("PLAN without SCRIPT: %v\n%s", err, out)
	}
}
