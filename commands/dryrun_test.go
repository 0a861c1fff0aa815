package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// --dry-run is the real run minus the sessions: whatever the run refuses
// before its first session, the dry run refuses with the same exit code,
// and before printing anything. The real run gets a claude that is never
// started (`true`), or a missing one where that is the case.
func TestDryRunRefusesWhatRunRefuses(t *testing.T) {
	plan := "plan/MASTER_PLAN.md"
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string)
		outDir bool // run outside any git repository
		args   []string
		code   int
		stderr string
	}{
		{name: "--phase with unfinished dependencies", args: []string{"--phase", "2"}, code: ExitUsage, stderr: "depends on unfinished phase 1"},
		{name: "unknown --phase", args: []string{"--phase", "9"}, code: ExitUsage, stderr: "--phase 9: no such phase"},
		{name: "missing claude", args: []string{"--claude-bin", "/no/such/claude"}, code: ExitUsage, stderr: "claude CLI not found"},
		{
			name:  "dirty tree",
			setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "plan", "phase-1.md"), "# changed\n") },
			code:  ExitUsage, stderr: "uncommitted changes to tracked files",
		},
		{
			name: "unfinished merge (Preflight)",
			setup: func(t *testing.T, dir string) {
				out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dir, ".git", "MERGE_HEAD"), string(out))
			},
			code: ExitUsage, stderr: "middle of a merge",
		},
		{name: "not a git repository", outDir: true, code: ExitUsage, stderr: "not inside a git repository"},
		{
			name: "another run holds the lock",
			setup: func(t *testing.T, dir string) {
				release, _, err := state.New(filepath.Join(dir, state.DirName)).Lock(state.LockInfo{PID: os.Getpid(), RunID: "other", Started: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = release() })
			},
			code: ExitUsage, stderr: "other",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codes := map[string]int{}
			for _, mode := range []string{"dry run", "real run"} {
				dir := gitRepo(t)
				if tt.outDir {
					dir = t.TempDir()
					if out, err := exec.Command("cp", "-r", "../examples/demo/plan", dir+"/plan").CombinedOutput(); err != nil {
						t.Fatalf("copy plan: %v %s", err, out)
					}
				}
				if tt.setup != nil {
					tt.setup(t, dir)
				}
				args := append([]string{"run", plan}, tt.args...)
				if mode == "dry run" {
					args = append(args, "--dry-run")
				}
				code, out, stderr := invoke(t, dir, nil, args...)
				codes[mode] = code
				if code != tt.code || !strings.Contains(stderr, tt.stderr) {
					t.Errorf("%s: exit %d, want %d with %q; stderr:\n%s", mode, code, tt.code, tt.stderr, stderr)
				}
				if mode == "dry run" && out != "" {
					t.Errorf("dry run printed before refusing:\n%s", out)
				}
				if mode == "real run" && !tt.outDir {
					// Refused before the first session: no commit.
					if n, err := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output(); err != nil || strings.TrimSpace(string(n)) != "1" {
						t.Errorf("real run made commits: %s %v", n, err)
					}
				}
			}
			if codes["dry run"] != codes["real run"] {
				t.Errorf("dry run exit %d, real run exit %d", codes["dry run"], codes["real run"])
			}
		})
	}
	// The control: a clean repository, a known phase, a claude on PATH.
	if code, out, stderr := invoke(t, gitRepo(t), nil, "run", plan, "--dry-run"); code != 0 || !strings.Contains(out, "dry run: nothing started") {
		t.Errorf("clean dry run: exit %d\n%s%s", code, out, stderr)
	}
}
