package policy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/record"
)

// Call is one tool call at a hook, with the facts the policy needs that
// live outside memory (gathered by the caller without any lock).
type Call struct {
	Tool      string
	ToolUseID string
	Input     json.RawMessage // nil when too large to keep
	FilePath  string
	Command   string
	Response  string // PostToolUse: the tool's result text
	// HandoffBytes is the handoff file's size after the tool (PostToolUse,
	// asked for by WantsHandoffSize); 0 when missing or empty.
	HandoffBytes int64
	// Signalled: the agent's `debussy done` signal for this session is on
	// disk (PostToolUse, whatever the tool).
	Signalled bool
	// HandedOff: the agent's `debussy handoff` signal for this session is
	// on disk (PostToolUse, whatever the tool).
	HandedOff bool
	// PhaseFile: the call reads one of the phase's own files (its plan,
	// the files it names or has written): a firm budget lets it run.
	PhaseFile bool
}

// CallOf is the policy's view of a hook call.
func CallOf(h *event.HookCall) Call {
	c := Call{Tool: h.ToolName, ToolUseID: h.ToolUseID, Input: h.ToolInput, Response: h.ToolResponse}
	var in struct {
		FilePath string `json:"file_path"`
		Command  string `json:"command"`
	}
	_ = json.Unmarshal(h.ToolInput, &in)
	c.FilePath, c.Command = in.FilePath, in.Command
	return c
}

// Facts are what a hook's answer needs that is not in memory, read when
// the answer needs it: package session reads them on disk, a replay
// (`debussy tune`) knows them from the recording.
type Facts interface {
	Signalled() bool      // the agent's `debussy done` signal for this session is on disk
	SignalStatus() string // what that signal says: completed, blocked, failed; "" unknown
	HandedOff() bool      // its `debussy handoff` signal is
	HandoffSize() int64   // the handoff file's size; 0 when missing or empty
	PhaseFile(c *Call)    // sets c.PhaseFile when the call reads one of the phase's own files
}

// Hook answers one of the CLI's hook calls, with the facts it needs from
// f: what a session answers, and what a replay of its turns answers.
func (p *Policy) Hook(h *event.HookCall, f Facts) event.HookAnswer {
	switch h.Event {
	case event.HookPreToolUse:
		c := CallOf(h)
		f.PhaseFile(&c)
		return p.PreToolUse(c, "")
	case event.HookPostToolUse:
		c := CallOf(h)
		if p.WantsHandoffSize() {
			c.HandoffBytes = f.HandoffSize()
		}
		// After every tool, whatever it was: each signal.
		c.Signalled, c.HandedOff = f.Signalled(), f.HandedOff()
		p.SignalStatus(f.SignalStatus())
		return p.PostToolUse(c)
	case event.HookStop:
		p.Signals(false, f.HandedOff())
		return p.Stop(h.StopHookActive, f.Signalled())
	case event.HookPreCompact:
		return p.PreCompact(h.Trigger)
	}
	return event.HookAnswer{}
}

// WantsHandoffSize reports whether the handoff's size matters after the
// next tool: a handoff is due (or was told of) and not yet written.
func (p *Policy) WantsHandoffSize() bool {
	return (p.state == HandoffRequested || p.handoffTold) && p.handoff == ""
}

// IsHandoffCall reports whether c is one the handoff stage lets through.
func (p *Policy) IsHandoffCall(c Call) bool { return p.isHandoffWrite(c) }

// PreToolUse answers before a tool runs. budgetWhy is a budget's refusal
// of the call decided by the caller; "" leaves it to the policy's own, from
// the last BudgetReading. The handoff's request
// comes first: it refuses every tool the budget would and names the path.
// A call debussy lets run that is one of its own commands is allowed
// outright, so no permission mode refuses `debussy done`.
func (p *Policy) PreToolUse(c Call, budgetWhy string) event.HookAnswer {
	if budgetWhy == "" {
		budgetWhy = p.budgetRefusal(c)
	}
	a := p.preToolUse(c, budgetWhy)
	if a.Deny == "" && c.Tool == "Bash" && OwnCommand(c.Command, p.cfg.IsSelf) {
		a.Allow = "debussy's own command"
	}
	return a
}

