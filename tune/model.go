package tune

import (
	"github.com/debussy-dev/debussy/budget"
)

// model is what a replay assumes beyond the recorded turns, each figure
// measured from the history where it holds any, else a stated default.
type model struct {
	// Base is the context a restarted session starts at (system prompt,
	// tools and the checkpoint prompt) and BaseRead the share of it read
	// from the cache (the rest is written).
	Base     int64   `json:"restart_prompt_tokens"`
	BaseRead float64 `json:"restart_prompt_cached"`
	BaseFrom string  `json:"restart_prompt_from"`
	// Handoff is what the handoff turn adds to the context (the request,
	// the refused calls' errors) and HandoffOutput what writing it costs.
	Handoff       int64  `json:"handoff_turn_tokens"`
	HandoffOutput int64  `json:"handoff_output_tokens"`
	HandoffFrom   string `json:"handoff_from"`
	// Delta stands in for a turn whose growth the recording cannot tell
	// (after a compaction, or the first turn after a restart that redid
	// nothing): the median of the known ones.
	Delta int64 `json:"unknown_turn_tokens"`
}

// Defaults where the history measured nothing: a checkpoint prompt is a
// few thousand tokens on top of a fresh session's first context, a
// handoff request with its template about two thousand.
const (
	defaultCheckpoint    = 3000
	defaultBase          = 30000
	defaultHandoff       = 2000
	defaultHandoffOutput = 600
	defaultDelta         = 632 // the median a call adds in 15 public sessions (../shared/session-shapes)
)

// measure reads the model's figures from the works.
func measure(works []*work) model {
	var bases, firsts, deltas, handoffs, outputs []int64
	var read, written int64
	for _, w := range works {
		for _, p := range w.pos {
			if p.known {
				deltas = append(deltas, p.delta)
			}
			if p.start > 0 {
				firsts = append(firsts, p.start)
			}
			if p.base > 0 {
				bases = append(bases, p.base)
				read += p.baseUsage.CacheRead
				written += p.baseUsage.CacheWrite + p.baseUsage.Input
			}
		}
		for _, s := range w.stream.Sessions {
			for i, t := range s.Turns {
				// The first turn spent on the handoff, against the turn
				// it followed.
				if t.Handoff && i > 0 && !s.Turns[i-1].Handoff {
					handoffs = append(handoffs, t.Context()-s.Turns[i-1].Context())
					outputs = append(outputs, t.Usage.Output)
				}
			}
		}
	}
	m := model{Base: median(bases), BaseFrom: "measured", Handoff: median(handoffs), HandoffOutput: median(outputs),
		HandoffFrom: "measured", Delta: median(deltas)}
	switch {
	case len(bases) > 0:
		m.BaseRead = float64(read) / float64(max(read+written, 1))
	case len(firsts) > 0:
		m.Base, m.BaseFrom = median(firsts)+defaultCheckpoint, "default"
	default:
		m.Base, m.BaseFrom = defaultBase, "default"
	}
	if len(handoffs) == 0 {
		m.Handoff, m.HandoffOutput, m.HandoffFrom = defaultHandoff, defaultHandoffOutput, "default"
	}
	m.Handoff = max(m.Handoff, 0)
	if len(deltas) == 0 {
		m.Delta = defaultDelta
	}
	return m
}

// delta is what position p adds to the context.
func (m *model) delta(p *position) int64 {
	if p.known {
		return p.delta
	}
	return m.Delta
}

// restartUsage is the first response of a session restarted at p: the
// recording's own where it restarted here, else the measured restart
// prompt, read from the cache in the measured share.
func (m *model) restartUsage(p *position) (int64, budget.Tokens) {
	if p.base > 0 {
		return p.base, p.baseUsage
	}
	read := int64(float64(m.Base) * m.BaseRead)
	u := budget.Tokens{Input: min(p.recUsage.Input, m.Base-read), CacheRead: read, Output: p.recUsage.Output}
	u.CacheWrite = m.Base - read - u.Input
	return m.Base, u
}

// handoffUsage is the handoff turn after a response at ctx with usage u:
// everything before it read from the cache, what it adds written.
func (m *model) handoffUsage(ctx int64, u budget.Tokens) budget.Tokens {
	return budget.Tokens{Input: u.Input, CacheRead: ctx - u.Input, CacheWrite: m.Handoff, Output: m.HandoffOutput}
}

// shifted is p's recorded usage at the context ctx: the recording's own
// when the context is the same, else its input and cache write kept and
// the rest read from the cache (the conversation before it is cached).
func shifted(p *position, ctx int64) budget.Tokens {
	u := p.recUsage
	if ctx == p.rec {
		return u
	}
	u.CacheRead = ctx - u.Input - u.CacheWrite
	if u.CacheRead < 0 {
		u.CacheWrite, u.CacheRead = max(ctx-u.Input, 0), 0
		u.Input = min(u.Input, ctx)
	}
	return u
}
