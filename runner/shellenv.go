package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	fold "github.com/debussy-dev/debussy/internal/text"
)

// envFileVar names the script Claude Code sources before each Bash command,
// also when its shell snapshot failed (measured on 2.1.197, 2.1.330 and 2.1.331).
const envFileVar = "CLAUDE_ENV_FILE"

// shellEnvScript is the CLAUDE_ENV_FILE debussy gives claude: it puts
// pathPrepend first on PATH again in the agent's shell. Claude Code runs
// each command with a snapshot of the user's shell, PATH included; when
// taking the snapshot fails (a ~/.bashrc slower than the CLI waits, or a
// loaded machine), it runs the command in a login shell instead, whose
// /etc/profile resets PATH, and `debussy done` is "command not found": the
// phase's work is then taken for unfinished. The user's own
// CLAUDE_ENV_FILE, if any, is sourced first.
func shellEnvScript(pathPrepend, userFile string) string {
	var b strings.Builder
	b.WriteString("# Written by debussy: sourced by Claude Code before each Bash command (CLAUDE_ENV_FILE).\n")
	if userFile != "" {
		fmt.Fprintf(&b, "[ -r %[1]s ] && . %[1]s\n", fold.ShellQuote(userFile))
	}
	dir := fold.ShellQuote(pathPrepend)
	fmt.Fprintf(&b, "case \":$PATH:\" in *:%s:*) ;; *) PATH=%s${PATH:+:$PATH}; export PATH ;; esac\n", dir, dir)
	return b.String()
}

// writeShellEnv writes spec's CLAUDE_ENV_FILE script when it has both a
// directory to keep on PATH and a place for the file.
func writeShellEnv(spec Spec) error {
	if spec.PathPrepend == "" || spec.ShellEnvFile == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(spec.ShellEnvFile), 0o700); err != nil { // under .debussy/, private
		return fmt.Errorf("write %s: %w", envFileVar, err)
	}
	user := userEnvFile(spec)
	if user == spec.ShellEnvFile {
		user = "" // a run inside a session of the same phase: never source itself
	}
	script := shellEnvScript(spec.PathPrepend, user)
	if err := os.WriteFile(spec.ShellEnvFile, []byte(script), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", envFileVar, err)
	}
	return nil
}

// userEnvFile is the CLAUDE_ENV_FILE the user set, if any.
func userEnvFile(spec Spec) string {
	if v, ok := spec.SetEnv[envFileVar]; ok {
		return v
	}
	for _, kv := range baseEnv(spec) {
		if v, ok := strings.CutPrefix(kv, envFileVar+"="); ok {
			return v
		}
	}
	return ""
}