func (p *Policy) preToolUse(c Call, budgetWhy string) event.HookAnswer {
	switch p.state {
	case Stopping, Done:
		return event.HookAnswer{} // its PostToolUse ends the session cleanly
	case HandoffRequested:
		if p.isHandoffWrite(c) {
			return event.HookAnswer{}
		}
		p.refusedCalls++
		if g := p.cfg.HandoffGraceCalls; g > 0 && p.refusedCalls > g {
			// Out of calls: let this one run so that its PostToolUse ends
			// the session cleanly.
			p.emergency(p.trigger, fmt.Sprintf("the agent did not write its handoff within %d tool calls", g))
			return event.HookAnswer{}
		}
		p.record(record.ToolDenied, Fields{Tool: ref(c.Tool), ToolUseID: ref(c.ToolUseID), Why: "handoff"}, LevelInfo,
			"tool refused: the handoff comes first")
		p.nudger.Skip(c.ToolUseID) // its is_error result is debussy's refusal
		return event.HookAnswer{Deny: p.request}
	}
	if why := p.boundaryRefusal(c); why != "" {
		p.record(record.ToolDenied, Fields{Tool: ref(c.Tool), ToolUseID: ref(c.ToolUseID), Why: "boundary", Reason: ref(why)}, LevelWarn,
			"sandbox boundary refused a tool call")
		p.nudger.Skip(c.ToolUseID)
		return event.HookAnswer{Deny: why}
	}
	if budgetWhy != "" {
		p.record(record.ToolDenied, Fields{Tool: ref(c.Tool), ToolUseID: ref(c.ToolUseID), Why: "budget"}, LevelInfo,
			"tool refused: "+budgetWhy)
		p.nudger.Skip(c.ToolUseID)
		return event.HookAnswer{Deny: budgetWhy}
	}
	return event.HookAnswer{}
}

// boundaryRefusal is the sandbox's refusal of c, "" when it lets c run or
// the run is not bounded.
func (p *Policy) boundaryRefusal(c Call) string {
	if p.cfg.Boundary == nil {
		return ""
	}
	return p.cfg.Boundary(c)
}

// PostToolUse answers after a tool ran: the loop check on its result, the
// done signal, the handoff, then either the stop or the notes due. Notes
// are not delivered with a stop: they stay for the next session.
func (p *Policy) PostToolUse(c Call) event.HookAnswer {
	if nd, ok := p.nudger.ObserveResult(c.Tool, c.ToolUseID, c.Input, c.Response); ok {
		p.nudge(nd)
	}
	p.Signals(c.Signalled, c.HandedOff)
	if p.WantsHandoffSize() && c.HandoffBytes > 0 {
		p.handoff = p.cfg.HandoffPath
		p.emit(Effect{Kind: EffHandoffWritten, Event: record.HandoffWritten, Fields: Fields{Path: ref(p.handoff), Bytes: ref(c.HandoffBytes)},
			Level: LevelInfo, Log: "handoff written"})
		// A budget's wrap-up asked for it so that the stop loses
		// nothing; only the handoff stage ends the session for it.
		if p.state == HandoffRequested {
			p.stop(p.trigger, p.reason)
		}
	}
	if p.state == Stopping || p.stopAfterDone {
		p.record(record.HookStop, Fields{Tool: ref(c.Tool), Reason: ref(p.reason)}, LevelNone, "")
		return event.HookAnswer{StopReason: p.reason}
	}
	if len(p.notes) == 0 {
		return event.HookAnswer{}
	}
	note := strings.Join(p.notes, "\n\n")
	p.notes = nil
	p.record(record.Note, Fields{Tool: ref(c.Tool), Chars: ref(len(note)), Text: ref(note)}, LevelNone, "")
	return event.HookAnswer{Note: note}
}

// Signals takes what the agent's own commands left for this session on
// disk (read after every tool, at the Stop hook and when the stream is
// over): facts, whatever command line wrote them — chained, in a script,
// `bash -c`, env-prefixed, an absolute path. The done signal beats a
// handoff.
func (p *Policy) Signals(done, handedOff bool) {
	if done && p.state != Done {
		p.done()
	}
	if handedOff {
		p.agentHandoff()
	}
}

