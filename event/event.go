// Package event holds the stream's typed events: what one stdout line of
// `claude --output-format stream-json` says (runner parses it), the hook
// calls and their answers, and the CLI's context usage. It is a leaf: the
// pure packages (policy, estimator, budget, checkpoint) read events without
// importing the runner and its process handling.
package event

import (
	"encoding/json"
	"time"

	"github.com/debussy-dev/debussy/failure"
)

// Kind says which of the CLI's stream-json lines an Event came from.
type Kind string

const (
	KindUnknown         Kind = "unknown"
	KindInit            Kind = "init"             // system/init
	KindAssistant       Kind = "assistant"        // one content block of an API response
	KindToolResult      Kind = "tool_result"      // a "user" line carrying tool_result blocks
	KindUser            Kind = "user"             // a "user" line without tool results (replayed prompt)
	KindSystem          Kind = "system"           // status, compact_boundary, api_retry, task_*, ...
	KindControlResponse Kind = "control_response" // answer to a control_request we sent
	KindResult          Kind = "result"           // the end of a turn
	KindHook            Kind = "hook"             // the CLI asks what to do at a hook (control_request hook_callback)
	KindRateLimit       Kind = "rate_limit"       // rate_limit_event: a subscription's usage limit, allowed or rejected
	// KindContextUsage is the CLI's answer to the get_context_usage control
	// request the runner sends at the start of every session (before the
	// first user message) and again when the model changes.
	// Event.ContextUsage is set.
	KindContextUsage Kind = "context_usage"
	// KindControlCancel is the CLI withdrawing a control request it sent
	// earlier (2.1.306+: control_cancel_request), such as a hook callback
	// whose wait ended; ControlRequestID names it.
	KindControlCancel Kind = "control_cancel"
	// KindSubagentResult is a result line that is not the session's own (a
	// subagent's: parent_tool_use_id set, or another session id): never
	// the end of the session's turn. Event.Result is set.
	KindSubagentResult Kind = "subagent_result"
)

// Event is one parsed stdout line. Exactly one of the pointer fields matching
// Kind is set; Unknown lines keep only Type/Subtype.
type Event struct {
	Kind    Kind
	Type    string // raw "type"
	Subtype string // raw "subtype", if any
	At      time.Time
	Size    int // bytes of the raw line

	Init        *Init
	Assistant   *Assistant
	ToolResults []ToolResult
	User        *UserMessage // KindUser
	System      *System
	Control     *ControlResponse
	Result      *Result
	Hook        *HookCall // KindHook: answer it with Hook.Answer
	// ContextUsage is set for KindContextUsage (see contextusage.go).
	ContextUsage *ContextUsage
	// RateLimit is set for KindRateLimit.
	RateLimit *failure.RateLimit

	// ControlRequestID is the request_id of any control_request line: the
	// runner answers every one, or the CLI waits for ever.
	ControlRequestID string
}

// Usage is the token usage of one API response (assistant lines) or the
// SUM over a run (result lines — never use that as the context size).
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Context is the size of the prompt that produced the response: what
// occupies the context window.
func (u Usage) Context() int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
}

type Init struct {
	SessionID      string
	Model          string
	Version        string
	Cwd            string
	PermissionMode string
	Tools          []string
}

// Assistant is one assistant line. One API response is split over several
// lines sharing MessageID and Usage: count a MessageID once.
type Assistant struct {
	MessageID       string
	ParentToolUseID string // empty on the main thread; a Task tool_use id for subagents
	Model           string
	Usage           Usage
	Text            string // concatenated text blocks of this line
	ToolUses        []ToolUse
	Error           string // top-level "error" of synthetic replies, e.g. "invalid_request"
}

// MainThread reports whether the line belongs to the main session rather
// than a subagent.
func (a *Assistant) MainThread() bool { return a.ParentToolUseID == "" }

type ToolUse struct {
	ID   string
	Name string
	// Input is a copy of the tool input as sent, or nil when it is larger
	// than MaxInputBytes (a Write of a big file); InputSize is its size.
	Input     json.RawMessage
	InputSize int
	// Convenience fields pulled from Input when present.
	Command     string // Bash
	FilePath    string // Write/Edit/Read
	Description string // the call's own few words (Bash, Task), when given
}

type ToolResult struct {
	ToolUseID       string
	ParentToolUseID string // non-empty for a subagent's tool
	IsError         bool
	Content         string // flattened text content, truncated to a bounded size
	ContentLen      int    // length before truncation
	FilePath        string // from tool_use_result.filePath (Write/Edit)
	Interrupted     bool   // tool_use_result.interrupted (Bash)
}

// Size is the result's length before truncation (ContentLen, which a
// result built by hand may leave 0: then its Content's).
func (tr ToolResult) Size() int {
	if tr.ContentLen == 0 {
		return len(tr.Content)
	}
	return tr.ContentLen
}

type System struct {
	Subtype string
	// status
	Status        string // "compacting", ...
	CompactResult string
	CompactError  string
	// compact_boundary
	PreTokens int64
	// api_retry
	Attempt      int
	MaxRetries   int
	RetryDelayMs float64
	ErrorStatus  int
	Error        string
	// task_*
	TaskID      string
	ToolUseID   string // the tool_use a task belongs to
	Description string
	// informational (2.1.330+): Tag names it (settings_not_in_effect),
	// Content says it, Level is warning, info...
	Tag, Content, Level string
}

// SettingsNotInEffect is the informational tag of claude's word that
// settings it was given or read did not load (2.1.330+).
const SettingsNotInEffect = "settings_not_in_effect"

// UserMessage is a "user" line without tool results: the CLI's echo of a
// prompt or a note such as "[Request interrupted by user for tool use]".
type UserMessage struct {
	ParentToolUseID string
	Text            string // bounded like ToolResult.Content
}

type ControlResponse struct {
	RequestID string
	Subtype   string // "success" or "error"
	Error     string
}

type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`
}

type Result struct {
	Subtype        string // success, error_during_execution, error_max_turns, ...
	IsError        bool
	TerminalReason string // e.g. aborted_tools
	APIErrorStatus int
	NumTurns       int
	DurationMs     int64
	CostUSD        float64
	SessionID      string
	// ParentToolUseID is set on a subagent's result (KindSubagentResult).
	ParentToolUseID string
	Text            string // "result" text, bounded
	Usage           Usage  // SUM over the run
	ModelUsage      map[string]ModelUsage
}
