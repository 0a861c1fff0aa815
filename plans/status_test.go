package plans

import "testing"

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name  string
		cell  string
		want  Status
		known bool
	}{
		{"pending", "Pending", StatusPending, true},
		{"empty", "", StatusPending, true},
		{"not started", "Not Started", StatusPending, true},
		{"hourglass pending", "⏳ Pending", StatusPending, true},
		{"todo", "TODO", StatusPending, true},
		{"in progress", "In Progress", StatusRunning, true},
		{"in-progress bold", "**In-Progress**", StatusRunning, true},
		{"running", "running", StatusRunning, true},
		{"construction emoji only", "🚧", StatusRunning, true},
		{"done", "Done", StatusCompleted, true},
		{"check done", "✅ Done", StatusCompleted, true},
		{"done check after", "Completed ✅", StatusCompleted, true},
		{"complete upper", "COMPLETE", StatusCompleted, true},
		{"check only", "✅", StatusCompleted, true},
		{"not complete", "Not complete", StatusPending, true},
		{"incomplete", "Incomplete", StatusPending, true},
		{"blocked", "Blocked", StatusBlocked, true},
		{"blocked emoji", "⛔ Blocked on infra", StatusBlocked, true},
		{"failed", "Failed", StatusFailed, true},
		{"cross only", "❌", StatusFailed, true},
		{"unknown words", "Shipping soon", StatusPending, false},
		{"unknown emoji", "🤔", StatusPending, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, known := parseStatus(tt.cell)
			if got != tt.want || known != tt.known {
				t.Errorf("parseStatus(%q) = %q, %v; want %q, %v", tt.cell, got, known, tt.want, tt.known)
			}
		})
	}
}