// SignalStatus tells the status the done signal on disk carries
// (completed, blocked, failed; "" unknown), so its log says which.
func (p *Policy) SignalStatus(status string) { p.doneStatus = status }

// done is the agent's `debussy done`: it beats a stop decided on the same
// response, and no threshold restarts the session after it.
func (p *Policy) done() {
	if p.state == Stopping {
		p.stopAfterDone = true
	}
	p.state = Done
	msg := "the agent signalled `debussy done`"
	switch p.doneStatus {
	case "blocked":
		msg = "the agent signalled the phase blocked (`debussy done --status blocked`): it waits for a person's answer"
	case "failed":
		msg = "the agent signalled the phase failed (`debussy done --status failed`)"
	}
	p.record(record.DoneSignal, Fields{StopPending: ref(p.stopAfterDone)}, LevelInfo, msg)
}

// agentHandoff is the agent's `debussy handoff`: its handoff is written at
// a task boundary and the session ends at this PostToolUse, to restart
// from it. Done, or a stop already decided, holds; a handoff the threshold
// asked for is the threshold's.
func (p *Policy) agentHandoff() {
	if p.state == Done || p.state == Stopping {
		return
	}
	if p.handoff == "" {
		p.handoff = p.cfg.HandoffPath
		p.emit(Effect{Kind: EffHandoffWritten, Event: record.HandoffWritten, Fields: Fields{Path: ref(p.handoff), By: "agent"},
			Level: LevelInfo, Log: "handoff written"})
	}
	if p.state == HandoffRequested {
		p.stop(p.trigger, p.reason)
		return
	}
	p.record(record.AgentHandoff, Fields{Path: ref(p.handoff)}, LevelInfo, AgentHandoffReason+": restarting from its handoff")
	p.stop(TriggerAgentHandoff, AgentHandoffReason)
}

// Stop answers the Stop hook: the agent ended its turn. active is the
// CLI's stop_hook_active (already continuing for a Stop hook: blocking
// again would loop); c.Signalled says whether the done signal is on disk.
func (p *Policy) Stop(active, signalled bool) event.HookAnswer {
	if signalled && p.state != Done && p.state != Stopping {
		p.done() // the signal beats a handoff still due
	}
	switch {
	case p.state == Stopping || p.state == Done:
		return event.HookAnswer{}
	case active:
		if p.state == HandoffRequested && p.handoff == "" {
			p.emergency(p.trigger, "the agent ended its turn again without writing its handoff")
		}
		return event.HookAnswer{}
	case p.state == HandoffRequested && p.handoff == "":
		p.record(record.StopBlocked, Fields{Why: "handoff"}, LevelNone, "")
		return event.HookAnswer{Block: p.request}
	case !p.cfg.RequireDoneSignal || p.doneAsked || signalled:
		return event.HookAnswer{}
	}
	p.doneAsked = true
	id := p.cfg.Phase
	p.record(record.StopBlocked, Fields{Why: "done_signal"}, LevelInfo, "the agent ended its turn without `debussy done`: asking it to signal")
	return event.HookAnswer{Block: fmt.Sprintf("debussy: you ended your turn without `debussy done`. Run `debussy done --phase %s` with "+
		"completed, blocked or failed: `debussy done --phase %s` when every task and gate is met, "+
		"`debussy done --phase %s --status blocked --reason \"...\"` or `--status failed --reason \"...\"` otherwise. "+
		"If work remains, do it first.", id, id, id)}
}

// PreCompact answers the CLI's wish to compact the conversation.
func (p *Policy) PreCompact(trigger string) event.HookAnswer {
	if p.cfg.AllowCompaction {
		return event.HookAnswer{}
	}
	p.record(record.CompactionBlocked, Fields{Trigger: ref(trigger)}, LevelNone, "")
	return event.HookAnswer{Block: "debussy restarts this session from a checkpoint instead of compacting it (allow_compaction: false)"}
}
