package checkpoint

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/runner/runnertest"
)

func record(t *testing.T, files ...string) *Recorder {
	t.Helper()
	r := NewRecorder()
	for _, f := range files {
		for _, ev := range runnertest.Events(t, filepath.Join("testdata", f)) {
			r.Observe(ev)
		}
	}
	return r
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

func TestRecorder(t *testing.T) {
	tests := []struct {
		name      string
		files     []string
		calls     []ToolCall
		failed    []ToolCall
		touched   []string
		lastMsg   string
		tokens    int64
		cost      float64
		callCount int
	}{
		{
			name:  "multiblock then sigint",
			files: []string{"multiblock-then-sigint.jsonl"},
			calls: []ToolCall{
				{Name: "Write", Summary: "/home/dev/project/a.txt"},
				{Name: "Bash", Summary: "cat a.txt"},
				{Name: "Bash", Summary: "sleep 30; echo slept > b.txt", Interrupted: true},
			},
			touched:   []string{"/home/dev/project/a.txt"},
			lastMsg:   "I will write a file.",
			tokens:    52_610,
			cost:      0.063375,
			callCount: 3,
		},
		{
			name:  "interrupt then follow-up: one session, cumulative totals",
			files: []string{"interrupt-then-followup.jsonl"},
			calls: []ToolCall{
				{Name: "Bash", Summary: "echo one > one.txt"},
				{Name: "Bash", Summary: "sleep 20; echo two > two.txt", Interrupted: true},
				{Name: "Write", Summary: "/home/dev/project/HANDOFF.md"},
			},
			touched:   []string{"/home/dev/project/HANDOFF.md"},
			lastMsg:   "Handoff written.",
			tokens:    226_260,
			cost:      0.0879,
			callCount: 3,
		},
		{
			name:      "synthetic message is not the agent's",
			files:     []string{"prompt-too-long.jsonl"},
			calls:     []ToolCall{{Name: "Bash", Summary: "echo one > one.txt"}},
			tokens:    152_080,
			cost:      0.052199999999999996,
			callCount: 1,
		},
		{
			name:  "two sessions add up",
			files: []string{"multiblock-then-sigint.jsonl", "interrupt-then-followup.jsonl"},
			calls: []ToolCall{
				{Name: "Write", Summary: "/home/dev/project/a.txt"},
				{Name: "Bash", Summary: "cat a.txt"},
				{Name: "Bash", Summary: "sleep 30; echo slept > b.txt", Interrupted: true},
				{Name: "Bash", Summary: "echo one > one.txt"},
				{Name: "Bash", Summary: "sleep 20; echo two > two.txt", Interrupted: true},
				{Name: "Write", Summary: "/home/dev/project/HANDOFF.md"},
			},
			touched:   []string{"/home/dev/project/a.txt", "/home/dev/project/HANDOFF.md"},
			lastMsg:   "Handoff written.",
			tokens:    52_610 + 226_260,
			cost:      0.063375 + 0.0879,
			callCount: 6,
		},
		{
			name:  "typical session",
			files: []string{"typical-session.jsonl"},
			calls: []ToolCall{
				{Name: "Read", Summary: "/home/dev/project/parser/parser.go"},
				{Name: "Edit", Summary: "/home/dev/project/parser/parser.go"},
				{Name: "Task", Summary: "write fixtures"},
				{Name: "Bash", Summary: "go test ./parser/...", Failed: true, Error: typicalErr},
				{Name: "Bash", Summary: "grep -n bindingPower parser/*.go …", Interrupted: true},
			},
			failed: []ToolCall{{Name: "Bash", Summary: "go test ./parser/...", Failed: true, Error: typicalErr}},
			touched: []string{"/home/dev/project/parser/parser.go",
				"/home/dev/project/parser/testdata/expr.txt"},
			lastMsg:   "The precedence test fails: `*` binds looser than `+`.\n\nNext: fix the binding powers in `parser.go`, then rerun the tests.",
			tokens:    557_450,
			cost:      0.5432,
			callCount: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Build(Input{RunID: "r", PhaseID: "1"}, record(t, tt.files...))
			c.ToolCalls, c.FailedCommands = withoutIDs(c.ToolCalls), withoutIDs(c.FailedCommands)
			if !reflect.DeepEqual(c.ToolCalls, tt.calls) {
				t.Errorf("tool calls\n got %+v\nwant %+v", c.ToolCalls, tt.calls)
			}
			if !reflect.DeepEqual(c.FailedCommands, tt.failed) {
				t.Errorf("failed\n got %+v\nwant %+v", c.FailedCommands, tt.failed)
			}
			if !reflect.DeepEqual(c.FilesTouched, tt.touched) {
				t.Errorf("files touched %q, want %q", c.FilesTouched, tt.touched)
			}
			if c.LastMessage != tt.lastMsg {
				t.Errorf("last message %q, want %q", c.LastMessage, tt.lastMsg)
			}
			if c.TokensSoFar != tt.tokens || c.CostSoFar != tt.cost || c.ToolCallCount != tt.callCount {
				t.Errorf("tokens %d cost %v calls %d, want %d %v %d",
					c.TokensSoFar, c.CostSoFar, c.ToolCallCount, tt.tokens, tt.cost, tt.callCount)
			}
		})
	}
}

