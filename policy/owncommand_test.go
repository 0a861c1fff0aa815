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
		// The file decides, not the name: isSelf (runner.SelfProgram) says
		// which programs are debussy's own executable.
		{"./tools/debussy done --phase 1", false},
		{"/tmp/elsewhere/debussy done --phase 1", false},
		{"bin/debussy progress x", false},
	}
	self := func(prog string) bool { return prog == "debussy" || prog == "/root/go/bin/debussy" }
	for _, tt := range tests {
		if got := OwnCommand(tt.cmd, self); got != tt.want {
			t.Errorf("OwnCommand(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}

func TestOwnCommandWithoutSelf(t *testing.T) {
	if OwnCommand("debussy done --phase 1", nil) {
		t.Error("allowed without a way to tell debussy's own executable")
	}
}

// RunsOwn only lets calls through the handoff stage; it finds debussy's
// command however the agent wrapped it.
func TestRunsOwn(t *testing.T) {
	tests := []struct {
		cmd, sub string
		want     bool
	}{
		{"debussy handoff --phase 1", "handoff", true},
		{"mkdir -p notes && printf '## Done\\n' > notes/handoff.md && debussy handoff --phase 1 --file notes/handoff.md", "handoff", true},
		{"bash -c 'debussy done --phase 1'", "done", true},
		{`sh -c "cd x && debussy done"`, "done", true},
		{"X=1 debussy done", "done", true},
		{"/abs/path/debussy done --phase 1", "done", true},
		{"env X=1 debussy progress hi", "progress", true},
		{"(cd sub; debussy done)", "done", true},
		{"echo debussy done", "done", false},
		{"debussy done --phase 1", "handoff", false},
		{"grep -r 'debussy handoff' .", "handoff", false},
		{"ls", "done", false},
	}
	for _, tt := range tests {
		if got := RunsOwn(tt.cmd, tt.sub); got != tt.want {
			t.Errorf("RunsOwn(%q, %q) = %v, want %v", tt.cmd, tt.sub, got, tt.want)
		}
	}
}
