package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// claudeSettings is the CLI's own sandbox, for its commands' network (the
// files are bounded by bubblewrap around claude already):
//   - enabled, failing at start if it cannot run (failIfUnavailable),
//     never with the per-command way out (allowUnsandboxedCommands false:
//     the agent's dangerouslyDisableSandbox is ignored);
//   - autoAllowBashIfSandboxed false: its default (true) lets every
//     sandboxed command run unasked, which turns permission_mode
//     acceptEdits into "any command" (measured on 2.1.197: a script merely
//     named debussy ran unasked); the permission mode stays the user's;
//   - enableWeakerNestedSandbox: inside debussy's bubblewrap, the CLI's
//     own cannot mount a fresh /proc (measured on 2.1.332: every command
//     failed "Can't mount proc on /newroot/proc: Operation not permitted");
//     the weaker mode skips that, and what it gives up — file isolation
//     inside claude's sandbox — is debussy's bubblewrap's job here;
//   - allowedDomains: sandbox_allow_domains, nothing else;
//   - allowWrite: the same places bubblewrap makes writable (its default
//     is the working directory only), so debussy done, progress and
//     handoff, git in a worktree, temp files and caches work from Bash;
//   - denyRead: the CLI's own credentials, which claude itself must read
//     and so stay readable in debussy's layout.
func (b *Boundary) claudeSettings(s Scope, temp string) map[string]any {
	write := []string{temp}
	if s.Run != "" {
		write = append(write, s.Run)
	}
	write = append(append(write, s.Git...), b.write...)
	network := map[string]any{"allowedDomains": append([]string{}, b.policy.AllowDomains...)}
	if b.unixSockets {
		// Its seccomp helper cannot run (CLIHelperProblem): without this
		// every command fails with exit 126; the network stays cut.
		network["allowAllUnixSockets"] = true
	}
	return map[string]any{
		"enabled":                   true,
		"failIfUnavailable":         true,
		"allowUnsandboxedCommands":  false,
		"autoAllowBashIfSandboxed":  false,
		"enableWeakerNestedSandbox": true,
		"network":                   network,
		"filesystem": map[string]any{
			"allowWrite": write,
			"denyRead":   []string{filepath.Join(b.claudeDir, ".credentials.json")},
		},
	}
}

// SplitSettings takes a --settings of the user's own out of claude's
// extra arguments (a JSON object, or a file relative to dir) and returns
// the rest and those settings (empty when none). debussy passes claude one
// --settings, its own merged over these, whose "sandbox" block replaces
// theirs: claude takes one --settings, and the boundary's must not be
// loosened there.
func SplitSettings(extra []string, dir string) ([]string, map[string]any, error) {
	settings := map[string]any{}
	var rest []string
	for i := 0; i < len(extra); i++ {
		a := extra[i]
		val, isSettings := "", false
		switch {
		case a == "--settings" && i+1 < len(extra):
			val, isSettings = extra[i+1], true
			i++
		case strings.HasPrefix(a, "--settings="):
			val, isSettings = strings.TrimPrefix(a, "--settings="), true
		}
		if !isSettings {
			rest = append(rest, a)
			continue
		}
		data := []byte(val)
		if t := strings.TrimSpace(val); !strings.HasPrefix(t, "{") {
			p := val
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			var err error
			if data, err = os.ReadFile(p); err != nil {
				return nil, nil, fmt.Errorf("read extra_args' --settings: %w", err)
			}
		}
		if err := json.Unmarshal(data, &settings); err != nil {
			return nil, nil, fmt.Errorf("read extra_args' --settings %s: %w", val, err)
		}
	}
	return rest, settings, nil
}

// CLIHelperProblem says when the claude installed at bin cannot run its
// own sandbox's seccomp helper: the npm package of 2.1.111/2.1.112 (and
// nixpkgs' build of it) ships vendor/seccomp/<arch>/apply-seccomp without
// the execute bit, and every sandboxed command then fails with exit 126
// (measured on 2.1.112). Later CLIs embed the helper. "" when fine.
func CLIHelperProblem(bin string) string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" {
		return ""
	}
	helper := filepath.Join(filepath.Dir(real), "vendor", "seccomp", arch, "apply-seccomp")
	fi, err := os.Stat(helper)
	if err != nil || fi.Mode()&0o111 != 0 {
		return ""
	}
	return fmt.Sprintf("claude's seccomp helper %s is not executable, so its sandbox skips the unix-socket filter (commands could reach local sockets); chmod +x it to restore the filter", helper)
}
