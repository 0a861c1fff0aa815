package orchestrator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// The fake claude is this test binary re-executed as config.ClaudeBin (the
// TestHelperProcess pattern of cli/cli, dispatched from TestMain so the
// runner's real argv reaches it unchanged), so the real runner drives it.
// FAKE_CLAUDE_SCRIPT names a JSON script: for each phase id, one list of
// steps per session. Each process plays the next session of its phase
// (DEBUSSY_PHASE_ID; a counter file beside the script) and saves the prompt
// it was given for the test to read.
const scriptEnv = "FAKE_CLAUDE_SCRIPT"

func TestMain(m *testing.M) {
	if script := os.Getenv(scriptEnv); script != "" {
		os.Exit(fakeClaude(script))
	}
	os.Exit(m.Run())
}

// script maps a phase id to its sessions, each a list of steps:
//
//	usage N          an assistant message whose context is N tokens
//	write PATH       a Write tool that really writes PATH in the work tree
//	writeas PATH T   the same, writing the line T
//	touch NAME       leave a mark NAME beside the script
//	await NAME       wait (30 s at most, then crash) for the mark NAME
//	marktool NAME    a Bash tool that leaves the mark NAME when it runs: after
//	                 debussy answered its PreToolUse, so after debussy saw
//	                 every earlier step (a touch is only written)
//	done [STATUS R]  `debussy done`: writes the signal the way the command does
//	progress MSG     `debussy progress`
//	result           the turn's successful result
//	error TEXT       a result with is_error (e.g. "Prompt is too long")
//	api STATUS       API retries, then an error result with that status
//	max_turns        the turn limit's result
//	compact          the CLI reports it is compacting
//	crash            exit 3 without a result
//	hang             go silent and ignore stdin (for the idle timeout)
//	block            a tool that runs until it is interrupted
//	stubborn         a tool that ignores interrupts (for kills)
//	bad-signal       a done signal that is not JSON
//	ledger-dir       make state.json a directory, so the ledger cannot be saved
//	read PATH        a Read tool (PATH relative to the work tree)
//	echo TEXT        a Bash tool `echo TEXT` whose output is TEXT
//	handoff TEXT     a Write of TEXT to the handoff path debussy named
//	precompact       the CLI asks (PreCompact) before compacting
//	ctx MODEL WINDOW BUFFER  how the session answers get_context_usage
//	                 (default: claude-sonnet-4-5 200000 0, as 2.1.197 does);
//	                 "ctx refuse" answers with an error. Read before the prompt.
//
// When debussy registered hook callbacks (initialize), every tool step
// asks PreToolUse first (a deny skips the tool) and PostToolUse after it
// (continue:false ends the session with terminal_reason hook_stopped), and
// `result` asks Stop first: a block continues with the next steps, or, when
// none are left, stops again with stop_hook_active. Every answer is logged
// to hooksPath for the test to read.
//
// A session whose steps end without a result waits for the interrupt of a
// stop, as the CLI does while the model thinks.
type script map[string][][]string

