package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/runner"
)

// hereProblems are what would stop a run in this environment that the plan
// itself cannot show, each with its fix: claude refusing the permission
// mode (root without IS_SANDBOX; perm, a warning), a gate whose program is
// not on PATH (gates). check and --dry-run report them before any session;
// a run would end with exit 2 on the first, and the phase would fail (exit
// 2) on the second — check and --dry-run exit 2 on it too.
func (e *Env) hereProblems(cfgMode string, plan *plans.Plan) (perm string, gates []string) {
	return runner.PermissionProblem(cfgMode, e.Environ()), e.gateProblems(plan)
}

// gateProblems are the gates whose program is not on PATH, with the two
// fixes that work: install it, or set the gate's gate_commands entry.
func (e *Env) gateProblems(plan *plans.Plan) []string {
	var out []string
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
			fix := fmt.Sprintf("set gate_commands: {%s: \"…\"} in .debussy.yaml to a command that works here", strconv.Quote(g.Name))
			if g.FromConfig {
				fix = fmt.Sprintf("change gate_commands' %s entry in .debussy.yaml", strconv.Quote(g.Name))
			}
			out = append(out, fmt.Sprintf("%s:%d: gate %s runs `%s`, which is not on PATH: install %s, or %s",
				file, g.Line, g.Name, prog, prog, fix))
		}
	}
	return out
}

// hereError is check's and --dry-run's exit for the problems hereProblems
// found (printed already): exit 2, as the run would end.
func hereError(problems []string) error {
	return fmt.Errorf("%w: %s a run here would stop on", orchestrator.ErrSetup, plural(len(problems), "problem"))
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
