package runner

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/failure"
)

// Bounds on what an Event keeps from one line; the raw line is in the
// session log.
const (
	// MaxTextBytes bounds ToolResult.Content, Assistant.Text, Result.Text
	// and UserMessage.Text; the full decoded length is kept beside them.
	MaxTextBytes = 16 << 10
	// MaxInputBytes bounds the ToolUse.Input copy.
	MaxInputBytes = 64 << 10
)

var (
	// ErrInvalidJSON is wrapped by Parse errors for lines that are not one
	// complete JSON object.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrOutOfRange is wrapped by Parse errors for a number that does not
	// fit the field it is read into (1e400 as a float64, 1e19 as an int64):
	// the line is refused rather than read with a wrong value.
	ErrOutOfRange = errors.New("number out of range")
)

// Parse turns one stdout line of `claude --output-format stream-json` into
// an Event with encoding/json. Only the fields consumers use are decoded;
// big strings (Write inputs, Edit originals) are kept up to MaxTextBytes and
// big tool inputs only measured. A value of the wrong type reads as its zero
// value; unknown line types give KindUnknown and unknown fields are ignored.
// A line that is not one complete JSON object gives an error wrapping
// ErrInvalidJSON, a number that does not fit one wrapping ErrOutOfRange: the
// caller logs it and moves on.
//
// The returned Event never aliases line, so the caller may reuse its buffer.
func Parse(line []byte) (Event, error) {
	ev := Event{Kind: KindUnknown, Size: len(line)}
	// null decodes into a struct without error, so look before decoding.
	switch start := bytes.TrimLeft(line, " \t\r\n"); {
	case len(start) == 0:
		return ev, fmt.Errorf("parse line: %w: empty line", ErrInvalidJSON)
	case start[0] != '{':
		return ev, fmt.Errorf("parse line: %w: not an object", ErrInvalidJSON)
	}
	var w wireLine
	if err := decode(line, &w); err != nil {
		return ev, fmt.Errorf("parse line: %w", err)
	}
	if w.Type == "user" && len(w.Message.Content) == 0 {
		// A replayed prompt or a note: its content is a string, which the
		// blocks above read as nothing. Rare and short, so decoded again
		// rather than making every content a string-or-array type whose
		// UnmarshalJSON would validate it a second time.
		var echo struct {
			Message struct {
				Content text `json:"content"`
			} `json:"message"`
		}
		if err := decode(line, &echo); err != nil {
			return ev, fmt.Errorf("parse line: %w", err)
		}
		w.echo = echo.Message.Content
	}
	w.build(&ev)
	return ev, nil
}

// decode is json.Unmarshal that reads a value of the wrong type as zero:
// encoding/json then skips the value, finishes the rest and reports only the
// first such mismatch, which the CLI's own schema drift should not turn into
// a lost line.
func decode(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil, errors.As(err, &typeErr):
		return nil
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	return err
}

