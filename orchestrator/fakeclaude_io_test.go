package orchestrator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The fake claude's side of the protocol: reading the prompt and control
// lines, asking debussy at hooks, and writing stream-json events.

// readPrompt reads the first user message, answering an initialize
// request before it.
func (f *fakeCLI) readPrompt() (string, bool) {
	for {
		line, err := stdin.ReadBytes('\n')
		if err != nil {
			return "", false
		}
		var msg struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
				Hooks   map[string][]struct {
					IDs []string `json:"hookCallbackIds"`
				} `json:"hooks"`
			} `json:"request"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &msg) != nil {
			return "", false
		}
		if msg.Type == "control_request" && msg.Request.Subtype == "initialize" {
			f.hooks = map[string]string{}
			for ev, ms := range msg.Request.Hooks {
				if len(ms) > 0 && len(ms[0].IDs) > 0 {
					f.hooks[ev] = ms[0].IDs[0]
				}
			}
			f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID,
				"response": map[string]any{"commands": []any{}}}})
			continue
		}
		if msg.Type == "control_request" && msg.Request.Subtype == "get_context_usage" {
			f.answerContextUsage(msg.RequestID)
			continue
		}
		return msg.Message.Content, true
	}
}

// readControl forwards interrupts, hook answers and the end of stdin.
func (f *fakeCLI) readControl() {
	defer close(f.in)
	for {
		line, err := stdin.ReadBytes('\n')
		var msg struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
			Response struct {
				RequestID string          `json:"request_id"`
				Response  json.RawMessage `json:"response"`
			} `json:"response"`
		}
		if json.Unmarshal(line, &msg) == nil {
			switch msg.Type {
			case "control_request":
				if msg.Request.Subtype == "get_context_usage" {
					continue // a later question goes unanswered: the runner carries on
				}
				f.in <- fakeInput{interrupt: msg.RequestID}
			case "control_response":
				f.in <- fakeInput{respID: msg.Response.RequestID, response: msg.Response.Response}
			}
		}
		if err != nil {
			return
		}
	}
}

// hookAnswer is the hook output debussy answered with.
type hookAnswer struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Specific   struct {
		Decision string `json:"permissionDecision"`
		Why      string `json:"permissionDecisionReason"`
		Context  string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hook asks debussy at a hook, as the CLI does, and waits for the answer;
// ok is false when no callback is registered for it.
func (f *fakeCLI) hook(event string, input map[string]any) (hookAnswer, bool) {
	id, ok := f.hooks[event]
	if !ok {
		return hookAnswer{}, false
	}
	f.hookN++
	reqID := fmt.Sprintf("hook_%d", f.hookN)
	input["hook_event_name"] = event
	input["session_id"] = "fake"
	f.emit(map[string]any{"type": "control_request", "request_id": reqID,
		"request": map[string]any{"subtype": "hook_callback", "callback_id": id, "input": input}})
	for in := range f.in {
		switch {
		case in.respID == reqID:
			var a hookAnswer
			_ = json.Unmarshal(in.response, &a)
			return a, true
		case in.interrupt != "":
			f.interrupts = append(f.interrupts, in.interrupt) // for pollInterrupt
		}
	}
	return hookAnswer{}, false
}

func (f *fakeCLI) logHook(line string) {
	f.heard = append(f.heard, line)
	fmt.Fprintln(f.hookLog, strings.ReplaceAll(line, "\n", "\\n"))
}

// tool plays one tool call through its hooks: run does the work.
func (f *fakeCLI) tool(name string, input map[string]any, run func() (string, error)) {
	id := f.toolUse(name, input)
	if a, ok := f.hook("PreToolUse", map[string]any{"tool_name": name, "tool_input": input, "tool_use_id": id}); ok && a.Specific.Decision == "deny" {
		f.logHook("pre " + name + " deny: " + a.Specific.Why)
		f.toolResult(id, a.Specific.Why, true)
		return
	}
	out, err := run()
	a, _ := f.hook("PostToolUse", map[string]any{"tool_name": name, "tool_input": input, "tool_use_id": id, "tool_response": errText(err, out)})
	if a.Specific.Context != "" {
		f.logHook("post " + name + " note: " + a.Specific.Context)
	}
	f.toolResult(id, errText(err, out), err != nil)
	if a.Continue != nil && !*a.Continue {
		f.logHook("post " + name + " stop: " + a.StopReason)
		f.stopped = true
	}
}

// stopHook asks Stop at the end of a turn; true means debussy blocked it
// and the turn goes on with the next steps. With no step left, the agent
// stops again, as the CLI then reports stop_hook_active.
func (f *fakeCLI) stopHook(last bool) bool {
	a, ok := f.hook("Stop", map[string]any{"stop_hook_active": f.stopSeen})
	if !ok || a.Decision != "block" {
		return false
	}
	f.logHook("stop block: " + a.Reason)
	f.stopSeen = true
	if !last {
		return true
	}
	if a, _ := f.hook("Stop", map[string]any{"stop_hook_active": true}); a.Decision == "block" {
		f.logHook("stop block: " + a.Reason)
	}
	return false
}

// handoffPath is the backticked absolute path debussy asked for.
func (f *fakeCLI) handoffPath() string {
	for i := len(f.heard) - 1; i >= 0; i-- {
		for _, part := range strings.Split(f.heard[i], "`")[1:] {
			if filepath.IsAbs(part) && strings.HasSuffix(part, ".md") {
				return part
			}
		}
	}
	return ""
}

