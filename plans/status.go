package plans

import (
	"strings"
	"unicode"
)

// parseStatus maps a status cell ("✅ Done", "In Progress", "Not Started")
// to a Status. known is false when the words meant nothing to us; the
// status is then pending and the caller warns.
func parseStatus(cell string) (s Status, known bool) {
	words := statusWords(cell)
	if len(words) == 0 {
		if strings.TrimSpace(cell) == "" {
			return StatusPending, true // an empty cell is simply not started
		}
		return statusFromSymbols(cell)
	}
	text := " " + strings.Join(words, " ") + " "
	has := func(phrases ...string) bool {
		for _, p := range phrases {
			if strings.Contains(text, " "+p+" ") {
				return true
			}
		}
		return false
	}
	// Negations first: "not started" and "incomplete" must not read as done.
	switch {
	case has("not started", "not complete", "not completed", "not done", "incomplete", "todo", "to do"):
		return StatusPending, true
	case has("failed", "failing", "fail", "error", "errored"):
		return StatusFailed, true
	case has("blocked"):
		return StatusBlocked, true
	case has("in progress", "inprogress", "running", "wip", "started", "active", "ongoing"):
		return StatusRunning, true
	case has("done", "complete", "completed", "finished"):
		return StatusCompleted, true
	case has("pending", "planned", "draft", "ready", "queued", "waiting", "new", "open", "not yet", "tbd"):
		return StatusPending, true
	}
	return StatusPending, false
}

// statusWords lower-cases the cell and keeps only letters and digits, so
// emoji, punctuation and markdown ("**Done**", "In-Progress") do not matter.
func statusWords(cell string) []string {
	return strings.FieldsFunc(strings.ToLower(cell), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// statusFromSymbols reads a cell that is only an emoji.
func statusFromSymbols(cell string) (Status, bool) {
	symbols := []struct {
		s      string
		status Status
	}{
		{"✅", StatusCompleted}, {"✔", StatusCompleted}, {"☑", StatusCompleted},
		{"🔄", StatusRunning}, {"🚧", StatusRunning}, {"▶", StatusRunning}, {"🏃", StatusRunning},
		{"❌", StatusFailed}, {"✗", StatusFailed}, {"💥", StatusFailed},
		{"⛔", StatusBlocked}, {"🚫", StatusBlocked}, {"🛑", StatusBlocked},
		{"⏳", StatusPending}, {"⬜", StatusPending}, {"🔲", StatusPending}, {"☐", StatusPending},
	}
	for _, sym := range symbols {
		if strings.Contains(cell, sym.s) {
			return sym.status, true
		}
	}
	return StatusPending, false
}
