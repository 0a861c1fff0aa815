// Package fakeclaude is a stand-in for the claude CLI in unit tests: a test
// binary re-executes itself as claude (the TestHelperProcess pattern,
// dispatched from TestMain so the runner's real argv reaches the fake
// unchanged). FAKE_CLAUDE selects a scenario; the fake appends what it
// does and receives to FAKE_CLAUDE_JOURNAL so tests can check the order of
// events on both sides of the pipe. The end-to-end tests use the real CLI.
package fakeclaude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type stdinMsg struct {
	kind  string // "user", "interrupt", "initialize", "answer", "eof"
	text  string // user: the message; answer: the hook output JSON
	reqID string
}

type fake struct {
	journal *os.File
	in      chan stdinMsg
	eof     bool // stdin has ended
	hooks   bool // serve the initialize request and hook callbacks, like the real CLI
	hookN   int
}

func (f *fake) logf(format string, args ...any) {
	if f.journal != nil {
		fmt.Fprintf(f.journal, format+"\n", args...)
	}
}

func (f *fake) emit(line string) {
	os.Stdout.WriteString(line + "\n")
	var probe struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal([]byte(line), &probe) != nil {
		f.logf("emit garbage")
		return
	}
	for _, c := range probe.Message.Content {
		switch c.Type {
		case "tool_use":
			f.logf("emit tool_use %s", c.ID)
		case "tool_result":
			f.logf("emit tool_result %s", c.ToolUseID)
		}
	}
	if probe.Type == "result" || probe.Type == "control_response" {
		f.logf("emit %s", probe.Type)
	}
}

func (f *fake) readStdin() {
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
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
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			}
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				f.logf("recv garbage %q", line)
			} else if msg.Type == "control_request" && msg.Request.Subtype == "interrupt" {
				f.in <- stdinMsg{kind: "interrupt", reqID: msg.RequestID}
			} else if msg.Type == "control_request" && msg.Request.Subtype == "get_context_usage" {
				answerContextUsage(msg.RequestID)
			} else if msg.Type == "control_request" && msg.Request.Subtype == "initialize" && f.hooks {
				f.in <- stdinMsg{kind: "initialize", reqID: msg.RequestID}
			} else if msg.Type == "control_response" && f.hooks {
				f.in <- stdinMsg{kind: "answer", reqID: msg.Response.RequestID, text: string(msg.Response.Response)}
			} else if msg.Type == "user" {
				f.in <- stdinMsg{kind: "user", text: msg.Message.Content}
			} else {
				f.logf("recv unexpected %s", line)
			}
		}
		if err != nil {
			f.in <- stdinMsg{kind: "eof"}
			close(f.in)
			return
		}
	}
}

// awaitUser waits for the next user message; an interrupt while idle is
// only acknowledged. It reports false at the end of stdin.
func (f *fake) awaitUser() (string, bool) {
	if f.eof {
		return "", false
	}
	for msg := range f.in {
		switch msg.kind {
		case "user":
			f.logf("recv user %s", msg.text)
			return msg.text, true
		case "initialize":
			f.logf("recv initialize")
			if os.Getenv("FAKE_CLAUDE_INIT") == "refuse" {
				f.emit(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"error","request_id":%q,"error":"no hooks here"}}`, msg.reqID))
			} else {
				f.emit(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"commands":[]}}}`, msg.reqID))
			}
		case "interrupt":
			f.logf("recv interrupt %s idle", msg.reqID)
			f.emit(controlResponse(msg.reqID))
		case "eof":
			f.logf("recv eof")
			f.eof = true
			return "", false
		}
	}
	return "", false
}

// pollInterrupt returns a pending interrupt's request id, if any.
func (f *fake) pollInterrupt() (string, bool) {
	select {
	case msg, ok := <-f.in:
		if ok {
			return f.midTurn(msg)
		}
	default:
	}
	return "", false
}

// midTurn takes a message that arrived during a turn: an interrupt's
// request id; the end of stdin or a user message is only noted.
func (f *fake) midTurn(msg stdinMsg) (string, bool) {
	switch msg.kind {
	case "interrupt":
		return msg.reqID, true
	case "eof":
		f.logf("recv eof")
		f.eof = true
	case "user":
		f.logf("recv user-mid-turn %s", msg.text)
	}
	return "", false
}

