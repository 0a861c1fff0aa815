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

// promptPath is where session n (1-based) of a phase saves its prompt.
func promptPath(scriptPath, phase string, n int) string {
	return fmt.Sprintf("%s.phase-%s.session-%d.prompt", scriptPath, phase, n)
}

type fakeCLI struct {
	in      chan fakeInput
	n       int // messages written, for ids
	tokens  int // context of the last message
	phase   string
	dir     string
	results int
}

type fakeInput struct {
	interrupt string // request id; empty for the end of stdin
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
	f := &fakeCLI{in: make(chan fakeInput, 8), phase: phase, dir: cwd}
	prompt, ok := readPrompt()
	if !ok {
		return 3
	}
	if err := os.WriteFile(promptPath(scriptPath, phase, n), []byte(prompt), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	go f.readControl()
	f.emit(map[string]any{"type": "system", "subtype": "init", "model": "claude-sonnet-4-5",
		"claude_code_version": "2.1.197", "session_id": "fake", "cwd": cwd})
	for _, step := range steps {
		if id, ok := f.pollInterrupt(); ok {
			f.abort(id, "")
			return f.finish()
		}
		verb, arg, _ := strings.Cut(step, " ")
		switch verb {
		case "usage":
			f.tokens, _ = strconv.Atoi(arg)
			f.assistant(map[string]any{"type": "text", "text": "working"})
		case "write":
			path := filepath.Join(f.dir, arg)
			id := f.toolUse("Write", map[string]any{"file_path": path, "content": "written by the fake\n"})
			_ = os.MkdirAll(filepath.Dir(path), 0o755)
			err := os.WriteFile(path, []byte("written by the fake\n"), 0o644)
			f.toolResult(id, errText(err, "File created successfully"), err != nil)
		case "done":
			status, reason, _ := strings.Cut(arg, " ")
			if status == "" {
				status = string(state.StatusCompleted)
			}
			id := f.toolUse("Bash", map[string]any{"command": "debussy done --phase " + phase + " --status " + status})
			err := state.New(os.Getenv(state.EnvStateDir)).WriteSignal(os.Getenv(state.EnvRunID),
				state.Signal{Phase: phase, Status: state.Status(status), Reason: reason, At: time.Now()})
			f.toolResult(id, errText(err, "debussy: phase marked "+status), err != nil)
		case "progress":
			id := f.toolUse("Bash", map[string]any{"command": "debussy progress --phase " + phase + " " + strconv.Quote(arg)})
			err := state.New(os.Getenv(state.EnvStateDir)).AppendProgress(os.Getenv(state.EnvRunID),
				state.Progress{Phase: phase, Message: arg, At: time.Now()})
			f.toolResult(id, errText(err, ""), err != nil)
		case "bad-signal":
			// What a `debussy done` killed mid-write would leave, were
			// signals not written atomically.
			path := filepath.Join(os.Getenv(state.EnvStateDir), "runs", os.Getenv(state.EnvRunID), "signals", phase+".json")
			id := f.toolUse("Bash", map[string]any{"command": "debussy done --phase " + phase})
			err := os.MkdirAll(filepath.Dir(path), 0o755)
			if err == nil {
				err = os.WriteFile(path, []byte(`{"phase":`), 0o644)
			}
			f.toolResult(id, errText(err, ""), err != nil)
		case "ledger-dir":
			ledger := filepath.Join(os.Getenv(state.EnvStateDir), "state.json")
			id := f.toolUse("Bash", map[string]any{"command": "rm " + ledger + " && mkdir -p " + ledger + "/x"})
			err := os.Remove(ledger)
			if err == nil {
				err = os.MkdirAll(filepath.Join(ledger, "x"), 0o755)
			}
			f.toolResult(id, errText(err, ""), err != nil)
		case "result":
			f.result("success", false, 0, "done")
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
		case "compact":
			f.emit(map[string]any{"type": "system", "subtype": "status", "status": "compacting", "session_id": "fake"})
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

// readPrompt reads the first user message.
func readPrompt() (string, bool) {
	line, err := stdin.ReadBytes('\n')
	if err != nil {
		return "", false
	}
	var msg struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return "", false
	}
	return msg.Message.Content, true
}

// readControl forwards interrupts and the end of stdin.
func (f *fakeCLI) readControl() {
	defer close(f.in)
	for {
		line, err := stdin.ReadBytes('\n')
		var msg struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(line, &msg) == nil && msg.Type == "control_request" {
			f.in <- fakeInput{interrupt: msg.RequestID}
		}
		if err != nil {
			return
		}
	}
}

func (f *fakeCLI) pollInterrupt() (string, bool) {
	select {
	case in, ok := <-f.in:
		return in.interrupt, ok && in.interrupt != ""
	default:
		return "", false
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
	f.results++
	r := map[string]any{"type": "result", "subtype": subtype, "is_error": isError, "num_turns": 2, "result": text,
		"session_id": "fake", "total_cost_usd": 0.01,
		"usage":      map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
		"modelUsage": map[string]any{"claude-sonnet-4-5": map[string]any{"contextWindow": 200000}}}
	if apiStatus != 0 {
		r["api_error_status"] = apiStatus
	}
	f.emit(r)
}
