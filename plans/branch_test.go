package plans

import "testing"

func TestIDAndPhaseBranch(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"docs/plans/MASTER_PLAN.md", "docs-plans-master-plan"},
		{"MASTER_PLAN.md", "master-plan"},
		{"./plans/Übersicht v2.md", "plans-bersicht-v2"},
		{"___.md", "plan"},
	} {
		if got := ID(tc.in); got != tc.want {
			t.Errorf("ID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := PhaseBranch("master-plan", "2"); got != "debussy/master-plan/phase-2" {
		t.Errorf("PhaseBranch = %q", got)
	}
}
