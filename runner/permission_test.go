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

func TestPermissionNote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode  string
		tools []string
		note  bool
	}{
		{"acceptEdits", nil, true},
		{"default", []string{"Edit"}, true},
		{"acceptEdits", []string{"Bash"}, false},
		{"acceptEdits", []string{"Read", "Bash(npm test:*)"}, false},
		{"bypassPermissions", nil, false},
		{"", nil, false},
	}
	for _, tt := range tests {
		if got := PermissionNote(tt.mode, tt.tools); (got != "") != tt.note {
			t.Errorf("PermissionNote(%q, %v) = %q", tt.mode, tt.tools, got)
		}
	}
}
