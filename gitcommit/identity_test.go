package gitcommit

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without user.name and user.email anywhere, debussy says whom its commits
// will be by; with them, nothing.
func TestMadeUpIdentity(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	home := t.TempDir() // no ~/.gitconfig
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM=1"}
	r, err := Open(dir, WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	who := r.MadeUpIdentity(context.Background())
	if who == "" || !strings.Contains(who, "<") {
		t.Errorf("MadeUpIdentity() = %q, want the made-up committer", who)
	}
	for _, kv := range [][2]string{{"user.name", "Ada"}, {"user.email", "ada@example.com"}} {
		if out, err := exec.Command("git", "-C", dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v %s", err, out)
		}
	}
	r, err = Open(dir, WithEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	if who := r.MadeUpIdentity(context.Background()); who != "" {
		t.Errorf("MadeUpIdentity() = %q with user.name and user.email set", who)
	}
}
