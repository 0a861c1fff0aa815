package checkpoint

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

const typicalHandoff = "## Completed\n" +
	"- Lexer in `parser/lexer.go`, 14 tests pass.\n\n" +
	"## In progress\n" +
	"- Precedence in parser.go: `*` binds looser than `+`; the fix is in `bindingPower`.\n" +
	"- Wrote fixtures to parser/testdata/expr.txt.\n\n" +
	"## Remaining\n" +
	"- The `calc` command in `cmd/calc/main.go`.\n\n" +
	"## Critical context\n" +
	"- Keep `fmt.Errorf` wrapping; see docs/design.md (e.g. the error section).\n" +
	"- A fence inside:\n```go\nx := 1\n```\n\n" +
	"## Resume instructions\n" +
	"1. Run `go test ./parser/...`.\n"

// exists is a work tree holding only the files listed.
func exists(files ...string) func(string) bool {
	return func(p string) bool {
		for _, f := range files {
			if p == f {
				return true
			}
		}
		return false
	}
}

func TestMarkdownWithHandoff(t *testing.T) {
	in := typicalInput()
	in.Handoff = typicalHandoff
	in.HandoffPath = "/home/dev/project/.debussy/runs/20261121-221300/phase-2/handoff-1.md"
	in.Exists = exists("docs/design.md", "parser/lexer.go")
	c := Build(in, record(t, "typical-session.jsonl"))
	if c.Exists != nil {
		t.Error("Build kept the Exists func")
	}
	if want := []string{"cmd/calc/main.go"}; !reflect.DeepEqual(c.HandoffMissing, want) {
		t.Errorf("missing %q, want %q", c.HandoffMissing, want)
	}
	checkGolden(t, "handoff-restart.md", c.Markdown())
}

func TestMarkdownNoHandoffAndAvoid(t *testing.T) {
	in := Input{RunID: "r1", PhaseID: "1", Restart: 2, RestartsOf: 3,
		Reason:    "doom loop: Bash called 5 times with the same arguments",
		NoHandoff: "the session was stopped in a loop before the agent wrote its handoff.",
		Avoid:     []string{`Bash {"command":"go test ./..."}`, "Read {\"file_path\":\"/a/`b`.go\"}"},
	}
	checkGolden(t, "no-handoff-avoid.md", Build(in, nil).Markdown())
}

func TestHandoffBounded(t *testing.T) {
	var h strings.Builder
	h.WriteString("HEAD-MARK\n")
	for range 4000 {
		h.WriteString("a line of a very long handoff\n")
	}
	h.WriteString("TAIL-MARK")
	c := Build(Input{RunID: "r", PhaseID: "1", Handoff: h.String()}, nil)
	md := c.Markdown()
	for _, want := range []string{"HEAD-MARK", "TAIL-MARK", "characters cut"} {
		if !strings.Contains(md, want) || !strings.Contains(c.Handoff, want) {
			t.Errorf("bounded handoff lacks %q", want)
		}
	}
	if n := len([]rune(c.Handoff)); n > handoffRunes+100 {
		t.Errorf("handoff is %d runes, want about %d", n, handoffRunes)
	}
	if len(md) > 24_000 {
		t.Errorf("markdown is %d bytes", len(md))
	}
}

