package event

import (
	"cmp"
	"slices"
	"strings"
)

// ContextUsage is what the CLI says about its context window (measured on
// 2.1.197 and 2.1.330, see runner/testdata/contextusage/README.md). Error is
// set, and the figures are zero, when the CLI refused the request or its
// answer has no window. A request never answered gives no event (the
// runner logs it): consumers use their fallback until an answer comes.
type ContextUsage struct {
	RequestID         string
	Model             string // the model the answer is about, as the CLI names it
	TotalTokens       int64  // in use now
	MaxTokens         int64  // the window
	RawMaxTokens      int64
	Percentage        float64
	AutocompactSource string // "auto" (window detected: no proactive compaction), "model-default", ...
	// AutoCompactThreshold is the CLI's computed threshold; it is reported
	// even when the CLI will not compact proactively (AutocompactSource
	// "auto"), so CompactionPoint reads the buffer category instead.
	AutoCompactThreshold int64
	AutoCompactEnabled   *bool // nil when the CLI did not say
	Categories           []ContextCategory
	Error                string
}

// ContextCategory is one line of the CLI's context breakdown: system
// prompt, system tools, MCP tools, skills, messages, autocompact buffer,
// free space. 2.1.197 gives only Name and Tokens; 2.1.330 adds ID and Kind
// ("used", "deferred", "buffer", "free").
type ContextCategory struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name"`
	Kind   string `json:"kind,omitempty"`
	Tokens int64  `json:"tokens"`
}

// OK reports whether the CLI answered with a window.
func (c *ContextUsage) OK() bool { return c != nil && c.Error == "" && c.MaxTokens > 0 }

// AutocompactBuffer is the tokens the CLI keeps free for its own
// compaction, or 0 when the answer has no such category (the CLI will not
// compact on its own before the window is full).
func (c *ContextUsage) AutocompactBuffer() int64 {
	if c == nil {
		return 0
	}
	for _, cat := range c.Categories {
		if cat.ID == "autocompact_buffer" || cat.Kind == "buffer" || strings.EqualFold(cat.Name, "Autocompact buffer") {
			return cat.Tokens
		}
	}
	return 0
}

// CompactionPoint is the context size at which the CLI compacts the
// conversation itself: the window minus the autocompact buffer. 0 when the
// CLI will not compact proactively (no buffer category, or auto-compaction
// disabled) or did not answer.
func (c *ContextUsage) CompactionPoint() int64 {
	if !c.OK() || (c.AutoCompactEnabled != nil && !*c.AutoCompactEnabled) {
		return 0
	}
	if b := c.AutocompactBuffer(); b > 0 && b < c.MaxTokens {
		return c.MaxTokens - b
	}
	return 0
}

// Used is what occupies the context, largest first: the categories but free
// space and the autocompact buffer, without empty ones.
func (c *ContextUsage) Used() []ContextCategory {
	if c == nil {
		return nil
	}
	var used []ContextCategory
	for _, cat := range c.Categories {
		free := cat.Kind == "free" || cat.Kind == "buffer" || cat.ID == "free_space" || cat.ID == "autocompact_buffer" ||
			strings.EqualFold(cat.Name, "Free space") || strings.EqualFold(cat.Name, "Autocompact buffer")
		if !free && cat.Tokens > 0 {
			used = append(used, cat)
		}
	}
	slices.SortStableFunc(used, func(a, b ContextCategory) int { return cmp.Compare(b.Tokens, a.Tokens) })
	return used
}

// KnownContext is an answer to get_context_usage a run reuses for later
// sessions of the same CLI version and model: the request is not free
// (measured against the fake API: 2.1.197 makes 14-19 count_tokens calls
// to the API in three rounds and reads the first prompt only after them;
// 2.1.332 makes ~25 in two rounds beside the first turn and answers after
// the first response once a call takes 200 ms or more), and the answer
// does not change.
type KnownContext struct {
	Version string // claude_code_version of the session that asked
	Model   string // that session's system/init model
	Usage   ContextUsage
}

// Matches reports whether a session whose init says version and model
// runs what the answer is about.
func (k *KnownContext) Matches(version, model string) bool {
	return k != nil && k.Version == version && strings.EqualFold(strings.TrimSpace(k.Model), strings.TrimSpace(model))
}
