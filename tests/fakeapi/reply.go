package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// What the fake model answers on the wire: the message, its SSE stream, and API errors.

// message is the Messages API response object.
type message struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []contentBlock `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        Usage          `json:"usage"`
}

type contentBlock struct {
	Type  string         `json:"type"`
	Text  *string        `json:"text,omitempty"`
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// HandoffPath as a Write's file_path stands for the handoff path debussy
// last named in the conversation (its request carries the absolute path,
// which a script cannot know: it holds the run id).
const HandoffPath = "$HANDOFF"

var handoffPathRe = regexp.MustCompile(`/[^\s"'\x60\\]*/handoff-[0-9]+\.md`)

func lastHandoffPath(body []byte) string {
	all := handoffPathRe.FindAll(body, -1)
	if len(all) == 0 {
		return "handoff-not-named.md"
	}
	return string(all[len(all)-1])
}

func buildMessage(p plan, model string, blocks []Block) message {
	m := message{ID: p.msgID, Type: "message", Role: "assistant", Model: model, Usage: p.turn.Usage}
	stop := "end_turn"
	for i, b := range blocks {
		if b.Tool == "" {
			m.Content = append(m.Content, contentBlock{Type: "text", Text: &b.Text})
			continue
		}
		stop = "tool_use"
		input := make(map[string]any, len(b.Input))
		for k, v := range b.Input {
			input[k] = v
		}
		if fp, _ := input["file_path"].(string); fp == HandoffPath {
			input["file_path"] = lastHandoffPath(p.req.Body)
		}
		if fp, ok := input["file_path"].(string); ok && fp != "" && !filepath.IsAbs(fp) && p.cwd != "" {
			input["file_path"] = filepath.Join(p.cwd, fp)
		}
		m.Content = append(m.Content, contentBlock{
			Type:  "tool_use",
			ID:    fmt.Sprintf("toolu_%d_%d_%d", p.req.Session, p.req.Turn, i),
			Name:  b.Tool,
			Input: input,
		})
	}
	m.StopReason = &stop
	return m
}

// deltaChunk bounds one input_json_delta / text_delta, like the real API's
// incremental stream (and so a multi-MB Write is not one giant SSE event).
const deltaChunk = 64 << 10

// writeStream sends m as server-sent events; cut drops the connection in
// the middle of the first content block instead of finishing; linger, when
// set, is called between the last content block and the message's end.
func writeStream(w http.ResponseWriter, m message, cut bool, linger func()) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_"+m.ID)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}

	start := m
	start.Content = []contentBlock{}
	start.StopReason = nil
	startUsage := m.Usage
	startUsage.Output = min(startUsage.Output, 1) // the API reports output so far
	start.Usage = startUsage
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			empty := ""
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": contentBlock{Type: "text", Text: &empty}})
			if cut {
				runes := []rune(*b.Text)
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": string(runes[:len(runes)/2])}})
				abort(flusher)
			}
			for _, part := range chunks(*b.Text) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			input, _ := json.Marshal(b.Input)
			if cut {
				half := input[:len(input)/2]
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": string(half)}})
				abort(flusher)
			}
			for _, part := range chunks(string(input)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		if flusher != nil {
			flusher.Flush()
		}
	}
	if linger != nil {
		linger()
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": *m.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": m.Usage.Output}})
	send("message_stop", map[string]any{"type": "message_stop"})
	if flusher != nil {
		flusher.Flush()
	}
}

// abort flushes what was sent and drops the connection: net/http closes it
// without the chunked encoding's last chunk, so the client sees the stream
// break, not end.
func abort(flusher http.Flusher) {
	if flusher != nil {
		flusher.Flush()
	}
	panic(http.ErrAbortHandler)
}

// chunks splits s into pieces of at most deltaChunk bytes, on rune
// boundaries so each piece stays valid UTF-8 in its JSON event.
func chunks(s string) []string {
	if len(s) <= deltaChunk {
		return []string{s}
	}
	var out []string
	for len(s) > deltaChunk {
		cut := deltaChunk
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	// x-should-retry is left out on purpose: the CLI then applies its own
	// retry policy by status (retries 529/500, not 400), like against the API.
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}

// writeUsageLimit answers as the API does when a subscription's usage
// limit is reached: 429 with the unified rate-limit headers the CLI reads
// (claude-cli.md, "Usage limits").
func writeUsageLimit(w http.ResponseWriter, l *activeLimit) {
	h := w.Header()
	h.Set("anthropic-ratelimit-unified-status", "rejected")
	h.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(l.resets.Unix(), 10))
	h.Set("anthropic-ratelimit-unified-representative-claim", l.typ)
	writeError(w, http.StatusTooManyRequests, "rate_limit_error", "This request would exceed your account's rate limit. Please try again later.")
}

func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

func defaultErrorMessage(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "prompt is too long: 210000 tokens > 200000 maximum"
	case http.StatusTooManyRequests:
		return "Number of request tokens has exceeded your rate limit"
	case 529:
		return "Overloaded"
	default:
		return "Internal server error"
	}
}
