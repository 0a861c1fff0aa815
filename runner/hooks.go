package runner

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/debussy-dev/debussy/event"
)

// The hook types live in the event package (a leaf the pure packages
// read); these names keep the runner's API.
type (
	HookEvent  = event.HookEvent
	HookCall   = event.HookCall
	HookAnswer = event.HookAnswer
)

const (
	HookPreToolUse  = event.HookPreToolUse
	HookPostToolUse = event.HookPostToolUse
	HookStop        = event.HookStop
	HookPreCompact  = event.HookPreCompact
)

const (
	defaultHookTimeout = 10 * time.Second
	initRequestID      = "init_1"
	// compactBlockReason is the default PreCompact answer's reason: the
	// runner's consumer restarts the session with a checkpoint instead.
	compactBlockReason = "debussy restarts the session with a checkpoint instead of compacting it"
)

// callbackIDs are the ids the initialize request registers, by hook.
var callbackIDs = map[string]HookEvent{
	"pre":     HookPreToolUse,
	"post":    HookPostToolUse,
	"stop":    HookStop,
	"compact": HookPreCompact,
}

// initializeRequest registers the hook callbacks; the CLI answers it with a
// control_response for initRequestID.
func initializeRequest() []byte {
	return []byte(`{"type":"control_request","request_id":"` + initRequestID + `","request":{"subtype":"initialize","hooks":{` +
		`"PreToolUse":[{"matcher":"*","hookCallbackIds":["pre"]}],` +
		`"PostToolUse":[{"matcher":"*","hookCallbackIds":["post"]}],` +
		`"Stop":[{"hookCallbackIds":["stop"]}],` +
		`"PreCompact":[{"hookCallbackIds":["compact"]}]}}}` + "\n")
}

// The JSON the CLI gets, fields in key order (as the maps they replace
// were written: the CLI's side is unchanged, testdata/controlwire.golden).

// controlResponse is a control_response line.
type controlResponse struct {
	Response controlReply `json:"response"`
	Type     string       `json:"type"` // "control_response"
}

// controlReply answers request RequestID: Response on success, Error on
// an error.
type controlReply struct {
	Error     string      `json:"error,omitempty"`
	RequestID string      `json:"request_id"`
	Response  *hookOutput `json:"response,omitempty"`
	Subtype   string      `json:"subtype"` // "success" or "error"
}

// hookOutput is a hook callback's output; empty, the CLI goes on.
type hookOutput struct {
	Continue           *bool         `json:"continue,omitempty"`
	Decision           string        `json:"decision,omitempty"`
	HookSpecificOutput *hookSpecific `json:"hookSpecificOutput,omitempty"`
	Reason             string        `json:"reason,omitempty"`
	StopReason         string        `json:"stopReason,omitempty"`
}

// hookSpecific is a PreToolUse's decision or a PostToolUse's context.
type hookSpecific struct {
	AdditionalContext        string `json:"additionalContext,omitempty"`
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// hookAnswerOutput is the hook output of an answer to ev.
func hookAnswerOutput(ev HookEvent, a HookAnswer) *hookOutput {
	out := &hookOutput{}
	switch ev {
	case HookPreToolUse:
		switch {
		case a.Deny != "":
			out.HookSpecificOutput = &hookSpecific{HookEventName: string(HookPreToolUse), PermissionDecision: "deny", PermissionDecisionReason: a.Deny}
		case a.Allow != "":
			out.HookSpecificOutput = &hookSpecific{HookEventName: string(HookPreToolUse), PermissionDecision: "allow", PermissionDecisionReason: a.Allow}
		}
	case HookPostToolUse:
		if a.Note != "" {
			out.HookSpecificOutput = &hookSpecific{HookEventName: string(HookPostToolUse), AdditionalContext: a.Note}
		}
		if a.StopReason != "" {
			out.Continue, out.StopReason = new(bool), a.StopReason
		}
	case HookStop, HookPreCompact:
		if a.Block != "" {
			out.Decision, out.Reason = "block", a.Block
		}
	}
	return out
}

// hookResponse is the control_response line answering request reqID.
func hookResponse(reqID string, ev HookEvent, a HookAnswer) []byte {
	return controlLine(controlReply{Subtype: "success", RequestID: reqID, Response: hookAnswerOutput(ev, a)})
}

// controlErrorResponse refuses a control request the runner does not serve.
func controlErrorResponse(reqID, msg string) []byte {
	return controlLine(controlReply{Subtype: "error", RequestID: reqID, Error: msg})
}

func controlLine(a controlReply) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(controlResponse{Response: a, Type: "control_response"}) // strings and bools: cannot fail; ends with "\n"
	return b.Bytes()
}

// boundedJSON is the text of a hook input value: a string as itself, any
// other value as its JSON, both cut to MaxTextBytes on a rune boundary.
type boundedJSON struct {
	s string
}

func (b *boundedJSON) UnmarshalJSON(raw []byte) error {
	*b = boundedJSON{}
	if raw[0] == '"' {
		var t text
		if err := t.UnmarshalJSON(raw); err != nil {
			return err
		}
		b.s = t.s
		return nil
	}
	if bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if len(raw) > MaxTextBytes {
		cut := MaxTextBytes
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut]
	}
	b.s = strings.ToValidUTF8(string(raw), "\uFFFD")
	return nil
}

// maxKeptCommand bounds the command kept from an input over MaxInputBytes.
const maxKeptCommand = 4 << 10

// kept is the input a hook consumer gets: the input itself, or for one
// over MaxInputBytes the fields its decisions read (file_path, path, the
// command's head) with the full input's size and digest, so a 100 KiB
// handoff Write is still recognised by its path and two different large
// inputs never look identical.
func (in toolInput) kept() json.RawMessage {
	if in.raw != nil || in.size == 0 {
		return in.raw
	}
	// Its keys in order, as the map it replaces was written.
	m := struct {
		Command  string `json:"command,omitempty"`
		Bytes    int    `json:"debussy_input_bytes"`
		SHA256   string `json:"debussy_input_sha256"`
		FilePath string `json:"file_path,omitempty"`
		Path     string `json:"path,omitempty"`
	}{Bytes: in.size, SHA256: hex.EncodeToString(in.sum[:]), FilePath: in.filePath, Path: in.path}
	if c := in.command; c != "" {
		if len(c) > maxKeptCommand {
			cut := maxKeptCommand
			for cut > 0 && !utf8.RuneStart(c[cut]) {
				cut--
			}
			c = c[:cut]
		}
		m.Command = c
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
