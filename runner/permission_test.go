package runner

import "testing"

func TestPermissionProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		env  []string
		root bool
		bad  bool
	}{
		{"bypassPermissions", nil, true, true},
		{"bypassPermissions", []string{"IS_SANDBOX=true"}, true, true},
		{"bypassPermissions", []string{"IS_SANDBOX=1"}, true, false},
		{"bypassPermissions", []string{"IS_SANDBOX=1", "IS_SANDBOX=0"}, true, true},
		{"bypassPermissions", nil, false, false},
		{"acceptEdits", nil, true, false},
		{"", nil, true, false},
	}
	for _, tt := range tests {
		got := permissionProblem(tt.mode, tt.env, tt.root)
		if (got != "") != tt.bad {
			t.Errorf("permissionProblem(%q, %v, root %v) = %q", tt.mode, tt.env, tt.root, got)
		}
	}
}