func (f *fake) abortTurn(reqID, toolID string) {
	f.emit(controlResponse(reqID))
	if toolID != "" {
		f.emit(toolResultLine(toolID, "The user doesn't want to proceed with this tool use. The tool use was rejected.", true))
	}
	f.emit(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]},"parent_tool_use_id":null,"session_id":"fake"}`)
	f.emit(resultLine("error_during_execution", true, "aborted_tools", ""))
}

// runTool simulates a running tool for d (forever if d is 0) and reports an
// interrupt that arrived meanwhile.
func (f *fake) runTool(id string, d time.Duration) (string, bool) {
	var deadline <-chan time.Time
	if d > 0 {
		deadline = time.After(d)
	}
	for {
		select {
		case <-deadline:
			return "", false
		case msg, ok := <-f.in:
			if !ok {
				f.in = nil // stdin gone: keep running the tool
				continue
			}
			if reqID, ok := f.midTurn(msg); ok {
				f.logf("recv interrupt %s during-tool %s", reqID, id)
				return reqID, true
			}
		}
	}
}

func controlResponse(reqID string) string {
	return fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q}}`, reqID)
}

func initLine() string {
	return `{"type":"system","subtype":"init","cwd":"/home/dev/project","session_id":"fake","tools":["Bash","Write"],"model":"claude-sonnet-4-5","permissionMode":"bypassPermissions","claude_code_version":"2.1.197"}`
}

func toolUseLine(msgID, toolID, command string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":%q}}],"usage":{"input_tokens":1000,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"fake"}`,
		msgID, toolID, command)
}

func textLine(msgID, text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"usage":{"input_tokens":1000,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"fake"}`,
		msgID, b)
}

func toolResultLine(toolID, content string, isError bool) string {
	b, _ := json.Marshal(content)
	return fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%s,"is_error":%t}]},"parent_tool_use_id":null,"session_id":"fake"}`,
		toolID, b, isError)
}