// withoutIDs drops the tool_use ids the tables do not spell out.
func withoutIDs(calls []ToolCall) []ToolCall {
	for i := range calls {
		calls[i].ID = ""
	}
	return calls
}

const typicalErr = "--- FAIL: TestPrecedence (0.00s)\n    parser_test.go:41: Parse(\"1+2*3\") = ((1+2)*3), want (1+(2*3))\nFAIL\nFAIL\tgithub.com/acme/calc/parser\t0.004s\nExit code 1"

func TestInputTotalsWin(t *testing.T) {
	r := record(t, "multiblock-then-sigint.jsonl")
	c := Build(Input{TokensSoFar: 9, CostSoFar: 1.5}, r)
	if c.TokensSoFar != 9 || c.CostSoFar != 1.5 {
		t.Errorf("tokens %d cost %v, want the input's 9 and 1.5", c.TokensSoFar, c.CostSoFar)
	}
	if c.Kind != KindRestart {
		t.Errorf("kind %q, want the default %q", c.Kind, KindRestart)
	}
}

func typicalInput() Input {
	return Input{
		RunID:      "20261121-221300",
		PhaseID:    "2",
		PhaseTitle: "Expression parser",
		PhaseFile:  "plans/02-parser.md",
		Kind:       KindRestart,
		Restart:    1,
		RestartsOf: 3,
		Reason:     "context 83 % of 200K ≥ 80 %",
		Commit:     "4f1c2a9be07d53e8a1c6f0e2b9d4a7c35e81f602",
		Files: []FileChange{
			{Status: "M", Path: "parser/parser.go"},
			{Status: "A", Path: "parser/parser_test.go"},
		},
		Tasks: []Task{
			{Text: "Write the lexer", Done: true, Line: 12},
			{Text: "Parse binary expressions with precedence", Line: 13},
			{Text: "Add `calc` command", Line: 14},
		},
		Progress: []string{"lexer done, 14 tests pass", "parser skeleton in place; precedence next"},
	}
}

func TestMarkdownTypicalRestart(t *testing.T) {
	c := Build(typicalInput(), record(t, "typical-session.jsonl"))
	checkGolden(t, "typical-restart.md", c.Markdown())
}

func TestMarkdownResumeWithoutEvents(t *testing.T) {
	in := typicalInput()
	in.Kind = KindResume
	in.Reason = "interrupted by SIGINT"
	in.Commit = ""
	in.TokensSoFar = 1_234_567
	in.CostSoFar = 4.2
	checkGolden(t, "resume-no-events.md", Build(in, nil).Markdown())
}

func TestMarkdownRetry(t *testing.T) {
	in := Input{RunID: "r1", PhaseID: "3", Kind: KindRetry, Reason: "gate `go test ./...` failed"}
	checkGolden(t, "retry-minimal.md", Build(in, NewRecorder()).Markdown())
}

