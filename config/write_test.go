package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetKeys(t *testing.T) {
	set := []Setting{{"context_threshold", "70"}, {"context_max_tokens", "200000"}, {"max_restarts", "4"}}
	comment := []string{"debussy tune 2026-12-06 (objective cost): from 3 sessions of run r1"}
	tests := []struct{ name, in, want string }{
		{"no file", "", "# debussy tune 2026-12-06 (objective cost): from 3 sessions of run r1\n" +
			"context_threshold: 70\ncontext_max_tokens: 200000\nmax_restarts: 4\n"},
		{"other keys and comments kept, new keys appended",
			"# my settings\nmodel: claude-sonnet-4-5   # the cheap one\n\nallowed_tools:\n  - Bash\n",
			"# my settings\nmodel: claude-sonnet-4-5   # the cheap one\n\nallowed_tools:\n  - Bash\n\n" +
				"# debussy tune 2026-12-06 (objective cost): from 3 sessions of run r1\n" +
				"context_threshold: 70\ncontext_max_tokens: 200000\nmax_restarts: 4\n"},
		{"set in place, its comment kept, the old tune comment replaced",
			"model: x\n# debussy tune 2026-01-01 (objective context): from 1 session of run r0\n" +
				"max_restarts: 2 # enough\nbudget:\n  enforcement: soft\ncontext_threshold: 80\n",
			"model: x\n# debussy tune 2026-12-06 (objective cost): from 3 sessions of run r1\n" +
				"max_restarts: 4  # enough\nbudget:\n  enforcement: soft\ncontext_threshold: 70\n\n" +
				"context_max_tokens: 200000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".debussy.yaml")
			if tt.in != "" {
				if err := os.WriteFile(path, []byte(tt.in), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := SetKeys(path, set, "debussy tune", comment); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			cfg, _, err := Load(filepath.Dir(path), "", nil)
			if err != nil {
				t.Fatalf("the written file does not load: %v", err)
			}
			if cfg.ContextThreshold != 70 || cfg.ContextMaxTokens != 200000 || cfg.MaxRestarts != 4 {
				t.Errorf("loaded %d %d %d", cfg.ContextThreshold, cfg.ContextMaxTokens, cfg.MaxRestarts)
			}
		})
	}
	t.Run("a block value is refused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".debussy.yaml")
		os.WriteFile(path, []byte("max_restarts:\n  - 1\n"), 0o644)
		err := SetKeys(path, set, "debussy tune", comment)
		if err == nil || !strings.Contains(err.Error(), ":1: max_restarts is not a one-line value") {
			t.Errorf("got %v", err)
		}
	})
}

// A private config stays private, and a symlinked one (a dotfiles checkout)
// is written where it points: the link stays a link.
func TestSetKeysKeepsModeAndLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "debussy.yaml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("model: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".debussy.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := SetKeys(link, []Setting{{"max_restarts", "4"}}, "debussy tune", nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	fi, err := os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "max_restarts: 4") {
		t.Errorf("target: %q", b)
	}
}
