package orchestrator

import (
	"errors"
	"io/fs"

	"github.com/debussy-dev/debussy/state"
)

// refused reads back, from the run's events, the tool calls debussy itself
// refused in this phase (tool_denied: the handoff stage, or "why":
// "budget"), by tool_use id. The stream shows such a refusal as a failed
// tool; the checkpoint lists it as debussy's refusal instead.
func (p *phaseRun) refused() map[string]string {
	r, phaseID := p.r, p.ph.ID
	events, err := state.ReadEvents(r.Store.EventsPath(r.id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no event yet, so no refusal
	}
	if err != nil {
		r.log.Warn("read debussy's refusals from the events log; the checkpoint may call them failures", "err", err)
		return nil
	}
	out := map[string]string{}
	for _, ev := range events {
		id, _ := ev["tool_use_id"].(string)
		if ev["event"] != "tool_denied" || ev["phase"] != phaseID || id == "" {
			continue
		}
		who := "handoff"
		if why, _ := ev["why"].(string); why != "" {
			who = why
		}
		out[id] = who
	}
	return out
}
