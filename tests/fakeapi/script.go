// Package fakeapi is a scripted stand-in for the Anthropic Messages API, good
// enough for the real Claude Code CLI to run against it: the CLI streams its
// requests here, the script decides what the "model" answers, and the tools
// the script asks for (Bash, Write) really run on the CLI's side.
//
// The server is stateless with respect to the CLI's conversation, exactly like
// the real API: every request carries the whole conversation, so the first user
// message identifies the session and the number of assistant messages is the
// turn index.
package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Script is everything the fake model will say, loadable from JSON.
type Script struct {
	Conversations []Conversation `json:"conversations"`
	// Default answers sessions that no conversation matches. It is shared by
	// all such sessions and never bound. Nil: a plain "ok" end_turn reply.
	Default *Conversation `json:"default,omitempty"`
}

// Conversation is the scripted model side of one CLI session.
//
// A session is identified by its first user message (after stripping the
// leading <system-reminder> blocks the CLI injects). Each distinct session is
// bound to the FIRST not-yet-bound conversation whose Match is a substring of
// it, so a restarted session of the same phase (a different first message that
// still contains the phase text) binds to the next conversation with the same
// Match. An empty Match matches every session.
type Conversation struct {
	Name  string `json:"name"`
	Match string `json:"match"`
	Turns []Turn `json:"turns"`
	// React, when set, sees every request of the session first and may
	// answer it instead of Turns (ok true): a Go-only hook for replies that
	// depend on what the client said, e.g. writing a handoff where debussy
	// asked for it. It runs under the server's lock: keep it quick.
	React func(Request) (Turn, bool) `json:"-"`
}

// Turn is the answer to the request whose conversation holds len(index)
// assistant messages. Past the last turn the server answers a plain end_turn
// "done." (with the last turn's usage, so context figures do not drop to 0).
type Turn struct {
	// Usage is reported in message_start (input and cache figures) and
	// message_delta (output tokens).
	Usage  Usage   `json:"usage"`
	Blocks []Block `json:"blocks"`
	// Delay is waited before answering; it ends early when the server closes.
	Delay Duration `json:"delay,omitempty"`
	// Linger is waited after the reply's last content block, before its
	// message_delta and message_stop: the model still streaming after its
	// tool_use, which the CLI starts running at the block's end. A quick
	// tool then ends, and its PostToolUse is asked, inside the response.
	Linger Duration `json:"linger,omitempty"`
	// Status answers an HTTP error instead of a reply: 529 overloaded_error,
	// 400 invalid_request_error (default message: prompt is too long), 500
	// api_error, ...
	Status       int    `json:"status,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// Repeat is how many consecutive requests of this turn get the Status
	// error (0 means 1). Later requests of the turn get Blocks, so a small
	// Repeat lets the CLI succeed on a retry and Repeat 11 exhausts its 10
	// retries.
	Repeat int `json:"repeat,omitempty"`
	// Hang accepts every request of this turn and never answers, until the
	// client gives up or the server closes.
	Hang bool `json:"hang,omitempty"`
	// Cut streams the reply's start and half its first block, then drops
	// the connection without ending the stream: the network failing
	// mid-response. A non-streaming request is answered whole.
	Cut bool `json:"cut,omitempty"`
	// Files are written (path relative to the session's working directory
	// → content) just before the turn is answered: the world changing
	// between two identical tool calls, so a repeated read or test run gets
	// a different result without its input changing.
	Files map[string]string `json:"files,omitempty"`
	// UsageLimit answers this turn with a subscription's usage limit: the
	// first request of the turn starts it, and every request of any session
	// gets the API's 429 with the unified rate-limit headers until it
	// resets; the turn is answered as scripted after that. The CLI reports
	// it as a usage limit only on the OAuth path (CLAUDE_CODE_OAUTH_TOKEN).
	UsageLimit *UsageLimit `json:"usage_limit,omitempty"`
}

// UsageLimit is a usage limit that resets For after it is hit.
type UsageLimit struct {
	// Type is the limit's name as the API's representative-claim header
	// says it: five_hour, seven_day, seven_day_opus, ...
	Type string   `json:"type"`
	For  Duration `json:"for"`
}

// Usage is the token usage a turn reports, in the API's own field names.
type Usage struct {
	Input         int64 `json:"input_tokens,omitempty"`
	CacheRead     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreation int64 `json:"cache_creation_input_tokens,omitempty"`
	Output        int64 `json:"output_tokens,omitempty"`
}

// Block is one content block of a reply: text, or a tool_use when Tool is set.
type Block struct {
	Text  string         `json:"text,omitempty"`
	Tool  string         `json:"tool,omitempty"`
	Input map[string]any `json:"input,omitempty"`
}

// Text is a text block.
func Text(s string) Block { return Block{Text: s} }

// Bash is a Bash tool_use running cmd in the CLI's working directory.
func Bash(cmd string) Block {
	return Block{Tool: "Bash", Input: map[string]any{"command": cmd, "description": "scripted command"}}
}

// Write is a Write tool_use. The CLI wants an absolute path; a relative one is
// resolved by the server against the session's working directory (read from
// the request's system prompt), so a script file need not know the temp dir.
func Write(path, content string) Block {
	return Block{Tool: "Write", Input: map[string]any{"file_path": path, "content": content}}
}

// Duration is a time.Duration that reads and writes JSON as "1.5s"; a bare
// JSON number is taken as seconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("parse duration: %w", err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("parse duration: want \"1.5s\" or seconds: %w", err)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// ParseScript decodes a JSON script strictly (unknown fields are errors, so a
// typo in a hand-written script does not silently change the test).
func ParseScript(data []byte) (Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("decode script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// LoadScript reads and parses a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Validate reports every block that is both text and tool_use and every
// negative figure.
func (s Script) Validate() error {
	var errs []error
	check := func(c Conversation, where string) {
		for ti, t := range c.Turns {
			if t.Status != 0 && (t.Status < 400 || t.Status > 599) {
				errs = append(errs, fmt.Errorf("%s turn %d: status %d is not an HTTP error", where, ti, t.Status))
			}
			if t.Repeat < 0 || t.Delay < 0 || t.Linger < 0 {
				errs = append(errs, fmt.Errorf("%s turn %d: negative repeat, delay or linger", where, ti))
			}
			for bi, b := range t.Blocks {
				if b.Tool != "" && b.Text != "" {
					errs = append(errs, fmt.Errorf("%s turn %d block %d: both text and tool set", where, ti, bi))
				}
				if b.Tool == "" && b.Input != nil {
					errs = append(errs, fmt.Errorf("%s turn %d block %d: input without tool", where, ti, bi))
				}
			}
		}
	}
	for i, c := range s.Conversations {
		check(c, fmt.Sprintf("conversation %d (%q)", i, c.Name))
	}
	if s.Default != nil {
		check(*s.Default, "default conversation")
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid script: %w", errors.Join(errs...))
	}
	return nil
}
