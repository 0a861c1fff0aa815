package runner

import (
	"os"
	"strings"
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
	return "running as root, claude refuses permission_mode bypassPermissions (--dangerously-skip-permissions): " +
		"set IS_SANDBOX=1 or permission_mode: acceptEdits"
}