// writeScript saves s in dir and returns its path.
func writeScript(t *testing.T, dir string, s script) string {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hooksPath is where session n of a phase logs the hook answers it got,
// one line each: "pre TOOL deny: …", "post TOOL note: …", "post TOOL stop: …",
// "stop block: …", "compact block: …".
func hooksPath(scriptPath, phase string, n int) string {
	return fmt.Sprintf("%s.phase-%s.session-%d.hooks", scriptPath, phase, n)
}

// promptPath is where session n (1-based) of a phase saves its prompt.
func promptPath(scriptPath, phase string, n int) string {
	return fmt.Sprintf("%s.phase-%s.session-%d.prompt", scriptPath, phase, n)
}

type fakeCLI struct {
	in     chan fakeInput
	n      int // messages written, for ids
	tokens int // context of the last message
	// input and output are the session's usage so far: the result's
	// modelUsage, cumulative like the CLI's.
	input, output int
	phase         string
	dir           string
	results       int
	// hooks maps a hook event to the callback id debussy registered.
	hooks    map[string]string
	hookN    int
	hookLog  *os.File
	heard    []string // every text debussy sent the agent, in order
	stopped  bool     // a PostToolUse answered continue:false
	stopSeen bool     // a Stop hook was blocked this turn
	// interrupts that came while a hook waited for its answer
	interrupts []string
	ctx        string // the ctx step's argument
}

type fakeInput struct {
	interrupt string          // request id; empty for the end of stdin
	response  json.RawMessage // a control_response's response
	respID    string
}

func fakeClaude(scriptPath string) int {
	data, err := os.ReadFile(scriptPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var s script
	if err := json.Unmarshal(data, &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	phase := os.Getenv(state.EnvPhaseID)
	n := nextSession(scriptPath + ".phase-" + phase + ".count")
	sessions := s[phase]
	if len(sessions) == 0 {
		fmt.Fprintf(os.Stderr, "fake claude: no sessions for phase %q\n", phase)
		return 2
	}
	steps := sessions[min(n, len(sessions))-1]

	cwd, _ := os.Getwd()
	f := &fakeCLI{in: make(chan fakeInput, 8), phase: phase, dir: cwd, ctx: "claude-sonnet-4-5 200000 0"}
	for _, step := range steps {
		if arg, ok := strings.CutPrefix(step, "ctx "); ok {
			f.ctx = arg
		}
	}
	prompt, ok := f.readPrompt()
	if !ok {
		return 3
	}
	if f.hookLog, err = os.Create(hooksPath(scriptPath, phase, n)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := os.WriteFile(promptPath(scriptPath, phase, n), []byte(prompt), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	go f.readControl()
	f.emit(map[string]any{"type": "system", "subtype": "init", "model": "claude-sonnet-4-5",
		"claude_code_version": "2.1.197", "session_id": "fake", "cwd": cwd})
	for i, step := range steps {
		if f.stopped || f.results > 0 {
			break // the session ended: continue:false, or a result
		}
		if id, ok := f.pollInterrupt(); ok {
			f.abort(id, "")
			return f.finish()
		}
		verb, arg, _ := strings.Cut(step, " ")
		switch verb {
		case "ctx": // answered in readPrompt
		case "usage":
			f.tokens, _ = strconv.Atoi(arg)
			f.assistant(map[string]any{"type": "text", "text": "working"})
		case "write":
			path := filepath.Join(f.dir, arg)
			f.tool("Write", map[string]any{"file_path": path, "content": "written by the fake\n"}, func() (string, error) {
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				return "File created successfully", os.WriteFile(path, []byte("written by the fake\n"), 0o644)
			})
		case "writeas": // writeas PATH TEXT
			rel, text, _ := strings.Cut(arg, " ")
			path := filepath.Join(f.dir, rel)
			f.tool("Write", map[string]any{"file_path": path, "content": text + "\n"}, func() (string, error) {
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				return "File created successfully", os.WriteFile(path, []byte(text+"\n"), 0o644)
			})
		case "touch": // a mark beside the script, for await
			_ = os.WriteFile(scriptPath+".mark-"+arg, nil, 0o644)
			f.assistant(map[string]any{"type": "text", "text": "touched " + arg})
		case "marktool":
			f.tool("Bash", map[string]any{"command": "touch " + arg}, func() (string, error) {
				return "", os.WriteFile(scriptPath+".mark-"+arg, nil, 0o644)
			})
		case "await": // until another session touched the mark: proof they overlap
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(scriptPath + ".mark-" + arg); err == nil {
					break
				}
				if time.Now().After(deadline) {
					fmt.Fprintf(os.Stderr, "fake claude: mark %s never came\n", arg)
					return 3
				}
			}
			f.assistant(map[string]any{"type": "text", "text": "saw " + arg})
		case "handoff":
			path := f.handoffPath()
			text := strings.ReplaceAll(arg, `\n`, "\n")
			f.tool("Write", map[string]any{"file_path": path, "content": text}, func() (string, error) {
				if path == "" {
					return "", fmt.Errorf("no handoff path was named")
				}
				return "File created successfully", os.WriteFile(path, []byte(text), 0o644)
			})
		case "read":
			path := filepath.Join(f.dir, arg)
			f.tool("Read", map[string]any{"file_path": path}, func() (string, error) {
				data, err := os.ReadFile(path)
				return string(data), err
			})
		case "echo":
			f.tool("Bash", map[string]any{"command": "echo " + arg}, func() (string, error) { return arg, nil })
		case "done":
			status, reason, _ := strings.Cut(arg, " ")
			if status == "" {
				status = string(state.StatusCompleted)
			}
			f.tool("Bash", map[string]any{"command": "debussy done --phase " + phase + " --status " + status}, func() (string, error) {
				return "debussy: phase marked " + status, state.New(os.Getenv(state.EnvStateDir)).WriteSignal(os.Getenv(state.EnvRunID),
					state.Signal{Phase: phase, Status: state.Status(status), Reason: reason, At: time.Now()})
			})
		case "progress":
			f.tool("Bash", map[string]any{"command": "debussy progress --phase " + phase + " " + strconv.Quote(arg)}, func() (string, error) {
				return "", state.New(os.Getenv(state.EnvStateDir)).AppendProgress(os.Getenv(state.EnvRunID),
					state.Progress{Phase: phase, Message: arg, At: time.Now()})
			})
		case "bad-signal":
			// What a `debussy done` killed mid-write would leave, were
			// signals not written atomically.
			path := filepath.Join(os.Getenv(state.EnvStateDir), "runs", os.Getenv(state.EnvRunID), "signals", phase+".json")
			f.tool("Bash", map[string]any{"command": "debussy done --phase " + phase}, func() (string, error) {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return "", err
				}
				return "", os.WriteFile(path, []byte(`{"phase":`), 0o644)
			})
		case "ledger-dir":
			ledger := filepath.Join(os.Getenv(state.EnvStateDir), "state.json")
			f.tool("Bash", map[string]any{"command": "rm " + ledger + " && mkdir -p " + ledger + "/x"}, func() (string, error) {
				if err := os.Remove(ledger); err != nil {
					return "", err
				}
				return "", os.MkdirAll(filepath.Join(ledger, "x"), 0o755)
			})
		case "result":
			if f.stopHook(i == len(steps)-1) {
				continue // debussy blocked the stop: the turn goes on
			}
			f.result("success", false, 0, "done")
		case "precompact":
			// Like the real CLI (2.1.197): status "compacting" follows the
			// PreCompact callback whether or not it blocked.
			a, ok := f.hook("PreCompact", map[string]any{"trigger": "auto"})
			f.emit(map[string]any{"type": "system", "subtype": "status", "status": "compacting", "session_id": "fake"})
			if ok && a.Decision == "block" {
				f.logHook("compact block: " + a.Reason)
				continue
			}
			f.emit(map[string]any{"type": "system", "subtype": "compact_boundary", "session_id": "fake",
				"compact_metadata": map[string]any{"trigger": "auto", "pre_tokens": 168000}})
		case "error":
			f.result("success", true, 400, arg)
		case "api":
			status, _ := strconv.Atoi(arg)
			for k := 1; k <= 2; k++ {
				f.emit(map[string]any{"type": "system", "subtype": "api_retry", "attempt": k, "max_retries": 2,
					"retry_delay_ms": 1.5, "error_status": status, "error": "overloaded", "session_id": "fake"})
			}
			f.result("success", true, status, "API Error: Repeated 529 Overloaded errors")
		case "max_turns":
			f.result("error_max_turns", true, 0, "")
		case "compact": // a compaction that happens, no PreCompact asked
			f.emit(map[string]any{"type": "system", "subtype": "status", "status": "compacting", "session_id": "fake"})
			f.emit(map[string]any{"type": "system", "subtype": "compact_boundary", "session_id": "fake",
				"compact_metadata": map[string]any{"trigger": "auto", "pre_tokens": 168000}})
		case "crash":
			fmt.Fprintln(os.Stderr, "fatal: the fake crashed")
			return 3
		case "hang":
			for range f.in { // read stdin, answer nothing
			}
			time.Sleep(time.Hour)
		case "block":
			tool := f.toolUse("Bash", map[string]any{"command": "sleep 1000"})
			for in := range f.in {
				if in.interrupt != "" {
					f.abort(in.interrupt, tool)
					return f.finish()
				}
			}
			return 0
		case "stubborn":
			f.toolUse("Bash", map[string]any{"command": "sleep 1000"})
			for range f.in {
			}
			time.Sleep(time.Hour)
		default:
			fmt.Fprintf(os.Stderr, "fake claude: unknown step %q\n", step)
			return 2
		}
	}
	if f.stopped {
		f.resultWith(map[string]any{"terminal_reason": "hook_stopped"}, "success", false, 0, "")
	}
	if f.results == 0 {
		for in := range f.in {
			if in.interrupt != "" {
				f.abort(in.interrupt, "")
				break
			}
		}
	}
	return f.finish()
}

// nextSession counts the sessions of one phase; they run one at a time.
func nextSession(counter string) int {
	data, _ := os.ReadFile(counter)
	n, _ := strconv.Atoi(string(data))
	n++
	_ = os.WriteFile(counter, []byte(strconv.Itoa(n)), 0o644)
	return n
}

func errText(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

var stdin = bufio.NewReader(os.Stdin)

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
