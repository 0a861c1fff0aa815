package tune

import (
	"slices"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/history"
)

// work is one stream laid out for replay: its positions, one per turn of
// the phase's work in order, whatever session the recording ran each in.
type work struct {
	stream *history.Stream
	pos    []position
	// restarts are the positions at which the recording's restarts took
	// effect: where the session after each began.
	restarts []int
	side     budget.Tokens // subagents' spend: the same under any setting
	recorded float64       // what the recording cost (the run's own figures)
}

// position is one turn of work.
type position struct {
	// turn is the turn whose calls run here in a session that reaches
	// this place; redo, when the recording restarted here, the first turn
	// of the session after the restart, which a session starting here
	// replays instead (the calls it redid, or whatever it did first).
	turn, redo *history.Turn
	// delta is the context the turn adds to the one before it in a
	// session (the previous turn's results and output); known false when
	// the recording cannot say (after a compaction, or the first turn of
	// a session that redid nothing), and the stream's median stands in.
	delta int64
	known bool
	// start > 0: the recording began a session here that was not a
	// restart (the stream's first, a retry, a new attempt) at this
	// context; brk says which, and a replay begins a session here too.
	start int64
	brk   history.Ending
	// rec is the recorded context at this position, and recUsage its
	// usage, as the session that first reached it saw them.
	rec      int64
	recUsage budget.Tokens
	// base > 0: the recording restarted here, its next session starting
	// at this context (system prompt and checkpoint), with baseUsage.
	base      int64
	baseUsage budget.Tokens
}

// layout joins a stream's sessions into positions. A session that was
// stopped for its handoff refused the calls of its last working turn:
// the next session's first turn redoes them, in that turn's place.
// The turns spent writing the handoff are no work: the replay makes its
// own where its policy asks for a handoff.
func layout(st *history.Stream) *work {
	w := &work{stream: st}
	var prev int64 // the context of the last turn in this session
	for si := range st.Sessions {
		s := &st.Sessions[si]
		w.side = w.side.Add(s.Side)
		w.recorded += s.CostUSD
		first := true
		for ti := range s.Turns {
			t := &s.Turns[ti]
			if t.Handoff {
				continue
			}
			ctx := t.Context()
			p := position{turn: t, rec: ctx, recUsage: t.Usage}
			switch {
			case first && si == 0:
				p.start = ctx
			case first && st.Sessions[si-1].End == history.EndRestart:
				if n := len(w.pos); n > 0 && w.pos[n-1].turn.Refused {
					// The redo of the refused turn: the same place in the work.
					q := &w.pos[n-1]
					q.redo, q.base, q.baseUsage = t, ctx, t.Usage
					w.restarts = append(w.restarts, n-1)
					first, prev = false, ctx
					continue
				}
				p.base, p.baseUsage, p.redo = ctx, t.Usage, t
				w.restarts = append(w.restarts, len(w.pos))
			case first:
				p.start, p.brk = ctx, st.Sessions[si-1].End
				if p.brk == history.EndLast {
					p.brk = history.EndRetry // a session followed one the run did not say how it left
				}
			case t.Compacted:
			default:
				p.delta, p.known = ctx-prev, true
			}
			first, prev = false, ctx
			w.pos = append(w.pos, p)
		}
	}
	return w
}

// median of vs, 0 for none.
func median(vs []int64) int64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[len(s)/2]
}
