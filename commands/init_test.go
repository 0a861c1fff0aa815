package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The quick start in a repository that tracks .gitignore: `debussy init`
// edits it, and the next step's dry run (which refuses what the run
// refuses) goes ahead; a .gitignore with another change is still refused.
func TestInitThenRunWithTrackedGitignore(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra string // appended after init
		code  int
	}{
		{"init's change alone", "", 0},
		{"another change too", "dist/\n", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := gitRepo(t)
			write(t, filepath.Join(dir, ".gitignore"), "node_modules/\n")
			gitIn(t, dir, "add", ".gitignore")
			gitIn(t, dir, "commit", "-q", "-m", "ignore")
			if code, stdout, stderr := invoke(t, dir, nil, "init"); code != 0 || !strings.Contains(stdout, "added .debussy/") {
				t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
			}
			// init's .debussy.yaml is a new file: untracked, not a change.
			if tt.extra != "" {
				f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.WriteString(tt.extra)
				f.Close()
			}
			code, stdout, stderr := invoke(t, dir, map[string]string{"PATH": os.Getenv("PATH"), "IS_SANDBOX": "1"}, "run", "plan/MASTER_PLAN.md", "--dry-run")
			if code != tt.code {
				t.Fatalf("run --dry-run: exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			if tt.code != 0 && !strings.Contains(stderr, ".gitignore") {
				t.Errorf("the refusal does not name .gitignore:\n%s", stderr)
			}
		})
	}
}
