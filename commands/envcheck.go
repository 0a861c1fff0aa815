package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/runner"
)

// hereProblems are what would stop a run in this environment that the plan
// itself cannot show, each with its fix: claude refusing the permission
// mode (root without IS_SANDBOX), a gate whose program is not on PATH.
// check and --dry-run report them before any session; a run would end
// with exit 2 on the first, and the phase would fail on the second.
func (e *Env) hereProblems(cfgMode string, plan *plans.Plan) []string {
	var out []string
	if p := runner.PermissionProblem(cfgMode, e.Environ()); p != "" {
		out = append(out, p)
	}
	path := e.Getenv("PATH")
	if path == "" {
		return out // nothing to look in; the run could not start a shell either
	}
	for _, ph := range plan.Phases {
		if ph.Status == plans.StatusCompleted {
			continue
		}
		for _, g := range ph.Gates {
			prog := g.Program()
			if prog == "" || g.Unchecked || shellBuiltin[prog] || strings.Contains(prog, "/") || onPath(prog, path) {
				continue // a path may be a script the phase writes
			}
			file := ph.Path
			if wd, err := e.workDir(); err == nil {
				if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
					file = rel
				}
			}
			out = append(out, fmt.Sprintf("%s:%d: gate %s runs `%s`, which is not on PATH: install it, or set the gate's command in gate_commands (.debussy.yaml)",
				file, g.Line, g.Name, prog))
		}
	}
	return out
}

// onPath reports whether name is an executable file in a directory of path.
func onPath(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// shellBuiltin are the words `sh -c` runs without looking at PATH.
var shellBuiltin = map[string]bool{
	"cd": true, "test": true, "[": true, "true": true, "false": true, "echo": true, "printf": true, "exit": true,
	"export": true, "set": true, ":": true, ".": true, "exec": true, "command": true, "if": true, "for": true,
	"while": true, "!": true, "{": true, "(": true, "eval": true, "read": true, "type": true, "ulimit": true, "umask": true,
}