func TestHandoffPaths(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"backticked and bare", "Edited `parser/parser.go` and go.mod, see README.md.", []string{"parser/parser.go", "go.mod", "README.md"}},
		{"positions and punctuation", "(parser_test.go:41), \"a.txt\"; [b.json]!", []string{"parser_test.go", "a.txt", "b.json"}},
		{"absolute and relative", "/home/dev/x/main.go ./cmd/run.go ../up.md", []string{"/home/dev/x/main.go", "./cmd/run.go", "../up.md"}},
		{"once each", "`a.go` a.go a.go.", []string{"a.go"}},
		{"selectors and prose are no files", "`fmt.Errorf`, p.handoff, e.g. this, i.e. that, v1.2.3, and/or, Node.js", []string{"Node.js"}},
		{"urls, globs, flags", "https://x.io/a.html *.go --out=a.txt $HOME/a.go", nil},
		{"a multi-word span is not a path", "`go test ./parser/...` `cat a.txt`", []string{"a.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := handoffPaths(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("handoffPaths = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHandoffMissing(t *testing.T) {
	files := []FileChange{{Status: "M", Path: "parser/parser.go"}}
	touched := []string{"/home/dev/project/notes/todo.md"}
	tests := []struct {
		name, handoff string
		exists        func(string) bool
		want          []string
	}{
		{"changed by git, by suffix", "`parser.go` and `parser/parser.go`", exists(), nil},
		{"written in the session", "`notes/todo.md` and todo.md", exists(), nil},
		{"existing", "`go.mod`", exists("go.mod"), nil},
		{"missing", "`go.mod` and `gone.txt`, also docs/x.md", exists("go.mod"), []string{"gone.txt", "docs/x.md"}},
		{"no Exists: no check", "`gone.txt`", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := missingPaths(tt.handoff, files, touched, tt.exists)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("missing %q, want %q", got, tt.want)
			}
		})
	}
}

// A secret printed by a tool, typed into a command, said by the agent and
// copied into its handoff, progress and loop reaches neither the JSON nor
// the markdown nor the prompt.
func TestCheckpointCarriesNoSecret(t *testing.T) {
	const key = "sk-ant-api03-SECRETSECRETSECRET"
	r := NewRecorder()
	r.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m1",
		Text: "Using ANTHROPIC_API_KEY=" + key,
		ToolUses: []runner.ToolUse{
			{ID: "t1", Name: "Bash", Command: "curl -H 'x-api-key: hunter2hunter2' " + strings.Repeat("x", 150) + " " + key},
			{ID: "t2", Name: "Bash", Command: "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345"},
		}}})
	r.Observe(runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{
		{ToolUseID: "t1", IsError: true, Content: strings.Repeat("noise ", 100) + "token=" + key + strings.Repeat(" noise", 100)},
		{ToolUseID: "t2", Content: "ok"},
	}})
	in := Input{RunID: "r", PhaseID: "1", Reason: "context 83 %",
		Progress: []string{"set DB_PASSWORD=hunter2hunter2"},
		Handoff:  "the key is " + key + " and API_TOKEN=hunter2hunter2\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n",
		Avoid:    []string{`Bash {"command":"echo AKIAIOSFODNN7EXAMPLE"}`},
	}
	c := Build(in, r)
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"json": string(js), "markdown": c.Markdown(), "prompt": c.Prompt("phase")} {
		for _, secret := range []string{key, "sk-ant", "hunter2", "ghp_01234", "AKIAIOSFODNN7EXAMPLE", "MIIE"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s carries %q:\n%s", what, secret, text)
			}
		}
		if !strings.Contains(text, "the key is [redacted]") || !strings.Contains(text, "API_TOKEN=[redacted]") {
			t.Errorf("%s lost the handoff's words around the secrets:\n%s", what, text)
		}
	}
	// A checkpoint decoded from an older, unredacted file is redacted when
	// rendered.
	raw := Checkpoint{Input: Input{RunID: "r", PhaseID: "1", Handoff: "key " + key}, LastMessage: key}
	if md := raw.Markdown(); strings.Contains(md, key) {
		t.Errorf("markdown of a hand-built checkpoint carries the key:\n%s", md)
	}
}

func TestHandoffTemplate(t *testing.T) {
	tmpl := HandoffTemplate()
	var headings []string
	for _, line := range strings.Split(tmpl, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings = append(headings, h)
		}
	}
	want := []string{"Completed", "In progress", "Remaining", "Critical context", "Resume instructions"}
	if !reflect.DeepEqual(headings, want) {
		t.Errorf("headings %q, want %q", headings, want)
	}
	for _, w := range []string{"partial outputs", "what remains", "Decisions", "gotchas"} {
		if !strings.Contains(tmpl, w) {
			t.Errorf("template lacks %q", w)
		}
	}
}
