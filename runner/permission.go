package runner

import (
	"os"
	"strings"

	"github.com/debussy-dev/debussy/failure"
)

// PermissionProblem says why claude would refuse permissionMode here, or ""
// when it will not: as root, --dangerously-skip-permissions (permission
// mode bypassPermissions) is refused at once unless IS_SANDBOX=1 — exactly
// "1" (measured on 2.1.197 and 2.1.330: "true" and "yes" are refused too).
// env is in os.Environ form; the effective user is this process's.
func PermissionProblem(permissionMode string, env []string) string {
	return permissionProblem(permissionMode, env, os.Geteuid() == 0)
}

func permissionProblem(permissionMode string, env []string, root bool) string {
	if !root || permissionMode != "bypassPermissions" {
		return ""
	}
	sandbox := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "IS_SANDBOX="); ok {
			sandbox = v // the last one wins, as in exec
		}
	}
	if sandbox == "1" {
		return ""
	}
	return "running as root, claude refuses permission_mode bypassPermissions (--dangerously-skip-permissions): " + failure.FixRoot
}

// PermissionNote says what a permission mode that asks will refuse in an
// unattended run, or "" when nothing: with acceptEdits (or default, plan)
// and no allowed_tools rule for Bash, claude refuses the Bash calls the
// agent's work needs — its tests, its builds, its git — with "This command
// requires approval"; only commands it judges harmless pass (ls, echo,
// touch: measured on 2.1.197 and 2.1.332, as root and not). debussy's own
// commands are allowed by its hook whatever the mode.
func PermissionNote(permissionMode string, allowedTools []string) string {
	switch permissionMode {
	case "acceptEdits", "default", "plan":
	default:
		return ""
	}
	for _, t := range allowedTools {
		if t == "Bash" || strings.HasPrefix(t, "Bash(") {
			return ""
		}
	}
	return "permission_mode " + permissionMode + " refuses the agent's Bash calls (tests, builds, git; only harmless ones such as ls pass) that allowed_tools does not list: " +
		"set allowed_tools: [\"Bash\"] (or rules such as \"Bash(npm test:*)\") in .debussy.yaml; debussy's own commands are always allowed"
}
