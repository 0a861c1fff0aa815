package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/config"
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

// The installed binary carries the documented configuration: `debussy
// config example` prints the repository's .debussy.example.yaml, which sets
// every key of the config struct; init and run --help point to it, and
// init says to commit what it wrote.
func TestConfigExample(t *testing.T) {
	dir := gitRepo(t)
	code, stdout, stderr := invoke(t, dir, nil, "config", "example")
	if code != 0 {
		t.Fatalf("config example: exit %d\n%s", code, stderr)
	}
	repoFile, err := os.ReadFile("../.debussy.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(repoFile) {
		t.Errorf("config example differs from .debussy.example.yaml")
	}
	for _, key := range config.Keys() {
		leaf := key[strings.LastIndex(key, ".")+1:]
		indent := strings.Repeat("  ", strings.Count(key, "."))
		if !strings.Contains(stdout, "\n"+indent+leaf+":") {
			t.Errorf("config example does not set %s", key)
		}
	}
	if code, _, _ := invoke(t, dir, nil, "config", "nope"); code != ExitUsage {
		t.Errorf("config nope: exit %d, want %d", code, ExitUsage)
	}
	_, help, _ := invoke(t, dir, nil, "run", "--help")
	if !strings.Contains(help, "debussy config example") {
		t.Errorf("run --help does not point to debussy config example:\n%s", help)
	}
	code, stdout, stderr = invoke(t, dir, nil, "init")
	if code != 0 || !strings.Contains(stdout, "debussy config example") || !strings.Contains(stdout, "git add .debussy.yaml .gitignore") {
		t.Errorf("init: exit %d; it should point to config example and say to commit both files:\n%s%s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".debussy.yaml")); err != nil || !strings.Contains(string(data), "debussy config example") {
		t.Errorf("the init file does not point to debussy config example: %v", err)
	}
}
