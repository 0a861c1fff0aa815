package estimator

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// call is one main-thread tool_use in a nudge scenario; parent marks a
// subagent's, dup repeats the previous call's id (a repeated line).
type call struct {
	tool, in string
	parent   string
	dup      bool
	result   string // the tool's result; "" is the same result every time
	failed   bool   // the result is is_error, in the stream only (no PostToolUse)
	refused  bool   // debussy refused the call (Skip): is_error, not the agent's
	both     bool   // a failure judged at PostToolUse whose is_error result follows
}

func bash(cmd string) call { return call{tool: "Bash", in: fmt.Sprintf(`{"command":%q}`, cmd)} }
func readF(p string) call  { return call{tool: "Read", in: fmt.Sprintf(`{"file_path":%q}`, p)} }
func edit(p string) call {
	return call{tool: "Edit", in: fmt.Sprintf(`{"file_path":%q,"old_string":"a","new_string":"b"}`, p)}
}

func TestNudger(t *testing.T) {
	def := NudgeConfig{Repeat: 3, RepeatWindow: 20, RepeatRestart: 5, ExploreReads: 10, Cooldown: 5}
	repeat := func(c call, n int) []call {
		out := make([]call, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	concat := func(parts ...[]call) []call {
		var out []call
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	doom := func(count int, restart bool) Nudge {
		return Nudge{Kind: NudgeDoomLoop, Tool: "Bash", Args: `{"command":"go test ./..."}`, Count: count, Restart: restart}
	}
	tests := []struct {
		name  string
		cfg   NudgeConfig
		calls []call
		want  map[int][]Nudge // by call index (0-based); others must be empty
	}{
		{
			// 2.1.332's first Bash response carries a bashEditDiff the
			// next ones lack; the output is what the agent sees.
			name: "the CLI's bookkeeping beside the output is not a new result",
			cfg:  NudgeConfig{RepeatWindow: 20, RepeatRestart: 5},
			calls: concat([]call{{tool: "Bash", in: `{"command":"go test ./..."}`,
				result: `{"stdout":"took 451085369ns","stderr":"","interrupted":false,"bashEditDiff":{"files":[],"moreFiles":0,"unavailable":true}}`}},
				repeat(call{tool: "Bash", in: `{"command":"go test ./..."}`, result: `{"stdout":"took 087598657ns","stderr":"","interrupted":false}`}, 4)),
			want: map[int][]Nudge{4: {doom(5, true)}},
		},
		{
			name:  "the third identical call is nudged, the first two are not",
			cfg:   def,
			calls: repeat(bash("go test ./..."), 3),
			want:  map[int][]Nudge{2: {doom(3, false)}},
		},
		{
			name:  "the cooldown holds the 4th back, the restart at 5 is never held back",
			cfg:   def,
			calls: repeat(bash("go test ./..."), 6),
			want:  map[int][]Nudge{2: {doom(3, false)}, 4: {doom(5, true)}},
		},
		{
			name:  "without a cooldown every repeat is nudged",
			cfg:   NudgeConfig{Repeat: 3, RepeatWindow: 20, RepeatRestart: 5},
			calls: repeat(bash("go test ./..."), 4),
			want:  map[int][]Nudge{2: {doom(3, false)}, 3: {doom(4, false)}},
		},
		{
			name: "keys in another order and other whitespace are the same call",
			cfg:  def,
			calls: []call{
				{tool: "Bash", in: `{"command":"go test ./...","timeout":5}`},
				{tool: "Bash", in: `{ "timeout": 5, "command": "go test ./..." }`},
				{tool: "Bash", in: "{\"timeout\":5,\n\"command\":\"go test ./...\"}"},
			},
			want: map[int][]Nudge{2: {{Kind: NudgeDoomLoop, Tool: "Bash", Args: `{"command":"go test ./...","timeout":5}`, Count: 3}}},
		},
		{
			name:  "other arguments are another call",
			cfg:   def,
			calls: []call{bash("go test ./..."), bash("go test ./a"), bash("go test ./..."), bash("go vet ./...")},
		},
		{
			name:  "the same input to another tool is another call",
			cfg:   def,
			calls: []call{bash("x"), {tool: "Read", in: `{"command":"x"}`}, bash("x")},
		},
		{
			name:  "repeats spread beyond the window are no loop",
			cfg:   NudgeConfig{Repeat: 3, RepeatWindow: 4, RepeatRestart: 4},
			calls: []call{bash("go test ./..."), bash("a"), bash("b"), bash("go test ./..."), bash("c"), bash("d"), bash("go test ./...")},
		},
		{
			name:  "subagent calls and repeated lines do not count",
			cfg:   def,
			calls: []call{bash("go test ./..."), {tool: "Bash", in: `{"command":"go test ./..."}`, dup: true}, {tool: "Bash", in: `{"command":"go test ./..."}`, parent: "task1"}, bash("go test ./...")},
		},
		{
			name: "the same call with a changing result is progress, never a loop",
			cfg:  def,
			calls: []call{
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL: TestA"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL: TestB"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL: TestC"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL: TestD"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "ok"},
			},
		},
		{
			name: "timings, PIDs and colours do not make a result new",
			cfg:  def,
			calls: []call{
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "\x1b[31mFAIL\x1b[0m\tx\t0.12s pid 4411"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL\tx\t3.07s pid 4519"},
				{tool: "Bash", in: `{"command":"go test ./..."}`, result: "\x1b[1;31mFAIL\x1b[m\tx\t10.5s pid 7"},
			},
			want: map[int][]Nudge{2: {doom(3, false)}},
		},
		{
			name: "a read repeated between edits gets another result each time",
			cfg:  def,
			calls: []call{
				{tool: "Read", in: `{"file_path":"a.go"}`, result: "package a // first"}, {tool: "Edit", in: `{"file_path":"a.go","old_string":"first","new_string":"second"}`},
				{tool: "Read", in: `{"file_path":"a.go"}`, result: "package a // second"}, {tool: "Edit", in: `{"file_path":"a.go","old_string":"second","new_string":"third"}`},
				{tool: "Read", in: `{"file_path":"a.go"}`, result: "package a // third"}, {tool: "Edit", in: `{"file_path":"a.go","old_string":"third","new_string":"fourth"}`},
				{tool: "Read", in: `{"file_path":"a.go"}`, result: "package a // fourth"},
			},
		},
		{
			name: "a silent successful check after each edit is progress (30 times)",
			cfg:  def,
			calls: concat(func() []call {
				var out []call
				for i := range 30 {
					out = append(out, edit(fmt.Sprintf("f%d.go", i)), bash("go build ./..."))
				}
				return out
			}()),
		},
		{
			name: "a success repeated with nothing written between is a loop; a write elsewhere starts it again",
			cfg:  def,
			calls: []call{bash("go test ./..."), edit("a.go"), bash("go test ./..."), bash("go test ./..."), readF("a.go"),
				bash("go test ./...")},
			want: map[int][]Nudge{5: {doom(3, false)}},
		},
		{
			name: "the same failing test after each edit is a loop: nudged, then restarted",
			cfg:  def,
			calls: concat(func() []call {
				var out []call
				for i := range 5 {
					out = append(out, edit(fmt.Sprintf("f%d.go", i)), call{tool: "Bash", in: `{"command":"go test ./..."}`, result: "Exit code 1\nFAIL x", failed: true})
				}
				return out
			}()),
			want: map[int][]Nudge{5: {doom(3, false)}, 9: {doom(5, true)}},
		},
		{
			name:  "calls debussy refused are not the agent's failures",
			cfg:   def,
			calls: repeat(call{tool: "Bash", in: `{"command":"go test ./..."}`, result: "refused: write your handoff", refused: true}, 6),
		},
		{
			name:  "a failure judged at its hook is not counted again from the stream",
			cfg:   def,
			calls: repeat(call{tool: "Bash", in: `{"command":"go test ./..."}`, result: "FAIL", both: true}, 3),
			want:  map[int][]Nudge{2: {doom(3, false)}},
		},
		{
			name:  "doom loop disabled",
			cfg:   NudgeConfig{RepeatWindow: 20},
			calls: repeat(bash("go test ./..."), 8),
		},
		{
			name:  "restarts only",
			cfg:   NudgeConfig{RepeatWindow: 20, RepeatRestart: 2},
			calls: repeat(bash("go test ./..."), 3),
			want:  map[int][]Nudge{1: {doom(2, true)}},
		},
		{
			name:  "arguments are bounded",
			cfg:   def,
			calls: repeat(call{tool: "Write", in: fmt.Sprintf(`{"content":%q,"file_path":"/a"}`, strings.Repeat("x", 500))}, 3),
			want:  map[int][]Nudge{2: {{Kind: NudgeDoomLoop, Tool: "Write", Args: `{"content":"` + strings.Repeat("x", 107) + "…", Count: 3}}},
		},
		{
			name:  "a call without its input (too large to keep) is never identical",
			cfg:   def,
			calls: []call{{tool: "Write"}, {tool: "Write"}, {tool: "Write"}},
		},
		{
			name:  "exploration: the 10th read without an edit",
			cfg:   def,
			calls: concat(repeatReads(9), []call{bash("git log --oneline | head")}),
			want:  map[int][]Nudge{9: {{Kind: NudgeExploration, Tool: "Bash", Args: `{"command":"git log --oneline | head"}`, Count: 10}}},
		},
		{
			name:  "exploration: an edit resets the count; other tools do not",
			cfg:   NudgeConfig{ExploreReads: 3},
			calls: []call{readF("a"), readF("b"), edit("a"), readF("c"), {tool: "TodoWrite", in: `{}`}, readF("d"), readF("e")},
			want:  map[int][]Nudge{6: {{Kind: NudgeExploration, Tool: "Read", Args: `{"file_path":"e"}`, Count: 3}}},
		},
		{
			name:  "exploration: a writing Bash is an edit",
			cfg:   NudgeConfig{ExploreReads: 3},
			calls: []call{readF("a"), readF("b"), bash("go generate ./..."), readF("c"), readF("d")},
		},
		{
			name:  "exploration: cooldown, then the count goes on",
			cfg:   NudgeConfig{ExploreReads: 3, Cooldown: 2},
			calls: repeatReads(7),
			want: map[int][]Nudge{
				2: {{Kind: NudgeExploration, Tool: "Read", Args: `{"file_path":"f2"}`, Count: 3}},
				5: {{Kind: NudgeExploration, Tool: "Read", Args: `{"file_path":"f5"}`, Count: 6}},
			},
		},
		{
			name:  "both kinds from one call, each with its own cooldown",
			cfg:   NudgeConfig{Repeat: 2, RepeatWindow: 10, ExploreReads: 2, Cooldown: 5},
			calls: []call{readF("a"), readF("a")},
			want: map[int][]Nudge{1: {
				{Kind: NudgeDoomLoop, Tool: "Read", Args: `{"file_path":"a"}`, Count: 2},
				{Kind: NudgeExploration, Tool: "Read", Args: `{"file_path":"a"}`, Count: 2},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := NewNudger(tt.cfg)
			id := 0
			for i, c := range tt.calls {
				if !c.dup {
					id++
				}
				tu := runner.ToolUse{ID: fmt.Sprintf("toolu_%d", id), Name: c.tool}
				if c.in != "" {
					tu.Input = input(c.in)
				}
				got := n.Observe(useEv(c.parent, tu))
				failure := runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{
					{ToolUseID: tu.ID, ParentToolUseID: c.parent, Content: c.result, IsError: true}}}
				switch {
				case c.dup:
				case c.refused:
					n.Skip(tu.ID)
					got = append(got, n.Observe(failure)...)
				case c.failed:
					got = append(got, n.Observe(failure)...)
				default:
					if nd, ok := n.ObserveResult(tu.Name, tu.ID, tu.Input, c.result); ok {
						got = append([]Nudge{nd}, got...)
					}
					if c.both {
						got = append(got, n.Observe(failure)...)
					}
				}
				if want := tt.want[i]; !reflect.DeepEqual(got, want) {
					t.Errorf("call %d (%s %s): nudges %+v, want %+v", i, c.tool, c.in, got, want)
				}
			}
		})
	}
}

func repeatReads(n int) []call {
	out := make([]call, n)
	for i := range out {
		out[i] = readF(fmt.Sprintf("f%d", i))
	}
	return out
}

func TestNudgerIgnoresOtherEvents(t *testing.T) {
	n := NewNudger(NudgeConfig{Repeat: 2, RepeatWindow: 5, ExploreReads: 1})
	for _, ev := range []runner.Event{
		{Kind: runner.KindInit, Init: &runner.Init{}},
		resultEv("", "x", "out", 3),
		{Kind: runner.KindResult, Result: &runner.Result{}},
		{Kind: runner.KindAssistant, Assistant: &runner.Assistant{Text: "thinking"}},
	} {
		if got := n.Observe(ev); got != nil {
			t.Errorf("%s: nudges %+v", ev.Kind, got)
		}
	}
}

func TestReadOnlyCommand(t *testing.T) {
	tests := []struct {
		cmd  string
		want bool
	}{
		{"cat go.mod", true},
		{"ls -la", true},
		{"grep -rn foo . | head -20", true},
		{"rg TODO", true},
		{"find . -name '*.go' | wc -l", true},
		{"tree -L 2", true},
		{"git status", true},
		{"git log --oneline -5", true},
		{"git diff HEAD~1", true},
		{"git show HEAD:go.mod", true},
		{"cd parser && grep -n Parse *.go", true},
		{"grep foo x.go 2>/dev/null", true},
		{"tail -n 50 log.txt 2>&1", true},
		{"less README.md", true},
		{"", false},
		{"cat a > b", false},
		{"cat a >> b", false},
		{"echo hi", false},
		{"go test ./...", false},
		{"git commit -m x", false},
		{"git", false},
		{"ls && rm -rf build", false},
		{"find . -name '*.tmp' -delete", false},
		{"find . -exec rm {} ;", false},
		{"grep x a; make", false},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := ReadOnlyCommand(tt.cmd); got != tt.want {
				t.Errorf("ReadOnlyCommand(%q) = %v, want %v", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestNormalizeResult(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"took 12ms", "took 9041ms"},
		{"\x1b[32mok\x1b[0m  pkg", "ok  pkg"},
		{`{"stdout":"a","stderr":"","bashEditDiff":{"files":[],"unavailable":true}}`, `{"stderr":"","stdout":"a"}`},
		{`{"file":{"content":"x","numLines":3}}`, `{"file":{"content":"x","numLines":4,"extra":true}}`},
	} {
		if NormalizeResult(tt.a) != NormalizeResult(tt.b) {
			t.Errorf("%q and %q differ: %q, %q", tt.a, tt.b, NormalizeResult(tt.a), NormalizeResult(tt.b))
		}
	}
	for _, tt := range []struct{ a, b string }{
		{"FAIL a", "FAIL b"},
		{`{"stdout":"a","stderr":""}`, `{"stdout":"","stderr":"a"}`},
		{`{"stdout":"a"}`, `{"stdout":"b"}`},
		{`{"stdout":"a"`, `{"stdout":"b"`}, // not JSON: its own text
	} {
		if NormalizeResult(tt.a) == NormalizeResult(tt.b) {
			t.Errorf("%q and %q compare equal", tt.a, tt.b)
		}
	}
}
