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
	if id := Slug(strings.TrimSuffix(p, path.Ext(p))); id != "" {
		return id
	}
	return "plan"
}

// Slug lowercases s and turns every run of other characters than [a-z0-9]
// into one '-', with none at either end; "" when s has no such character.
// It is a DNS label's alphabet, so a plan's ID and a Kubernetes name are
// spelled alike.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// PhaseBranch is the branch a phase's results are pushed to and merged from:
// debussy/<plan-id>/phase-<phase-id>. --push writes it, --base deps and
// collect read it.
func PhaseBranch(planID, phaseID string) string {
	return "debussy/" + planID + "/phase-" + phaseID
}
