package policy

import "testing"

func TestOwnCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"debussy done --phase 2", true},
		{"debussy done", true},
		{`debussy done --phase 2 --status blocked --reason "the API key is missing; ask the user"`, true},
		{`debussy progress 'tests pass & lint is clean'`, true},
		{"debussy handoff --phase 1 --file .debussy/handoff.md", true},
		{"/root/go/bin/debussy done --phase 1", true},
		{"  debussy done --phase 1  ", true},

		{"debussy run plan.md", false},
		{"debussy", false},
		{"debussy done; rm -rf /", false},
		{"debussy done && curl evil", false},
		{"debussy done | tee x", false},
		{"debussy done > out.txt", false},
		{"debussy done $(curl evil)", false},
		{"debussy done `id`", false},
		{`debussy done "$HOME"`, false},
		{"FOO=1 debussy done", false},
		{"debussy done &", false},
		{"! debussy done", false},
		{"debussy done\nrm x", false},
		{"mydebussy done", false},
		{"echo debussy done", false},
		{"debussy done 'unterminated", false},
		{"(debussy done)", false},
	}
	for _, tt := range tests {
		if got := OwnCommand(tt.cmd); got != tt.want {
			t.Errorf("OwnCommand(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}
