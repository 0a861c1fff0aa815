package event

import (
	"encoding/json"
	"sync"
)

// HookEvent names a hook of the CLI that debussy registers a callback for.
type HookEvent string

const (
	HookPreToolUse  HookEvent = "PreToolUse"
	HookPostToolUse HookEvent = "PostToolUse"
	HookStop        HookEvent = "Stop"
	HookPreCompact  HookEvent = "PreCompact"
)

// HookCall is the CLI asking debussy what to do at a hook. It arrives on
// Session.Events() as an Event with Kind KindHook and Event.Hook set, in
// order with the stream's other events, so the consumer decides with the
// stream's exact state. The CLI waits for the answer.
type HookCall struct {
	Event          HookEvent
	ToolName       string
	ToolUseID      string          // the stream's tool_use id
	ToolInput      json.RawMessage // as sent; over MaxInputBytes only file_path, path, the command's head, size and digest
	ToolResponse   string          // PostToolUse: bounded text of tool_response
	StopHookActive bool            // Stop: already continuing because of a Stop hook
	Trigger        string          // PreCompact: "auto" or "manual"

	RequestID string // the control request's id, which the answer names

	once   sync.Once
	answer func(HookAnswer) // set by the runner that delivered the call (Bind)
}

// HookAnswer is what debussy tells the CLI at a hook. The zero answer lets
// the CLI carry on.
type HookAnswer struct {
	Note string // PostToolUse: additionalContext — the agent reads it beside the tool result
	Deny string // PreToolUse: non-empty → the tool does not run; the agent gets this as the tool's error
	// Allow (PreToolUse): non-empty → the tool runs whatever the permission
	// mode says (measured on 2.1.197 and 2.1.332: acceptEdits refuses a
	// Bash call with "This command requires approval" unless a PreToolUse
	// hook allows it). The reason is the CLI's record of why.
	Allow      string
	Block      string // Stop: the session continues with this feedback; PreCompact: non-empty → the CLI does not compact
	StopReason string // PostToolUse: non-empty → the CLI ends cleanly after this response's tools (like RequestStop)
}

// Answer replies to the CLI. Only the first call counts, and none after the
// runner has answered on its own: if the consumer does not answer within
// the session's hook timeout the runner sends the default answer ({}, a block for
// PreCompact unless the session allows compaction, a stop for PostToolUse once a stop
// was requested) and logs the slow hook. It never blocks.
func (h *HookCall) Answer(a HookAnswer) {
	if h == nil {
		return
	}
	h.once.Do(func() {
		if h.answer != nil {
			h.answer(a)
		}
	})
}

// Bind is the runner's: it gives the call the way its answer reaches the
// CLI. A call nobody bound (a parsed line no session delivered) ignores
// its answer.
func (h *HookCall) Bind(answer func(HookAnswer)) { h.answer = answer }
