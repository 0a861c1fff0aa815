package record

import (
	"bytes"
	"encoding/json"
	"time"
)

// MarkFields are what a step of the runner's stop timeline (runner.Mark)
// records beside its name; a key is recorded when its field is set (not
// nil), zero or not.
type MarkFields struct {
	By             *string        `json:"by,omitempty"` // who asked: "hook", "cancel_grace", "kill"...
	Bytes          *int           `json:"bytes,omitempty"`
	Err            *string        `json:"err,omitempty"` // signalling the group failed
	Error          *string        `json:"error,omitempty"`
	ExitCode       *int           `json:"exit_code,omitempty"`
	Hook           *string        `json:"hook,omitempty"`
	HookStopSent   *bool          `json:"hook_stop_sent,omitempty"`
	InFlight       *InFlight      `json:"in_flight,omitempty"`
	IsError        *bool          `json:"is_error,omitempty"`
	Kind           *string        `json:"kind,omitempty"`
	LastLine       *time.Time     `json:"last_line,omitempty"`
	PGID           *int           `json:"pgid,omitempty"`
	Reason         *string        `json:"reason,omitempty"`
	RequestID      *string        `json:"request_id,omitempty"`
	Status         *string        `json:"status,omitempty"`
	Subtype        *string        `json:"subtype,omitempty"`
	TerminalReason *string        `json:"terminal_reason,omitempty"`
	TimedOut       *bool          `json:"timed_out,omitempty"`
	Tool           *string        `json:"tool,omitempty"`
	Waited         *time.Duration `json:"waited,omitempty"`
}

// InFlight is the tools in flight at a step: their number, or (a drain
// that timed out) their tool_use ids.
type InFlight struct {
	N   int
	IDs []string
}

// MarshalJSON writes the ids when there are some, else the number.
func (f InFlight) MarshalJSON() ([]byte, error) {
	if f.IDs != nil {
		return json.Marshal(f.IDs)
	}
	return json.Marshal(f.N)
}

// UnmarshalJSON reads either.
func (f *InFlight) UnmarshalJSON(data []byte) error {
	*f = InFlight{}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		if err := json.Unmarshal(data, &f.IDs); err != nil {
			return err
		}
		f.N = len(f.IDs)
		return nil
	}
	return json.Unmarshal(data, &f.N)
}

// String is f as events.jsonl has it, for a log line.
func (f MarkFields) String() string {
	b, _ := json.Marshal(f)
	return string(b)
}
