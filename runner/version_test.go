package runner

import (
	"strings"
	"testing"
)

func TestCLIVersionNote(t *testing.T) {
	tests := []struct {
		version, want string
	}{
		{"2.1.197 (Claude Code)", ""},
		{OldestCLI, ""},
		{NewestTestedCLI + " (Claude Code)", ""},
		{"2.1.100 (Claude Code)", "older than " + OldestCLI},
		{"1.0.128", "older than"},
		{"2.2.0 (Claude Code)", "newer than " + NewestTestedCLI},
		{"version unknown", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := CLIVersionNote(tt.version)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("CLIVersionNote(%q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}