func resultLine(subtype string, isError bool, reason, text string) string {
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"result","subtype":%q,"is_error":%t,"api_error_status":null,"num_turns":2,"duration_ms":10,"result":%s,"session_id":"fake","total_cost_usd":0.01,"usage":{"input_tokens":2000,"output_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":2000,"outputTokens":10,"contextWindow":200000}},"terminal_reason":%q}`,
		subtype, isError, b, reason)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// Main runs the fake in scenario and returns its exit code: a TestMain
// calls it when FAKE_CLAUDE is set.
func Main(scenario string) int {
	f := &fake{in: make(chan stdinMsg, 16)}
	if p := os.Getenv("FAKE_CLAUDE_JOURNAL"); p != "" {
		j, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		f.journal = j
	}
	exitCode := envInt("FAKE_CLAUDE_EXIT", 0)
	f.hooks = scenario == "hooks" || scenario == "probe"
	switch {
	case slices.Contains(os.Args[1:], "--version"):
		fmt.Println("2.1.197 (Claude Code)")
		return 0
	case scenario == "refuse":
		// As claude does as root with --dangerously-skip-permissions.
		fmt.Fprintln(os.Stderr, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
		return 1
	}
	if scenario == "ignore-sigint" {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	}
	if scenario == "env" {
		cwd, _ := os.Getwd()
		f.logf("args %s", strings.Join(os.Args[1:], " "))
		f.logf("cwd %s", cwd)
		for _, kv := range os.Environ() {
			f.logf("env %s", kv)
		}
		scenario = "replay"
	}
	go f.readStdin()
	prompt, ok := f.awaitUser()
	if !ok && scenario == "probe" {
		return 0 // stdin closed without a message, as the real CLI
	}
	if !ok {
		return 3
	}
	_ = prompt

	switch scenario {
	case "replay":
		return f.replay(os.Getenv("FAKE_CLAUDE_FIXTURE"), exitCode)

	case "tool":
		// One Bash tool that runs FAKE_CLAUDE_TOOL_MS (0: until interrupted),
		// then a model round trip, then a second tool, then the answer.
		f.emit(initLine())
		d := time.Duration(envInt("FAKE_CLAUDE_TOOL_MS", 0)) * time.Millisecond
		f.emit(toolUseLine("msg_1", "toolu_A", "go test ./..."))
		if reqID, ok := f.runTool("toolu_A", d); ok {
			f.abortTurn(reqID, "toolu_A")
		} else {
			f.emit(toolResultLine("toolu_A", "ok", false))
			f.logf("thinking")
			if reqID, ok := f.runTool("model", 300*time.Millisecond); ok {
				f.abortTurn(reqID, "")
			} else {
				f.emit(toolUseLine("msg_2", "toolu_B", "echo two"))
				f.emit(toolResultLine("toolu_B", "two", false))
				f.emit(textLine("msg_3", "done"))
				f.emit(resultLine("success", false, "completed", "done"))
			}
		}
		if _, ok := f.awaitUser(); ok {
			f.emit(textLine("msg_4", "more"))
			f.emit(resultLine("success", false, "completed", "more"))
			f.awaitUser()
		}
		return exitCode

	case "hooks":
		// The CLI's side of the hook callbacks: one response with two Bash
		// tools (PreToolUse, run, PostToolUse each), then a text answer and
		// the Stop hook, which a block makes continue once more.
		f.emit(initLine())
		f.emit(toolUseLine("msg_1", "toolu_A", "echo A"))
		f.emit(toolUseLine("msg_1", "toolu_B", "echo B"))
		stopped := false
		for _, id := range []string{"toolu_A", "toolu_B"} {
			pre := f.hook("PreToolUse", fmt.Sprintf(`"tool_name":"Bash","tool_use_id":%q,"tool_input":{"command":"echo %s"}`, id, id))
			var deny struct {
				Out struct {
					Reason string `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			_ = json.Unmarshal([]byte(pre), &deny)
			if deny.Out.Reason != "" {
				f.logf("tool %s denied", id)
				f.emit(toolResultLine(id, deny.Out.Reason, true))
				continue
			}
			f.logf("run %s", id)
			time.Sleep(time.Duration(envInt("FAKE_CLAUDE_TOOL_MS", 0)) * time.Millisecond)
			post := f.hook("PostToolUse", fmt.Sprintf(`"tool_name":"Bash","tool_use_id":%q,"tool_input":{"command":"echo %s"},"tool_response":{"stdout":"%s","stderr":""}`, id, id, id))
			if strings.Contains(post, `"continue":false`) {
				stopped = true
			}
			f.emit(toolResultLine(id, id, false))
		}
		if stopped {
			f.logf("hook stopped")
			f.emit(resultLine("success", false, "hook_stopped", ""))
		} else {
			f.emit(textLine("msg_2", "done"))
			for active := false; ; active = true {
				ans := f.hook("Stop", fmt.Sprintf(`"stop_hook_active":%t`, active))
				if !strings.Contains(ans, `"decision":"block"`) || active {
					break
				}
				f.emit(textLine("msg_3", "continued"))
			}
			f.emit(resultLine("success", false, "completed", "done"))
		}
		f.awaitUser()
		return exitCode

	case "hang", "ignore-sigint":
		f.emit(initLine())
		for range f.in { // read stdin, answer nothing
		}
		time.Sleep(time.Hour) // not select{}: the runtime would report a deadlock and exit

	case "crash":
		f.emit(initLine())
		f.emit(textLine("msg_1", "working"))
		fmt.Fprintln(os.Stderr, "fatal: boom")
		return 3

	case "bigline":
		// One assistant line of FAKE_CLAUDE_BIG_MB MB: a Write whose content
		// is huge, streamed out in chunks.
		f.emit(initLine())
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		fmt.Fprint(w, `{"type":"assistant","message":{"id":"msg_big","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_big","name":"Write","input":{"file_path":"/home/dev/project/big.txt","content":"`)
		chunk := strings.Repeat(`line of code with \"quotes\" and \\ slashes\n`, 1<<14)
		for n := envInt("FAKE_CLAUDE_BIG_MB", 100) << 20; n > 0; n -= len(chunk) {
			w.WriteString(chunk)
		}
		fmt.Fprint(w, `"}}],"usage":{"input_tokens":5,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"fake"}`+"\n")
		w.Flush()
		f.emit(toolResultLine("toolu_big", "File created successfully", false))
		f.emit(resultLine("success", false, "completed", "wrote it"))
		f.awaitUser()
		return exitCode

	case "orphan":
		// A background process in claude's group that holds stdout open and
		// would outlive claude.
		f.emit(initLine())
		cmd := exec.Command("sleep", "300")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		f.logf("orphan %d", cmd.Process.Pid)
		f.emit(resultLine("success", false, "completed", "done"))
		f.awaitUser()
		return exitCode

	case "garbage":
		f.emit(initLine())
		f.emit("this is not json")
		f.emit(`{"type":"assistant","message":{"id":"msg_trunc","content":[{"type":"text","text":"cut her`)
		f.emit(resultLine("success", false, "completed", "done"))
		f.awaitUser()
		return exitCode

	case "flood":
		f.emit(initLine())
		text := strings.Repeat("x", 10<<10)
		for k := range envInt("FAKE_CLAUDE_LINES", 2000) {
			f.emit(textLine(fmt.Sprintf("msg_%d", k), text))
		}
		f.emit(resultLine("success", false, "completed", "done"))
		f.awaitUser()
		return exitCode
	}
	fmt.Fprintf(os.Stderr, "fake claude: unknown scenario %q\n", scenario)
	return 2
}

