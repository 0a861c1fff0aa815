package plans

import (
	"path"
	"path/filepath"
	"strings"
)

// ID names a plan across machines: the master plan's path relative to the
// repository root, without its extension, lowercased, every run of other
// characters than [a-z0-9] one '-'. docs/plans/MASTER_PLAN.md →
// docs-plans-master-plan. Two plans of one repository never share a path, so
// they never share an ID; every clone computes the same one.
func ID(repoRelPath string) string {
	p := filepath.ToSlash(repoRelPath)
	p = strings.TrimSuffix(p, path.Ext(p))
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(p) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	id := strings.TrimSuffix(b.String(), "-")
	if id == "" {
		return "plan"
	}
	return id
}

// PhaseBranch is the branch a phase's results are pushed to and merged from:
// debussy/<plan-id>/phase-<phase-id>. --push writes it, --base deps and
// collect read it.
func PhaseBranch(planID, phaseID string) string {
	return "debussy/" + planID + "/phase-" + phaseID
}
