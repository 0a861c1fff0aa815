package session

import (
	"testing"

	"github.com/debussy-dev/debussy/event"
)

func TestBreakdownSummary(t *testing.T) {
	cats := []event.ContextCategory{{Name: "System prompt", Tokens: 1965}, {Name: "Skills", Tokens: 0},
		{ID: "autocompact_buffer", Name: "Autocompact buffer", Kind: "buffer", Tokens: 33000},
		{Name: "System tools", Tokens: 5473}, {ID: "free_space", Name: "Free space", Kind: "free", Tokens: 957475}}
	if got := breakdownSummary(&event.ContextUsage{Categories: cats}); got != "System tools 5.5K, System prompt 2K" {
		t.Errorf("summary %q", got)
	}
}
