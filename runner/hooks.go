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

// hookOutput is the hook output JSON of an answer to ev.
func hookOutput(ev HookEvent, a HookAnswer) map[string]any {
	out := map[string]any{}
	switch ev {
	case HookPreToolUse:
		switch {
		case a.Deny != "":
			out["hookSpecificOutput"] = map[string]any{
				"hookEventName": string(HookPreToolUse), "permissionDecision": "deny", "permissionDecisionReason": a.Deny}
		case a.Allow != "":
			out["hookSpecificOutput"] = map[string]any{
				"hookEventName": string(HookPreToolUse), "permissionDecision": "allow", "permissionDecisionReason": a.Allow}
		}
	case HookPostToolUse:
		if a.Note != "" {
			out["hookSpecificOutput"] = map[string]any{
				"hookEventName": string(HookPostToolUse), "additionalContext": a.Note}
		}
		if a.StopReason != "" {
			out["continue"] = false
			out["stopReason"] = a.StopReason
		}
	case HookStop, HookPreCompact:
		if a.Block != "" {
			out["decision"] = "block"
			out["reason"] = a.Block
		}
	}
	return out
}

// hookResponse is the control_response line answering request reqID.
func hookResponse(reqID string, ev HookEvent, a HookAnswer) []byte {
	return controlLine(map[string]any{"subtype": "success", "request_id": reqID, "response": hookOutput(ev, a)})
}

// controlErrorResponse refuses a control request the runner does not serve.
func controlErrorResponse(reqID, msg string) []byte {
	return controlLine(map[string]any{"subtype": "error", "request_id": reqID, "error": msg})
}

func controlLine(response map[string]any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"type": "control_response", "response": response}); err != nil {
		// Only strings and bools go in: cannot happen, but never leave the CLI waiting.
		return []byte(`{"type":"control_response","response":{"subtype":"success","request_id":` +
			string(mustQuote(response["request_id"])) + `,"response":{}}}` + "\n")
	}
	return b.Bytes()
}

func mustQuote(v any) []byte {
	s, _ := v.(string)
	b, _ := json.Marshal(s)
	return b
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
	m := map[string]any{"debussy_input_bytes": in.size, "debussy_input_sha256": hex.EncodeToString(in.sum[:])}
	if in.filePath != "" {
		m["file_path"] = in.filePath
	}
	if in.path != "" {
		m["path"] = in.path
	}
	if c := in.command; c != "" {
		if len(c) > maxKeptCommand {
			cut := maxKeptCommand
			for cut > 0 && !utf8.RuneStart(c[cut]) {
				cut--
			}
			c = c[:cut]
		}
		m["command"] = c
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}
