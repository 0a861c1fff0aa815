package orchestrator

import (
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/prompt"
)

// phaseFile is the phase file's path relative to the repository root at
// root — what the agent, working there, can open; ph.File is relative to
// the master plan ("phase-1.md" for docs/plans/phase-1.md). Outside the
// repository it stays as the plan wrote it.
func phaseFile(root string, ph *plans.Phase) string {
	if root == "" || ph.Path == "" {
		return filepath.ToSlash(ph.File)
	}
	rel := PlanRel(root, ph.Path)
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return filepath.ToSlash(ph.File)
	}
	return rel
}

// withRejection puts the last hook rejection, if any, before base, so the
// session that follows a refused checkpoint commit hears about it.
func (p *phaseRun) withRejection(base string) string {
	return prompt.WithRejection(p.rejected, base)
}
