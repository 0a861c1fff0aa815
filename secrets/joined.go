package secrets

import "strings"

// Joined redacts parts written one after another (a message's text blocks,
// which the CLI streams as separate events) as the text they make joined
// by sep, and also as one run without sep: a token split across two parts
// (ghp_Ab… in one block, …Cd in the next) is judged whole and both its
// pieces go. Only a span that crosses a join is taken from the run without
// sep; within a part, the text joined by sep decides.
func (r *Redactor) Joined(parts []string, sep string) string {
	display := strings.Join(parts, sep)
	if len(parts) < 2 {
		return r.String(display)
	}
	spans := r.spansIn(display, 0)
	glued := strings.Join(parts, "")
	var joins []int // where each part after the first starts in glued
	at := 0
	for _, p := range parts[:len(parts)-1] {
		at += len(p)
		joins = append(joins, at)
	}
	for _, sp := range r.spansIn(glued, 0) {
		crosses := false
		for _, j := range joins {
			if sp.start < j && j < sp.end {
				crosses = true
				break
			}
		}
		if !crosses {
			continue
		}
		shift := func(p int, end bool) int {
			n := 0
			for _, j := range joins {
				if j < p || !end && j == p {
					n++
				}
			}
			return p + n*len(sep)
		}
		// Each piece in its own part: the separator stays.
		from := sp.start
		for _, j := range joins {
			if from < j && j < sp.end {
				spans = append(spans, span{shift(from, false), shift(j, true)})
				from = j
			}
		}
		spans = append(spans, span{shift(from, false), shift(sp.end, true)})
	}
	if len(spans) == 0 {
		return display
	}
	return replace(display, spans)
}

// Joined is Default().Joined(parts, sep).
func Joined(parts []string, sep string) string { return Default().Joined(parts, sep) }
