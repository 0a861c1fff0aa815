package session

import (
	"time"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/policy"
)

// earlyWait bounds how long a tool's hook call waits for the assistant
// line that asked for the tool. The line is on its way when the call is
// early; a CLI that never sends it costs this once (early.off).
var earlyWait = 2 * time.Second

// early holds tool hook calls that reached debussy before the assistant
// line asking for their tool. claude writes that line and runs the tool
// on separate paths, so a tool's PreToolUse and PostToolUse could come
// first. The line carries the response's usage, which the answers depend
// on: such a call is answered once the line is seen. A defence, not a
// fix of something seen: no recorded stream has the order, and the CI
// failure it was written for had another cause (the CLI going on after a
// continue:false, see runner's stopIgnored).
type early struct {
	seen   map[string]bool // tool_use ids of the assistant lines seen, until their PostToolUse
	parked []*event.HookCall
	timer  *time.Timer
	off    bool // a call waited earlyWait in vain: answer every call at once from here
}

// sawLine notes the tools an assistant line asks for.
func (e *early) sawLine(ev event.Event) {
	if ev.Kind != event.KindAssistant || ev.Assistant == nil {
		return
	}
	for _, tu := range ev.Assistant.ToolUses {
		if tu.ID == "" {
			continue
		}
		if e.seen == nil {
			e.seen = map[string]bool{}
		}
		e.seen[tu.ID] = true
	}
}

// waits reports whether h must wait for its tool's assistant line.
func (e *early) waits(h *event.HookCall) bool {
	if e.off || h.ToolUseID == "" || e.seen[h.ToolUseID] {
		return false
	}
	return h.Event == event.HookPreToolUse || h.Event == event.HookPostToolUse
}

// C fires when the oldest parked call has waited earlyWait; nil when none
// waits.
func (e *early) C() <-chan time.Time {
	if len(e.parked) == 0 {
		return nil
	}
	if e.timer == nil {
		e.timer = time.NewTimer(earlyWait)
	}
	return e.timer.C
}

// take returns the parked calls whose lines were seen (all of them when
// all), in the order they came.
func (e *early) take(all bool) []*event.HookCall {
	if len(e.parked) == 0 {
		return nil
	}
	var out, keep []*event.HookCall
	for _, h := range e.parked {
		if all || e.seen[h.ToolUseID] {
			out = append(out, h)
		} else {
			keep = append(keep, h)
		}
	}
	e.parked = keep
	if len(keep) == 0 && e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	return out
}

// hook answers a hook call now, or parks it until its tool's line.
func (s *Session) hook(h *event.HookCall) {
	if s.early.waits(h) {
		s.early.parked = append(s.early.parked, h)
		return
	}
	s.answerTool(h)
}

// answerParked answers the parked calls whose lines were seen (every one
// when the wait is over or the stream ended).
func (s *Session) answerParked(all bool) {
	for _, h := range s.early.take(all) {
		s.answerTool(h)
	}
}

// answerTool answers h; a tool's PostToolUse is its last call, so its id
// is forgotten.
func (s *Session) answerTool(h *event.HookCall) {
	s.answer(h)
	if h.Event == event.HookPostToolUse {
		delete(s.early.seen, h.ToolUseID)
	}
}

// earlyExpired answers the parked calls without their line and stops
// waiting for lines in this session.
func (s *Session) earlyExpired() {
	s.early.timer = nil
	if !s.early.off {
		s.early.off = true
		s.log(policy.LevelDebug, "claude sent a tool's hook call without the tool's assistant line: answering hook calls at once", "waited", earlyWait)
	}
	s.answerParked(true)
}
