package orchestrator

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/plans"
)

// planPath is the plan's absolute path: the ledger matches runs by it.
func (r *orun) planPath() string {
	p := r.Plan.Path
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// planRel is this run's plan as the Debussy-Plan trailer names it.
func (r *orun) planRel() string {
	if r.Repo == nil {
		return filepath.ToSlash(r.Plan.Path)
	}
	return PlanRel(r.Repo.Root(), r.planPath())
}

// PlanRel is the plan's path relative to the repository root, with
// slashes: the Debussy-Plan trailer, the same on every clone. A plan
// outside the repository keeps its absolute path.
func PlanRel(root, planPath string) string {
	abs, err := filepath.Abs(planPath)
	if err != nil {
		return filepath.ToSlash(planPath)
	}
	// Resolve symlinks on both sides (a temp dir under a symlinked /tmp).
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// phaseIDs lists the plan's phase ids, for an error naming one it lacks.
func phaseIDs(p *plans.Plan) string {
	ids := make([]string, 0, len(p.Phases))
	for _, ph := range p.Phases {
		ids = append(ids, ph.ID)
	}
	return strings.Join(ids, ", ")
}

// root is the user's repository root ("" without a repository): phase
// files' paths in prompts are relative to it.
func (r *orun) root() string {
	if r.Repo == nil {
		return ""
	}
	return r.Repo.Root()
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// samplePaths names up to n paths, sorted, and how many more there are.
func samplePaths(files gitcommit.Fingerprints, n int) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if len(paths) > n {
		return strings.Join(paths[:n], ", ") + fmt.Sprintf(" and %d more", len(paths)-n)
	}
	return strings.Join(paths, ", ")
}

// BaseDeps is --base deps.
const BaseDeps = cijob.BaseDeps