func (f *fakeCLI) pollInterrupt() (string, bool) {
	if len(f.interrupts) > 0 {
		id := f.interrupts[0]
		f.interrupts = f.interrupts[1:]
		return id, true
	}
	for {
		select {
		case in, ok := <-f.in:
			if ok && in.respID != "" {
				continue // a late answer
			}
			return in.interrupt, ok && in.interrupt != ""
		default:
			return "", false
		}
	}
}

// abort ends the turn the way the CLI answers an interrupt.
func (f *fakeCLI) abort(reqID, tool string) {
	f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": reqID}})
	if tool != "" {
		f.toolResult(tool, "The user doesn't want to proceed with this tool use.", true)
	}
	f.result("error_during_execution", true, 0, "")
}

// finish waits for the end of stdin, as the CLI does after a result.
func (f *fakeCLI) finish() int {
	for range f.in {
	}
	return 0
}

func (f *fakeCLI) emit(v map[string]any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(append(data, '\n'))
}

func (f *fakeCLI) assistant(content ...map[string]any) {
	f.n++
	f.input += f.tokens
	f.output++
	f.emit(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "session_id": "fake", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", f.n), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content,
		"usage":   map[string]any{"input_tokens": f.tokens, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
	}})
}

func (f *fakeCLI) toolUse(name string, input map[string]any) string {
	id := fmt.Sprintf("toolu_%d", f.n+1)
	f.assistant(map[string]any{"type": "tool_use", "id": id, "name": name, "input": input})
	return id
}

func (f *fakeCLI) toolResult(id, content string, isError bool) {
	f.emit(map[string]any{"type": "user", "parent_tool_use_id": nil, "session_id": "fake", "message": map[string]any{
		"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}},
	}})
}

func (f *fakeCLI) result(subtype string, isError bool, apiStatus int, text string) {
	f.resultWith(nil, subtype, isError, apiStatus, text)
}

func (f *fakeCLI) resultWith(extra map[string]any, subtype string, isError bool, apiStatus int, text string) {
	f.results++
	// Sonnet's list price, so debussy's computed cost reconciles.
	cost := (float64(f.input)*3 + float64(f.output)*15) / 1e6
	r := map[string]any{"type": "result", "subtype": subtype, "is_error": isError, "num_turns": 2, "result": text,
		"session_id": "fake", "total_cost_usd": cost,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
		"modelUsage": map[string]any{"claude-sonnet-4-5": map[string]any{"contextWindow": 200000,
			"inputTokens": f.input, "outputTokens": f.output, "costUSD": cost}}}
	if apiStatus != 0 {
		r["api_error_status"] = apiStatus
	}
	for k, v := range extra {
		r[k] = v
	}
	f.emit(r)
}

// answerContextUsage answers get_context_usage as the ctx step says.
func (f *fakeCLI) answerContextUsage(reqID string) {
	if f.ctx == "refuse" {
		f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": reqID,
			"error": "Unknown subtype: get_context_usage"}})
		return
	}
	var model string
	var window, buffer int64
	fmt.Sscan(f.ctx, &model, &window, &buffer)
	cats := []map[string]any{
		{"name": "System prompt", "tokens": 6922}, {"name": "System tools", "tokens": 19203},
		{"name": "MCP tools", "tokens": 40000}, {"name": "Messages", "tokens": 21},
	}
	if buffer > 0 {
		cats = append(cats, map[string]any{"name": "Autocompact buffer", "tokens": buffer})
	}
	cats = append(cats, map[string]any{"name": "Free space", "tokens": window - 66146 - buffer})
	f.emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": reqID,
		"response": map[string]any{"model": model, "maxTokens": window, "rawMaxTokens": window, "totalTokens": 66146,
			"autocompactSource": "auto", "categories": cats}}})
}
