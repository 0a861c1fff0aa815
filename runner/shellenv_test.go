package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CLAUDE_ENV_FILE script, run by a real sh after a login shell's
// /etc/profile reset PATH: debussy's directory (spaces and quotes in its
// name too) is first again, once; the user's own file is sourced first.
func TestShellEnvScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	dir := filepath.Join(root, `it's a "dir"`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(root, "user env.sh")
	if err := os.WriteFile(user, []byte("export FROM_USER=yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, userFile, want string
	}{
		{"reset by /etc/profile", "/usr/bin:/bin", "", dir + ":/usr/bin:/bin"},
		{"already first", dir + ":/usr/bin", "", dir + ":/usr/bin"},
		{"empty", "", "", dir},
		{"the user's file too", "/bin", user, dir + ":/bin yes"},
		{"the user's file gone", "/bin", filepath.Join(root, "missing.sh"), dir + ":/bin"},
		{"the file itself", "/bin", "SELF", dir + ":/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "agent-env.sh")
			spec := Spec{PathPrepend: dir, ShellEnvFile: file, Env: []string{}}
			if tt.userFile == "SELF" {
				tt.userFile = file
			}
			if tt.userFile != "" {
				spec.Env = []string{envFileVar + "=" + tt.userFile}
			}
			if err := writeShellEnv(spec); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(sh, "-c", `. "$1" && printf '%s' "$PATH" && [ -z "$FROM_USER" ] || printf ' %s' "$FROM_USER"`, "sh", file)
			cmd.Env = []string{"PATH=" + tt.path}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tt.want {
				t.Errorf("PATH after the script = %q, want %q", got, tt.want)
			}
		})
	}
}
