package record

// Fields is what a policy effect records in events.jsonl and shows in the
// log (policy.Fields); nothing acts on it. Its json tags are the events'
// keys.
//
// A key is recorded when its field is set, as a map's key was: a pointer
// is set when not nil, zero or not (a count, a flag, text from the CLI or
// the configuration: "stop_pending":false and "tool":"" are recorded); a
// plain string when not empty (only debussy's own words, never empty when
// set). testdata/effects.golden holds every event's keys.
type Fields struct {
	Tool      *string `json:"tool,omitempty"`
	ToolUseID *string `json:"tool_use_id,omitempty"`
	Why       string  `json:"why,omitempty"` // what refused or blocked: "handoff", "budget", "done_signal"
	By        string  `json:"by,omitempty"`  // who wrote the handoff, or which limit warned
	Path      *string `json:"path,omitempty"`
	Bytes     *int64  `json:"bytes,omitempty"`
	Reason    *string `json:"reason,omitempty"`
	Trigger   *string `json:"trigger,omitempty"`

	Chars *int    `json:"chars,omitempty"` // a note's
	Text  *string `json:"text,omitempty"`

	StopPending *bool `json:"stop_pending,omitempty"`

	Threshold *int     `json:"threshold,omitempty"`
	Tokens    *int64   `json:"tokens,omitempty"`
	Window    *int64   `json:"window,omitempty"`
	At        *int64   `json:"at,omitempty"`
	Percent   *float64 `json:"percent,omitempty"`

	Zone        string `json:"zone,omitempty"`
	ToolCalls   *int   `json:"tool_calls,omitempty"`
	LargeReads  *int   `json:"large_reads,omitempty"`
	Delegations *int   `json:"delegations,omitempty"`

	Kind    string  `json:"kind,omitempty"` // a nudge's
	Args    *string `json:"args,omitempty"`
	Count   *int    `json:"count,omitempty"`
	Restart *bool   `json:"restart,omitempty"`
}

// LogAttrs is the key/values the log shows of f, for slog, always in this
// order; the other keys are only recorded.
func (f Fields) LogAttrs() []any {
	var kv []any
	str := func(k, v string) {
		if v != "" {
			kv = append(kv, k, v)
		}
	}
	str("zone", f.Zone)
	str("kind", f.Kind)
	kv = attr(kv, "tool", f.Tool)
	kv = attr(kv, "args", f.Args)
	kv = attr(kv, "count", f.Count)
	kv = attr(kv, "tool_calls", f.ToolCalls)
	kv = attr(kv, "large_reads", f.LargeReads)
	kv = attr(kv, "delegations", f.Delegations)
	kv = attr(kv, "percent", f.Percent)
	kv = attr(kv, "reason", f.Reason)
	kv = attr(kv, "path", f.Path)
	return attr(kv, "trigger", f.Trigger)
}

func attr[T any](kv []any, k string, v *T) []any {
	if v == nil {
		return kv
	}
	return append(kv, k, *v)
}

// PolicyEvent names what the policy records (a Policy line): readers
// switch on these, so a misspelt name does not compile.
type PolicyEvent string

const (
	AgentHandoff      PolicyEvent = "agent_handoff"
	CompactionBlocked PolicyEvent = "compaction_blocked"
	ContextWarning    PolicyEvent = "context_warning"
	DoneSignal        PolicyEvent = "done_signal"
	EmergencyStop     PolicyEvent = "emergency_stop"
	HandoffRequested  PolicyEvent = "handoff_requested"
	HandoffWritten    PolicyEvent = "handoff_written"
	HookStop          PolicyEvent = "hook_stop"
	Note              PolicyEvent = "note"
	Nudge             PolicyEvent = "nudge"
	StopBlocked       PolicyEvent = "stop_blocked"
	StopDecided       PolicyEvent = "stop_decided"
	ToolDenied        PolicyEvent = "tool_denied"
	Trigger           PolicyEvent = "trigger"
	Zone              PolicyEvent = "zone"
)
