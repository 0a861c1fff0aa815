package plans

import "strings"

// ShortTitle is the phase's title without the "Phase 2:" prefix phase
// files usually repeat in their heading, so messages read
// `phase 2 "Endpoints"`.
func (ph *Phase) ShortTitle() string {
	t := strings.TrimSpace(ph.Title)
	lower := strings.ToLower(t)
	for _, prefix := range []string{"phase " + strings.ToLower(ph.ID), "phase"} {
		if !strings.HasPrefix(lower, prefix) {
			continue
		}
		rest := strings.TrimLeft(t[len(prefix):], " ")
		for _, sep := range []string{":", "—", "–", "-"} {
			if strings.HasPrefix(rest, sep) {
				if s := strings.TrimSpace(rest[len(sep):]); s != "" {
					return s
				}
			}
		}
	}
	return t
}
