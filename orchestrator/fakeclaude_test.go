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

	"github.com/debussy-dev/debussy/internal/fakeexe"
	"github.com/debussy-dev/debussy/state"
)

// The fake claude is this test binary re-executed as config.ClaudeBin (the
// TestHelperProcess pattern of cli/cli, dispatched from TestMain so the
// runner's real argv reaches it unchanged), so the real runner drives it.
// FAKE_CLAUDE_SCRIPT names a JSON script: for each phase id, one list of
// steps per session. Each process plays the next session of its phase
// (DEBUSSY_PHASE_ID; a counter file beside the script) and saves the prompt
// it was given for the test to read.
// Under -race the fake is this test package built without it
// (internal/fakeexe).
const scriptEnv = "FAKE_CLAUDE_SCRIPT"

var fake fakeexe.Exe

func TestMain(m *testing.M) {
	if script := os.Getenv(scriptEnv); script != "" {
		os.Exit(fakeClaude(script))
	}
	os.Exit(fake.Run(m))
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
//	settings TEXT    claude says settings are not in effect (TEXT names which)
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
//	agenthandoff T   `debussy handoff`: writes the handoff T and its signal
//	                 the way the command does, for this session
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
		case "agenthandoff":
			text := strings.ReplaceAll(arg, `\n`, "\n")
			f.tool("Bash", map[string]any{"command": "debussy handoff --phase " + phase}, func() (string, error) {
				_, err := state.New(os.Getenv(state.EnvStateDir)).WriteHandoff(os.Getenv(state.EnvRunID),
					state.HandoffSignal{Phase: phase, Session: n, At: time.Now()}, text)
				return "debussy: handoff recorded", err
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
				// debussy may save the ledger meanwhile (its loop records
				// what the session reader decided): a rename landing between
				// the remove and the mkdir puts the file back, so try again.
				var err error
				for range 100 {
					if err = os.Remove(ledger); err != nil && !os.IsNotExist(err) {
						return "", err
					}
					if err = os.MkdirAll(filepath.Join(ledger, "x"), 0o755); err == nil {
						return "", nil
					}
				}
				return "", err
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
		case "settings": // claude's word that settings are not in effect (2.1.330+): arg is its content
			f.emit(map[string]any{"type": "system", "subtype": "informational", "tag": "settings_not_in_effect", "level": "warning",
				"content": arg, "session_id": "fake"})
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