// hugeRecorder simulates a long phase: hundreds of calls, files and
// failures, and a very long last message.
func hugeRecorder() *Recorder {
	r := NewRecorder()
	r.Observe(runner.Event{Kind: runner.KindInit, Init: &runner.Init{SessionID: "huge"}})
	for i := range 600 {
		id := fmt.Sprintf("toolu_%d", i)
		var tu runner.ToolUse
		switch i % 3 {
		case 0:
			tu = runner.ToolUse{ID: id, Name: "Bash", Command: fmt.Sprintf("go test ./pkg%d/... %s", i, strings.Repeat("-run X ", 40))}
		case 1:
			tu = runner.ToolUse{ID: id, Name: "Write", FilePath: fmt.Sprintf("/home/dev/project/gen/file%03d.go", i)}
		default:
			tu = runner.ToolUse{ID: id, Name: "Grep", Input: json.RawMessage(fmt.Sprintf(`{"pattern":"func Test%d"}`, i))}
		}
		r.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{
			MessageID: fmt.Sprintf("msg_%d", i), Text: fmt.Sprintf("step %d", i), ToolUses: []runner.ToolUse{tu}}})
		tr := runner.ToolResult{ToolUseID: id, Content: "ok", ContentLen: 2}
		if tu.Name == "Write" {
			tr.FilePath = tu.FilePath
		}
		if tu.Name == "Bash" && i%2 == 0 {
			long := strings.Repeat(fmt.Sprintf("pkg%d: error line\n", i), 200)
			tr = runner.ToolResult{ToolUseID: id, IsError: true, Content: long, ContentLen: len(long) * 3}
		}
		r.Observe(runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{tr}})
	}
	var msg strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&msg, "Line %d of a very long final message.\n", i)
	}
	r.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "msg_last", Text: msg.String()}})
	r.Observe(runner.Event{Kind: runner.KindResult, Result: &runner.Result{SessionID: "huge", CostUSD: 87.654,
		ModelUsage: map[string]runner.ModelUsage{"m": {InputTokens: 40_000_000, CacheReadInputTokens: 2_500_000}}}})
	return r
}

func hugeInput() Input {
	in := typicalInput()
	in.Restart, in.RestartsOf = 7, 10
	in.PhaseTitle = "A title\nwith a newline"
	in.Files = nil
	// Git knows only half the files the stream wrote.
	for i := 1; i < 600; i += 6 {
		in.Files = append(in.Files, FileChange{Status: "A", Path: fmt.Sprintf("gen/file%03d.go", i)})
	}
	for i := range 250 {
		in.Files = append(in.Files, FileChange{Status: "M", Path: fmt.Sprintf("internal/pkg%d/impl.go", i)})
	}
	in.Tasks = nil
	for i := range 130 {
		in.Tasks = append(in.Tasks, Task{Text: fmt.Sprintf("Task %d %s", i, strings.Repeat("word ", 100)), Done: i%3 == 0, Line: 10 + i})
	}
	in.Progress = nil
	for i := range 60 {
		in.Progress = append(in.Progress, fmt.Sprintf("note %d", i))
	}
	return in
}

func TestMarkdownHuge(t *testing.T) {
	c := Build(hugeInput(), hugeRecorder())
	if c.ToolCallCount != 600 || len(c.ToolCalls) != keepCalls || c.FailedCount != 100 || len(c.FailedCommands) != keepFailed {
		t.Errorf("recorder bounds: count %d kept %d, failed %d kept %d", c.ToolCallCount, len(c.ToolCalls), c.FailedCount, len(c.FailedCommands))
	}
	md := c.Markdown()
	if len(md) > 32_000 {
		t.Errorf("markdown is %d bytes, want ≤ 32000", len(md))
	}
	checkGolden(t, "huge-restart.md", md)
}

