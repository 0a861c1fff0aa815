package fakeclaude

import (
	"strings"
	"time"
)

// lateWait is how long a hook call waits for its answer before the fake
// writes the assistant line it held back (FAKE_CLAUDE_LATE_MS, 300 ms).
func lateWait() time.Duration {
	return time.Duration(envInt("FAKE_CLAUDE_LATE_MS", 300)) * time.Millisecond
}

// lateLine is an assistant line written after the hook calls of its tool,
// as claude's output may lag its tool executor.
type lateLine struct {
	line string
	sent bool
}

func (f *fake) flush(l *lateLine) {
	if l != nil && !l.sent {
		l.sent = true
		f.emit(l.line)
	}
}

// hooksLate is the "hooks-late" scenario: the assistant line that asks for
// toolu_A (and carries its response's usage) comes after toolu_A's hook
// calls, unless an answer is held up waiting for it. A PostToolUse that
// does not stop the session lets the agent's next response run toolu_C.
func (f *fake) hooksLate(exitCode int) int {
	f.emit(initLine())
	line := &lateLine{line: toolUseLine("msg_1", "toolu_A", "echo A")}
	f.hookLate("PreToolUse", `"tool_name":"Bash","tool_use_id":"toolu_A","tool_input":{"command":"echo A"}`, line)
	f.logf("run toolu_A")
	post := f.hookLate("PostToolUse", `"tool_name":"Bash","tool_use_id":"toolu_A","tool_input":{"command":"echo A"},"tool_response":{"stdout":"A","stderr":""}`, line)
	f.flush(line)
	f.emit(toolResultLine("toolu_A", "A", false))
	if strings.Contains(post, `"continue":false`) {
		f.logf("hook stopped")
		f.emit(resultLine("success", false, "hook_stopped", ""))
	} else {
		f.emit(toolUseLine("msg_2", "toolu_C", "echo C"))
		fields := `"tool_name":"Bash","tool_use_id":"toolu_C","tool_input":{"command":"echo C"}`
		f.hook("PreToolUse", fields)
		f.logf("run toolu_C")
		f.hook("PostToolUse", fields+`,"tool_response":{"stdout":"C","stderr":""}`)
		f.emit(toolResultLine("toolu_C", "C", false))
		f.emit(resultLine("success", false, "completed", "C"))
	}
	f.awaitUser()
	return exitCode
}
