package plans

import "testing"

func TestShortTitle(t *testing.T) {
	tests := []struct {
		name, id, title, want string
	}{
		{name: "colon", id: "2", title: "Phase 2: Endpoints", want: "Endpoints"},
		{name: "em dash, dotted id", id: "2.5", title: "Phase 2.5 — Docs", want: "Docs"},
		{name: "en dash", id: "4", title: "Phase 4 – Release", want: "Release"},
		{name: "no prefix", id: "2", title: "Endpoints", want: "Endpoints"},
		{name: "letter id, hyphen", id: "3a", title: "Phase 3a - Parser", want: "Parser"},
		{name: "lower case, spaces", id: "3a", title: "  phase 3A:   Parser  ", want: "Parser"},
		{name: "word starting with phase", id: "1", title: "Phasers", want: "Phasers"},
		{name: "prefix alone", id: "2", title: "Phase 2:", want: "Phase 2:"},
		{name: "other phase's number", id: "2", title: "Phase 3: Later", want: "Phase 3: Later"},
		{name: "id is a prefix of the number", id: "1", title: "Phase 10: Ten", want: "Phase 10: Ten"},
		{name: "bare phase and separator", id: "7", title: "Phase: Cleanup", want: "Cleanup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&Phase{ID: tt.id, Title: tt.title}).ShortTitle(); got != tt.want {
				t.Errorf("ShortTitle(%q, id %q) = %q, want %q", tt.title, tt.id, got, tt.want)
			}
		})
	}
}