// wireLine is every top-level field any line type uses. JSON does not
// promise that "type" comes first, so which fields matter is decided after
// the whole line is read.
type wireLine struct {
	Type            string  `json:"type"`
	Subtype         string  `json:"subtype"`
	SessionID       string  `json:"session_id"`
	ParentToolUseID string  `json:"parent_tool_use_id"`
	Model           string  `json:"model"`
	Message         message `json:"message"`
	ToolUseResult   struct {
		FilePath    string `json:"filePath"`
		Interrupted bool   `json:"interrupted"`
	} `json:"tool_use_result"`
	Error text `json:"error"`

	// system/init
	Cwd            string      `json:"cwd"`
	PermissionMode string      `json:"permissionMode"`
	Version        string      `json:"claude_code_version"`
	Tools          []optString `json:"tools"`

	// other system lines
	Status          string `json:"status"`
	CompactResult   string `json:"compact_result"`
	CompactError    string `json:"compact_error"`
	CompactMetadata struct {
		PreTokens integer `json:"pre_tokens"`
	} `json:"compact_metadata"`
	Attempt      integer `json:"attempt"`
	MaxRetries   integer `json:"max_retries"`
	RetryDelayMs float   `json:"retry_delay_ms"`
	ErrorStatus  integer `json:"error_status"`
	TaskID       string  `json:"task_id"`
	ToolUseID    string  `json:"tool_use_id"`
	Description  text    `json:"description"`
	Summary      text    `json:"summary"` // task_notification's description
	// system/informational (2.1.330+): tag settings_not_in_effect, ...
	Tag     string `json:"tag"`
	Content text   `json:"content"`
	Level   string `json:"level"`

	// rate_limit_event
	RateLimitInfo struct {
		Status        string `json:"status"`
		ResetsAt      float  `json:"resetsAt"`
		RateLimitType string `json:"rateLimitType"`
	} `json:"rate_limit_info"`

	// control_response
	Response struct {
		Subtype   string           `json:"subtype"`
		RequestID string           `json:"request_id"`
		Error     text             `json:"error"`
		Response  contextUsageWire `json:"response"` // get_context_usage answers; other answers leave it empty
	} `json:"response"`

	// control_request (the CLI asking us)
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype    string `json:"subtype"`
		CallbackID string `json:"callback_id"`
		Input      struct {
			HookEventName  string      `json:"hook_event_name"`
			ToolName       string      `json:"tool_name"`
			ToolUseID      string      `json:"tool_use_id"`
			ToolInput      toolInput   `json:"tool_input"`
			ToolResponse   boundedJSON `json:"tool_response"`
			StopHookActive bool        `json:"stop_hook_active"`
			Trigger        string      `json:"trigger"`
		} `json:"input"`
	} `json:"request"`

	// result
	IsError        bool                  `json:"is_error"`
	TerminalReason string                `json:"terminal_reason"`
	APIErrorStatus integer               `json:"api_error_status"`
	NumTurns       integer               `json:"num_turns"`
	DurationMs     integer               `json:"duration_ms"`
	TotalCostUSD   float                 `json:"total_cost_usd"`
	Result         text                  `json:"result"`
	Usage          usage                 `json:"usage"`
	ModelUsage     map[string]modelUsage `json:"modelUsage"`

	echo text // message.content of a user line when it is a string
}