func TestPrompt(t *testing.T) {
	c := Build(Input{RunID: "r", PhaseID: "1", Restart: 1, RestartsOf: 2, Reason: "tool calls 100 ≥ 100"}, nil)
	got := c.Prompt("Do phase 1.\n")
	want := strings.TrimSuffix(c.Markdown(), "\n") + "\n\n---\n\nDo phase 1.\n"
	if got != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasSuffix(c.Markdown(), ".\n") || strings.HasSuffix(c.Markdown(), "\n\n") {
		t.Errorf("markdown should end with exactly one newline")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    Checkpoint
	}{
		{name: "typical", c: Build(typicalInput(), record(t, "typical-session.jsonl"))},
		{name: "huge", c: Build(hugeInput(), hugeRecorder())},
		{name: "resume without events", c: Build(Input{RunID: "r", PhaseID: "1", Kind: KindResume}, nil)},
		{name: "handoff", c: Build(Input{RunID: "r", PhaseID: "1", Handoff: "see `gone.go`", HandoffPath: "/h.md",
			Avoid: []string{"Bash {}"}, Exists: func(string) bool { return false }}, nil)},
		{name: "no handoff", c: Build(Input{RunID: "r", PhaseID: "1", NoHandoff: "none within 2 tool calls"}, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.c)
			if err != nil {
				t.Fatal(err)
			}
			var back Checkpoint
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.c) {
				t.Errorf("round trip changed the checkpoint:\n got %+v\nwant %+v", back, tt.c)
			}
			if back.Markdown() != tt.c.Markdown() {
				t.Error("round trip changed the markdown")
			}
		})
	}
	// The keys are snake_case: other tools read the saved JSON.
	data, _ := json.Marshal(Build(typicalInput(), record(t, "typical-session.jsonl")))
	for _, key := range []string{`"run_id"`, `"phase_id"`, `"max_restarts"`, `"tool_calls"`, `"failed_commands"`,
		`"last_message"`, `"files_touched"`, `"tokens_so_far"`, `"cost_so_far_usd"`, `"status"`, `"done"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s: %s", key, data)
		}
	}
}

func TestCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"go test ./...", "`go test ./...`"},
		{"echo `date`", "`` echo `date` ``"},
		{"a ``b`` c", "```a ``b`` c```"},
		{"two\nlines", "`two lines`"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := code(tt.in); got != tt.want {
				t.Errorf("code(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// debussy's own refusal of a tool (the handoff stage, a budget) shows in
// the stream as a failed call whose output is debussy's message; the
// checkpoint lists it as refused, with the reason, never as a failure to
// investigate. A real failure beside it stays one.
func TestRefusedByDebussy(t *testing.T) {
	r := NewRecorder()
	call := func(id, cmd string, isError bool, out string) {
		r.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m" + id,
			ToolUses: []runner.ToolUse{{ID: id, Name: "Bash", Command: cmd}}}})
		r.Observe(runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{{ToolUseID: id, IsError: isError, Content: out, ContentLen: len(out)}}})
	}
	call("t1", "go build ./...", true, "wc/wc.go:3:1: syntax error")
	call("t2", "go test ./wc/", true, "debussy: context 83 % of 200K ≥ 80 %. Write your handoff NOW to `/r/.debussy/handoff-1.md` (the Write tool, that exact absolute path); every other tool is refused until you have.\n\n"+HandoffTemplate())
	call("t3", "rg TODO", true, "debussy (phase budget): exploration is refused at 90 % of the budget. Finish your task.")
	in := Input{RunID: "r1", PhaseID: "1", Kind: KindRestart, Reason: "context 83 % of 200K ≥ 80 %",
		Refused: map[string]string{"t2": "handoff", "t3": "budget", "t9": "handoff"}}
	c := Build(in, r)
	if c.FailedCount != 1 || len(c.FailedCommands) != 1 || c.FailedCommands[0].Summary != "go build ./..." {
		t.Errorf("failed: %d %+v, want only go build", c.FailedCount, c.FailedCommands)
	}
	md := c.Markdown()
	for _, want := range []string{
		"- Bash `go test ./wc/` — refused by debussy (handoff requested: context 83 % of 200K ≥ 80 %); it did not run\n",
		"- Bash `rg TODO` — refused by debussy (budget: exploration is refused at 90 % of the budget); it did not run\n",
		"Bash `go build ./...` failed:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"`go test ./wc/` failed", "`rg TODO` failed", "Write your handoff NOW"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("markdown has %q:\n%s", unwanted, md)
		}
	}
	checkGolden(t, "refused-by-debussy.md", md)

	// Only refusals: no failed-commands section, no advice to investigate.
	r = NewRecorder()
	call("t2", "go test ./wc/", true, "debussy: context 83 % of 200K ≥ 80 %. Write your handoff NOW.")
	md = Build(Input{RunID: "r1", PhaseID: "1", Refused: map[string]string{"t2": "handoff"}}, r).Markdown()
	if strings.Contains(md, "Failed commands") || strings.Contains(md, "Find out why") {
		t.Errorf("a refusal alone reads as a failure:\n%s", md)
	}
}

// The CLI writes each text block of a message as its own event: a token
// the agent's text splits across two blocks is judged whole (issue 53).
func TestRecorderTokenAcrossBlocks(t *testing.T) {
	tok := "ghp_" + "Zt4Hw8NcY1bELm3Pq6Rs0Vu2Jd5Kf1Gh8Wy4"
	r := NewRecorder()
	for _, text := range []string{"Set the deploy token to " + tok[:15], tok[15:] + " and restart."} {
		r.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "msg_1", Text: text}})
	}
	c := Build(Input{RunID: "r1", PhaseID: "1", Kind: KindRestart}, r)
	for _, piece := range []string{tok[:15], tok[15:]} {
		if strings.Contains(c.LastMessage, piece) || strings.Contains(c.Markdown(), piece) {
			t.Errorf("a piece of the split token survives: %q", c.LastMessage)
		}
	}
	if !strings.Contains(c.LastMessage, "and restart.") {
		t.Errorf("the message lost its text: %q", c.LastMessage)
	}
}
