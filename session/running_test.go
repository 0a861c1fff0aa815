package session

import (
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
)

// The live view's running tool: a main-thread tool_use starts it with the
// input's description, the CLI's task_started and tool_progress heartbeat
// (2.1.333 adds a description; synthesised in its shape) rename it, its
// tool_result ends it; a subagent's tool and a heartbeat with a parent
// (a hook's, a subagent's) are not the main thread's.
func TestRunningTool(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	parse := func(line string) runner.Event {
		t.Helper()
		ev, err := runner.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	var r runningTool
	steps := []struct {
		line string
		want string // the description, "" for none in flight
	}{
		{`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make test","description":"run the tests"}}],"usage":{"input_tokens":10}},"parent_tool_use_id":null}`, "run the tests"},
		{`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"s1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10}},"parent_tool_use_id":"t9"}`, "run the tests"},
		{`{"type":"system","subtype":"task_started","task_id":"b1","tool_use_id":"t1","description":"run the whole test suite","task_type":"local_bash"}`, "run the whole test suite"},
		{`{"type":"tool_progress","tool_use_id":"hook-PostToolUse-t1-heartbeat-0","tool_name":"PostToolUse","parent_tool_use_id":"t1","elapsed_time_seconds":3,"heartbeat":true}`, "run the whole test suite"},
		{`{"type":"tool_progress","tool_use_id":"t1","tool_name":"Bash","parent_tool_use_id":null,"elapsed_time_seconds":30,"heartbeat":true,"description":"go test ./... (package 12 of 40)"}`, "go test ./... (package 12 of 40)"},
		{`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},"parent_tool_use_id":null}`, ""},
		{`{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"/r/a.go","content":"x"}}],"usage":{"input_tokens":10}},"parent_tool_use_id":null}`, "/r/a.go"},
	}
	for i, st := range steps {
		r.observe(parse(st.line), t0.Add(time.Duration(i)*time.Second))
		got := ""
		if now := r.now(); now != nil {
			got = now.Description
		}
		if got != st.want {
			t.Errorf("step %d: running %q, want %q", i, got, st.want)
		}
	}
	if now := r.now(); now == nil || now.Tool != "Write" || !now.Since.Equal(t0.Add(6*time.Second)) {
		t.Errorf("the last tool: %+v", now)
	}
}