func (w *wireLine) build(ev *Event) {
	ev.Type, ev.Subtype = w.Type, w.Subtype
	switch ev.Type {
	case "system":
		if ev.Subtype == "init" {
			ev.Kind = KindInit
			ev.Init = &Init{
				SessionID:      w.SessionID,
				Model:          w.Model,
				Version:        w.Version,
				Cwd:            w.Cwd,
				PermissionMode: w.PermissionMode,
				Tools:          stringElems(w.Tools),
			}
			return
		}
		ev.Kind = KindSystem
		ev.System = &System{
			Subtype:       ev.Subtype,
			Status:        w.Status,
			CompactResult: w.CompactResult,
			CompactError:  w.CompactError,
			PreTokens:     int64(w.CompactMetadata.PreTokens),
			Attempt:       int(w.Attempt),
			MaxRetries:    int(w.MaxRetries),
			RetryDelayMs:  float64(w.RetryDelayMs),
			ErrorStatus:   int(w.ErrorStatus),
			Error:         w.Error.s,
			TaskID:        w.TaskID,
			ToolUseID:     w.ToolUseID,
			Description:   cmp.Or(w.Description.s, w.Summary.s),
			Tag:           w.Tag,
			Content:       w.Content.s,
			Level:         w.Level,
		}
	case "tool_progress":
		// A long tool's heartbeat; 2.1.333 adds the description of a Bash,
		// Agent or Monitor call. A subagent's or a hook's has a parent.
		if w.ParentToolUseID == "" && w.ToolUseID != "" {
			ev.Kind = KindSystem
			ev.System = &System{Subtype: "tool_progress", ToolUseID: w.ToolUseID, Description: w.Description.s}
		}
	case "rate_limit_event":
		ev.Kind = KindRateLimit
		ri := w.RateLimitInfo
		rl := &failure.RateLimit{Status: ri.Status, Type: ri.RateLimitType}
		// Epoch seconds; a value over 1e12 is milliseconds (claude-cli.md).
		switch at := float64(ri.ResetsAt); {
		case at > 1e12:
			rl.Resets = time.UnixMilli(int64(at))
		case at > 0:
			rl.Resets = time.Unix(int64(at), 0)
		}
		ev.RateLimit = rl
	case "assistant":
		ev.Kind = KindAssistant
		m := &w.Message
		a := &Assistant{
			MessageID:       m.ID,
			ParentToolUseID: w.ParentToolUseID,
			Model:           m.Model,
			Usage:           m.Usage.value(),
			Error:           w.Error.s,
		}
		var texts []text
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				a.ToolUses = append(a.ToolUses, ToolUse{
					ID:          b.ID,
					Name:        b.Name,
					Input:       b.Input.raw,
					InputSize:   b.Input.size,
					Command:     b.Input.command,
					FilePath:    b.Input.filePath,
					Description: b.Input.description,
				})
			}
		}
		if len(texts) > 0 {
			a.Text = joinTexts(texts)
		}
		ev.Assistant = a
	case "user":
		m := &w.Message
		var texts []text
		for _, b := range m.Content {
			switch b.Type {
			case "tool_result":
				content, n := b.Content.joined()
				ev.ToolResults = append(ev.ToolResults, ToolResult{
					ToolUseID:       b.ToolUseID,
					ParentToolUseID: w.ParentToolUseID,
					IsError:         b.IsError,
					Content:         content,
					ContentLen:      n,
					// The CLI writes one tool_result per line, so the line's
					// structured result belongs to it.
					FilePath:    w.ToolUseResult.FilePath,
					Interrupted: w.ToolUseResult.Interrupted,
				})
			case "text":
				texts = append(texts, b.Text)
			}
		}
		if len(ev.ToolResults) > 0 {
			ev.Kind = KindToolResult
			return
		}
		if w.echo.isString() {
			texts = append(texts, w.echo)
		}
		ev.Kind = KindUser
		ev.User = &UserMessage{ParentToolUseID: w.ParentToolUseID, Text: joinTexts(texts)}
	case "control_response":
		r := &w.Response
		if strings.HasPrefix(r.RequestID, contextUsagePrefix) {
			contextUsageEvent(ev, r.RequestID, r.Subtype, r.Error.s, &r.Response)
			return
		}
		ev.Kind = KindControlResponse
		ev.Control = &ControlResponse{RequestID: r.RequestID, Subtype: r.Subtype, Error: r.Error.s}
	case "control_request":
		ev.ControlRequestID = w.RequestID
		if w.Request.Subtype != "hook_callback" {
			return
		}
		in := &w.Request.Input
		name := HookEvent(in.HookEventName)
		if name == "" {
			name = callbackIDs[w.Request.CallbackID]
		}
		ev.Kind = KindHook
		ev.Hook = &HookCall{
			Event:          name,
			ToolName:       in.ToolName,
			ToolUseID:      in.ToolUseID,
			ToolInput:      in.ToolInput.kept(),
			ToolResponse:   in.ToolResponse.s,
			StopHookActive: in.StopHookActive,
			Trigger:        in.Trigger,
			RequestID:      w.RequestID,
		}
	case "control_cancel_request":
		ev.Kind, ev.ControlRequestID = KindControlCancel, w.RequestID
	case "result":
		ev.Kind = KindResult
		if w.ParentToolUseID != "" {
			ev.Kind = KindSubagentResult
		}
		var mu map[string]ModelUsage
		for name, u := range w.ModelUsage {
			if u.ok {
				if mu == nil {
					mu = make(map[string]ModelUsage, len(w.ModelUsage))
				}
				mu[name] = u.v
			}
		}
		ev.Result = &Result{
			Subtype:         ev.Subtype,
			IsError:         w.IsError,
			TerminalReason:  w.TerminalReason,
			APIErrorStatus:  int(w.APIErrorStatus),
			NumTurns:        int(w.NumTurns),
			DurationMs:      int64(w.DurationMs),
			CostUSD:         float64(w.TotalCostUSD),
			SessionID:       w.SessionID,
			ParentToolUseID: w.ParentToolUseID,
			Text:            w.Result.s,
			Usage:           w.Usage.value(),
			ModelUsage:      mu,
		}
	}
}

// stringElems keeps the string elements of an array; a present array, even an
// empty one, gives a non-nil slice.
func stringElems(list []optString) []string {
	if list == nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s.ok {
			out = append(out, s.s)
		}
	}
	return out
}
