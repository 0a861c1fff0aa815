package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In CI, a copied .credentials.json as the login is a warning saying why;
// a token in the environment, or not being in CI, is none.
func TestCILoginFinding(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", ".credentials.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir()
	cases := []struct {
		name string
		env  map[string]string
		warn bool
	}{
		{"GitHub Actions with a copied file", map[string]string{"GITHUB_ACTIONS": "true", "HOME": home}, true},
		{"GitLab CI with a copied file", map[string]string{"GITLAB_CI": "true", "HOME": home}, true},
		{"CI=true with a copied file", map[string]string{"CI": "true", "HOME": home}, true},
		{"CLAUDE_CONFIG_DIR's file", map[string]string{"CI": "true", "HOME": bare, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}, true},
		{"a setup-token in CI", map[string]string{"CI": "true", "HOME": home, "CLAUDE_CODE_OAUTH_TOKEN": "x"}, false},
		{"an API key in CI", map[string]string{"GITHUB_ACTIONS": "true", "HOME": home, "ANTHROPIC_API_KEY": "x"}, false},
		{"not in CI", map[string]string{"HOME": home}, false},
		{"CI without the file", map[string]string{"CI": "true", "HOME": bare}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := ciLoginFinding(func(k string) string { return tc.env[k] })
			if ok != tc.warn {
				t.Fatalf("warned %v, want %v: %+v", ok, tc.warn, f)
			}
			if ok && (f.level != "warn" || !strings.Contains(f.text, "CLAUDE_CODE_OAUTH_TOKEN") || !strings.Contains(f.fix, "claude setup-token")) {
				t.Errorf("finding %+v", f)
			}
		})
	}
}