// replay plays a recorded stream. Before a control_response line it waits
// for the interrupt that caused it; after a result it waits for the next
// user message (replaying the next turn, or the file again) or the end of
// stdin. An unexpected interrupt aborts the turn like the real CLI.
func (f *fake) replay(name string, exitCode int) int {
	data, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	delay := time.Duration(envInt("FAKE_CLAUDE_DELAY_MS", 0)) * time.Millisecond
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		var probe struct{ Type string }
		_ = json.Unmarshal([]byte(line), &probe)
		if probe.Type == "control_response" {
			msg, ok := <-f.in
			for ok && msg.kind != "interrupt" {
				msg, ok = <-f.in
			}
			f.logf("recv interrupt %s expected", msg.reqID)
			line = controlResponse(msg.reqID)
		} else if reqID, ok := f.pollInterrupt(); ok {
			f.logf("recv interrupt %s mid-turn", reqID)
			f.abortTurn(reqID, "")
			probe.Type = "result"
			i = len(lines) - 1
			line = ""
		}
		if line != "" {
			f.emit(line)
		}
		if probe.Type == "result" {
			if _, ok := f.awaitUser(); !ok {
				return exitCode
			}
			if i == len(lines)-1 {
				i = -1
			}
		}
		if delay > 0 {
			time.Sleep(delay)
		}
	}
	// A stream without a final result (killed while retrying): go quiet.
	f.awaitUser()
	time.Sleep(time.Hour)
	return exitCode
}

// hook asks the runner at a hook, as the CLI does, and waits for the answer
// (at most 30 s); it returns the hook output JSON and journals it.
func (f *fake) hook(event, fields string) string {
	f.hookN++
	reqID := fmt.Sprintf("hook_%d", f.hookN)
	if fields != "" {
		fields = "," + fields
	}
	f.emit(fmt.Sprintf(`{"type":"control_request","request_id":%q,"request":{"subtype":"hook_callback","callback_id":"x","input":{"session_id":"fake","hook_event_name":%q%s}}}`,
		reqID, event, fields))
	deadline := time.After(30 * time.Second)
	for {
		select {
		case msg, ok := <-f.in:
			if !ok {
				f.logf("no answer %s: stdin closed", event)
				return ""
			}
			switch msg.kind {
			case "answer":
				if msg.reqID == reqID {
					f.logf("answer %s %s", event, msg.text)
					return msg.text
				}
				f.logf("answer to unknown request %s", msg.reqID)
			case "eof":
				f.logf("recv eof")
				f.eof = true
			default:
				f.logf("recv %s during hook %s", msg.kind, event)
			}
		case <-deadline:
			f.logf("no answer %s", event)
			return ""
		}
	}
}

// answerContextUsage answers get_context_usage from the stdin reader, as the
// real CLI does whatever the turn is doing (FAKE_CLAUDE_CTX: "answer" like
// 2.1.330 with sonnet-4-6, "refuse" with an error, unset never, so the
// streams and journals of the other tests stay as they were).
func answerContextUsage(reqID string) {
	switch os.Getenv("FAKE_CLAUDE_CTX") {
	case "":
	case "refuse":
		os.Stdout.WriteString(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"error","request_id":%q,"error":"Unknown subtype"}}`, reqID) + "\n")
	case "answer":
		os.Stdout.WriteString(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"categories":[{"id":"system_prompt","name":"System prompt","tokens":7435,"kind":"used"},{"id":"autocompact_buffer","name":"Autocompact buffer","tokens":33000,"kind":"buffer"},{"id":"free_space","name":"Free space","tokens":159565,"kind":"free"}],"totalTokens":7435,"maxTokens":200000,"rawMaxTokens":200000,"percentage":4,"autocompactSource":"model-default","model":"claude-sonnet-4-5","autoCompactThreshold":167000,"isAutoCompactEnabled":true}}}`, reqID) + "\n")
	}
}
