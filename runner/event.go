package runner

import "github.com/debussy-dev/debussy/event"

// The stream's types live in the event package, a leaf that the pure
// packages (policy, estimator, budget, checkpoint) read without importing
// the runner and its process handling; these names keep the runner's API.
type (
	Kind            = event.Kind
	Event           = event.Event
	Usage           = event.Usage
	Init            = event.Init
	Assistant       = event.Assistant
	ToolUse         = event.ToolUse
	ToolResult      = event.ToolResult
	System          = event.System
	UserMessage     = event.UserMessage
	ControlResponse = event.ControlResponse
	ModelUsage      = event.ModelUsage
	Result          = event.Result
)

const (
	KindUnknown         = event.KindUnknown
	KindInit            = event.KindInit
	KindAssistant       = event.KindAssistant
	KindToolResult      = event.KindToolResult
	KindUser            = event.KindUser
	KindSystem          = event.KindSystem
	KindControlResponse = event.KindControlResponse
	KindResult          = event.KindResult
	KindHook            = event.KindHook
	KindRateLimit       = event.KindRateLimit
	KindContextUsage    = event.KindContextUsage
	KindControlCancel   = event.KindControlCancel
	KindSubagentResult  = event.KindSubagentResult
)
