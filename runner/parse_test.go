package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/debussy-dev/debussy/internal/golden"
)

// streamFixtures are the recorded stdout streams (not the stdin recording).
var streamFixtures = []string{
	"api-retry-overloaded-killed.jsonl",
	"interrupt-then-followup.jsonl",
	"multiblock-then-sigint.jsonl",
	"prompt-too-long.jsonl",
	"success-simple.jsonl",
	"success-sonnet-200k.jsonl",
	"usage-limit-2.1.197.jsonl",
	"usage-limit-2.1.332.jsonl",
	"not-logged-in-2.1.332.jsonl",
	"unreachable-2.1.332.jsonl",
}

func fixtureLines(t testing.TB, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}

// Every fixture line, parsed, against testdata/parse/<fixture>.golden.
func TestParseGolden(t *testing.T) {
	for _, name := range streamFixtures {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			for n, line := range fixtureLines(t, name) {
				ev, err := Parse(line)
				if err != nil {
					t.Fatalf("line %d: %v", n+1, err)
				}
				b, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(b)
				got.WriteByte('\n')
			}
			golden.Check(t, filepath.Join("testdata", "parse", strings.TrimSuffix(name, ".jsonl")+".golden"), got.Bytes())
		})
	}
}

func TestParseFixtureFacts(t *testing.T) {
	type facts struct {
		kind    Kind
		subtype string
		check   func(t *testing.T, ev Event)
	}
	tests := []struct {
		name    string
		fixture string
		line    int // 1-based
		want    facts
	}{
		{"init", "success-simple.jsonl", 1, facts{KindInit, "init", func(t *testing.T, ev Event) {
			in := ev.Init
			if in.SessionID != "e004ea34-af64-4e59-bbd1-941bb515f3e4" || in.Model != "claude-opus-4-8[1m]" ||
				in.Version != "2.1.197" || in.Cwd != "/home/dev/project" || in.PermissionMode != "bypassPermissions" ||
				len(in.Tools) != 24 || in.Tools[1] != "Bash" {
				t.Errorf("init = %+v", in)
			}
		}}},
		{"bash tool use", "success-simple.jsonl", 2, facts{KindAssistant, "", func(t *testing.T, ev Event) {
			a := ev.Assistant
			if a.MessageID != "msg_0" || !a.MainThread() || a.Usage.Context() != 5000 || len(a.ToolUses) != 1 {
				t.Fatalf("assistant = %+v", a)
			}
			tu := a.ToolUses[0]
			if tu.ID != "toolu_0" || tu.Name != "Bash" || tu.Command != "echo hello > hello.txt && ls" ||
				string(tu.Input) != `{"command":"echo hello > hello.txt && ls","description":"write file"}` || tu.InputSize != len(tu.Input) {
				t.Errorf("tool use = %+v", tu)
			}
		}}},
		{"bash result", "success-simple.jsonl", 3, facts{KindToolResult, "", func(t *testing.T, ev Event) {
			tr := ev.ToolResults
			if len(tr) != 1 || tr[0].ToolUseID != "toolu_0" || tr[0].IsError || tr[0].Content != "err.txt\nhello.txt\nout.jsonl" || tr[0].ContentLen != 27 {
				t.Errorf("tool results = %+v", tr)
			}
		}}},
		{"success result", "success-simple.jsonl", 5, facts{KindResult, "success", func(t *testing.T, ev Event) {
			r := ev.Result
			if r.IsError || r.APIErrorStatus != 0 || r.NumTurns != 2 || r.DurationMs != 252 || r.CostUSD != 0.0563 ||
				r.Text != "Done. PHASE COMPLETE" || r.TerminalReason != "completed" || r.Usage.InputTokens != 11000 ||
				r.ModelUsage["claude-opus-4-8[1m]"].ContextWindow != 1_000_000 {
				t.Errorf("result = %+v", r)
			}
		}}},
		{"sonnet window", "success-sonnet-200k.jsonl", 7, facts{KindResult, "success", func(t *testing.T, ev Event) {
			if w := ev.Result.ModelUsage["claude-sonnet-4-5"].ContextWindow; w != 200_000 {
				t.Errorf("context window = %d", w)
			}
		}}},
		{"sonnet context", "success-sonnet-200k.jsonl", 4, facts{KindAssistant, "", func(t *testing.T, ev Event) {
			if c := ev.Assistant.Usage.Context(); c != 192_000 {
				t.Errorf("context = %d", c)
			}
		}}},
		{"multiblock text", "multiblock-then-sigint.jsonl", 2, facts{KindAssistant, "", func(t *testing.T, ev Event) {
			a := ev.Assistant
			if a.Text != "I will write a file." || len(a.ToolUses) != 0 || a.Usage.Context() != 23500 {
				t.Errorf("assistant = %+v", a)
			}
		}}},
		{"multiblock write", "multiblock-then-sigint.jsonl", 3, facts{KindAssistant, "", func(t *testing.T, ev Event) {
			tu := ev.Assistant.ToolUses
			if ev.Assistant.MessageID != "msg_fake_0_0_1795299173771" || len(tu) != 1 || tu[0].Name != "Write" || tu[0].FilePath != "/home/dev/project/a.txt" {
				t.Errorf("assistant = %+v", ev.Assistant)
			}
		}}},
		{"write result file path", "multiblock-then-sigint.jsonl", 5, facts{KindToolResult, "", func(t *testing.T, ev Event) {
			if fp := ev.ToolResults[0].FilePath; fp != "/home/dev/project/a.txt" {
				t.Errorf("file path = %q", fp)
			}
		}}},
		{"task started", "multiblock-then-sigint.jsonl", 8, facts{KindSystem, "task_started", func(t *testing.T, ev Event) {
			s := ev.System
			if s.TaskID != "blq0siux3" || s.ToolUseID != "toolu_msg_fake_0_1_1795299173855_0" || s.Description != "long" {
				t.Errorf("system = %+v", s)
			}
		}}},
		{"task notification", "multiblock-then-sigint.jsonl", 9, facts{KindSystem, "task_notification", func(t *testing.T, ev Event) {
			if s := ev.System; s.Status != "stopped" || s.Description != "long" {
				t.Errorf("system = %+v", s)
			}
		}}},
		{"rejected tool", "multiblock-then-sigint.jsonl", 11, facts{KindToolResult, "", func(t *testing.T, ev Event) {
			tr := ev.ToolResults[0]
			if !tr.IsError || !strings.HasPrefix(tr.Content, "The user doesn't want to proceed") || tr.FilePath != "" {
				t.Errorf("tool result = %+v", tr)
			}
		}}},
		{"interrupted note", "multiblock-then-sigint.jsonl", 12, facts{KindUser, "", func(t *testing.T, ev Event) {
			if ev.User.Text != "[Request interrupted by user for tool use]" {
				t.Errorf("user = %+v", ev.User)
			}
		}}},
		{"aborted result", "multiblock-then-sigint.jsonl", 13, facts{KindResult, "error_during_execution", func(t *testing.T, ev Event) {
			if r := ev.Result; !r.IsError || r.TerminalReason != "aborted_tools" {
				t.Errorf("result = %+v", r)
			}
		}}},
		{"compacting", "prompt-too-long.jsonl", 4, facts{KindSystem, "status", func(t *testing.T, ev Event) {
			if ev.System.Status != "compacting" {
				t.Errorf("system = %+v", ev.System)
			}
		}}},
		{"compact failed", "prompt-too-long.jsonl", 5, facts{KindSystem, "status", func(t *testing.T, ev Event) {
			if s := ev.System; s.Status != "" || s.CompactResult != "failed" || s.CompactError != "too_few_groups" {
				t.Errorf("system = %+v", s)
			}
		}}},
		{"synthetic reply", "prompt-too-long.jsonl", 6, facts{KindAssistant, "", func(t *testing.T, ev Event) {
			if a := ev.Assistant; a.Model != "<synthetic>" || a.Text != "Prompt is too long" || a.Error != "invalid_request" {
				t.Errorf("assistant = %+v", a)
			}
		}}},
		{"prompt too long", "prompt-too-long.jsonl", 7, facts{KindResult, "success", func(t *testing.T, ev Event) {
			if r := ev.Result; !r.IsError || r.APIErrorStatus != 400 || r.Text != "Prompt is too long" || r.TerminalReason != "prompt_too_long" {
				t.Errorf("result = %+v", r)
			}
		}}},
		{"api retry", "api-retry-overloaded-killed.jsonl", 2, facts{KindSystem, "api_retry", func(t *testing.T, ev Event) {
			if s := ev.System; s.Attempt != 1 || s.MaxRetries != 10 || s.RetryDelayMs != 560.72494063143 || s.ErrorStatus != 529 || s.Error != "overloaded" {
				t.Errorf("system = %+v", s)
			}
		}}},
		{"control response", "interrupt-then-followup.jsonl", 5, facts{KindControlResponse, "", func(t *testing.T, ev Event) {
			if c := ev.Control; c.RequestID != "req_1" || c.Subtype != "success" {
				t.Errorf("control = %+v", c)
			}
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := fixtureLines(t, tt.fixture)[tt.line-1]
			ev, err := Parse(line)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != tt.want.kind || ev.Subtype != tt.want.subtype || ev.Size != len(line) {
				t.Fatalf("kind %s subtype %q size %d, want %s %q %d", ev.Kind, ev.Subtype, ev.Size, tt.want.kind, tt.want.subtype, len(line))
			}
			tt.want.check(t, ev)
		})
	}
}

func TestParseSynthetic(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		check func(t *testing.T, ev Event)
	}{
		{"unknown type", `{"type":"stream_event","event":{"x":[1,{"y":null}]}}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindUnknown || ev.Type != "stream_event" {
				t.Errorf("event = %+v", ev)
			}
		}},
		{"type last", `{"message":{"content":[{"text":"hi","type":"text"}],"id":"m1"},"type":"assistant"}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindAssistant || ev.Assistant.MessageID != "m1" || ev.Assistant.Text != "hi" {
				t.Errorf("event = %+v", ev.Assistant)
			}
		}},
		{"subagent", `{"type":"assistant","parent_tool_use_id":"toolu_task","message":{"id":"m2","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]}}`, func(t *testing.T, ev Event) {
			if a := ev.Assistant; a.MainThread() || a.ParentToolUseID != "toolu_task" || a.ToolUses[0].FilePath != "/a" {
				t.Errorf("assistant = %+v", a)
			}
		}},
		{"array content", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}]},"tool_use_result":{"stdout":"x","interrupted":true}}`, func(t *testing.T, ev Event) {
			tr := ev.ToolResults[0]
			if tr.Content != "a\nb" || tr.ContentLen != 3 || !tr.Interrupted {
				t.Errorf("tool result = %+v", tr)
			}
		}},
		{"string tool_use_result", `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"no","is_error":true}]},"tool_use_result":"User rejected tool use"}`, func(t *testing.T, ev Event) {
			if tr := ev.ToolResults[0]; !tr.IsError || tr.Content != "no" {
				t.Errorf("tool result = %+v", tr)
			}
		}},
		{"compact boundary", `{"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":190123}}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindSystem || ev.System.PreTokens != 190123 {
				t.Errorf("system = %+v", ev.System)
			}
		}},
		{"control error", `{"type":"control_response","response":{"subtype":"error","request_id":"req_2","error":"no turn"}}`, func(t *testing.T, ev Event) {
			if c := ev.Control; c.Subtype != "error" || c.RequestID != "req_2" || c.Error != "no turn" {
				t.Errorf("control = %+v", c)
			}
		}},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":5,"api_error_status":null}`, func(t *testing.T, ev Event) {
			if r := ev.Result; r.Subtype != "error_max_turns" || r.NumTurns != 5 {
				t.Errorf("result = %+v", r)
			}
		}},
		{"wrong types are zero", `{"type":"result","num_turns":"5","is_error":"yes","usage":[1],"modelUsage":{"m":3}}`, func(t *testing.T, ev Event) {
			if r := ev.Result; r.NumTurns != 0 || r.IsError || len(r.ModelUsage) != 0 {
				t.Errorf("result = %+v", r)
			}
		}},
		{"numbers", `{"type":"system","subtype":"api_retry","attempt":-2,"retry_delay_ms":1.5e3,"error_status":5.29E2}`, func(t *testing.T, ev Event) {
			if s := ev.System; s.Attempt != -2 || s.RetryDelayMs != 1500 || s.ErrorStatus != 529 {
				t.Errorf("system = %+v", s)
			}
		}},
		{"spaces and CRLF", " { \"type\" : \"result\" , \"subtype\" : \"success\" } \r", func(t *testing.T, ev Event) {
			if ev.Kind != KindResult || ev.Result.Subtype != "success" {
				t.Errorf("event = %+v", ev)
			}
		}},
		{"prompt echo", `{"type":"user","message":{"role":"user","content":"do it \u00e9"},"parent_tool_use_id":"t9"}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindUser || ev.User.Text != "do it é" || ev.User.ParentToolUseID != "t9" {
				t.Errorf("event = %+v %+v", ev, ev.User)
			}
		}},
		{"user text blocks", `{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":""},{"type":"text","text":"b"}]}}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindUser || ev.User.Text != "a\n\nb" {
				t.Errorf("user = %+v", ev.User)
			}
		}},
		{"content of another type", `{"type":"user","message":{"content":{"x":1}}}`, func(t *testing.T, ev Event) {
			if ev.Kind != KindUser || ev.User.Text != "" {
				t.Errorf("user = %+v", ev.User)
			}
		}},
		{"notebook path", `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"NotebookEdit","input":{"notebook_path":"/n.ipynb"}}]}}`, func(t *testing.T, ev Event) {
			if tu := ev.Assistant.ToolUses[0]; tu.FilePath != "/n.ipynb" {
				t.Errorf("tool use = %+v", tu)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, ev)
		})
	}
}

func toolResultWithRawContent(raw string) []byte {
	return []byte(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":` + raw + `}]}}`)
}

func TestParseDecodesStrings(t *testing.T) {
	tests := []struct {
		name string
		raw  string // JSON string literal as it appears in the line
		want string
	}{
		{"plain", `"hello"`, "hello"},
		{"escapes", `"a\"b\\c\/d\n\t\r\b\f"`, "a\"b\\c/d\n\t\r\b\f"},
		{"utf8", `"héllo ✓"`, "héllo ✓"},
		{"unicode escape", `"\u00e9\u2713"`, "é✓"},
		{"surrogate pair", `"\ud83d\ude00"`, "😀"},
		{"lone surrogate", `"\ud83dx"`, "\uFFFDx"},
		{"backslash before quote", `"\\"`, `\`},
		{"empty", `""`, ""},
		{"null", `null`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse(toolResultWithRawContent(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			tr := ev.ToolResults[0]
			if tr.Content != tt.want || tr.ContentLen != len(tt.want) {
				t.Errorf("content = %q (%d), want %q (%d)", tr.Content, tr.ContentLen, tt.want, len(tt.want))
			}
			// encoding/json agrees.
			var ref string
			if err := json.Unmarshal([]byte(tt.raw), &ref); err != nil {
				t.Fatal(err)
			}
			if ref != tt.want {
				t.Errorf("encoding/json says %q", ref)
			}
		})
	}
}

func TestParseBoundsLargeValues(t *testing.T) {
	// 3-byte runes put a rune boundary off MaxTextBytes; escapes make the
	// encoded length differ from the decoded one.
	big := strings.Repeat("✓ \"quoted\"\n", 20_000)
	enc, _ := json.Marshal(big)
	ev, err := Parse(toolResultWithRawContent(string(enc)))
	if err != nil {
		t.Fatal(err)
	}
	tr := ev.ToolResults[0]
	if tr.ContentLen != len(big) || len(tr.Content) > MaxTextBytes || len(tr.Content) < MaxTextBytes-3 ||
		!strings.HasPrefix(big, tr.Content) || !utf8.ValidString(tr.Content) {
		t.Errorf("content %d bytes (valid %t), ContentLen %d, want a prefix of ≤ %d and %d",
			len(tr.Content), utf8.ValidString(tr.Content), tr.ContentLen, MaxTextBytes, len(big))
	}

	input, _ := json.Marshal(map[string]string{"file_path": "/big.go", "content": big})
	line := fmt.Sprintf(`{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Write","input":%s}]}}`, input)
	ev, err = Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	tu := ev.Assistant.ToolUses[0]
	if tu.Input != nil || tu.InputSize != len(input) || tu.FilePath != "/big.go" {
		t.Errorf("tool use: input %d bytes, size %d, path %q", len(tu.Input), tu.InputSize, tu.FilePath)
	}

	res, _ := json.Marshal(big)
	ev, err = Parse([]byte(`{"type":"result","subtype":"success","result":` + string(res) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ev.Result.Text); n > MaxTextBytes || !strings.HasPrefix(big, ev.Result.Text) {
		t.Errorf("result text %d bytes", n)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, line string }{
		{"empty", ""},
		{"blank", "  \t"},
		{"text", "this is not json"},
		{"array", `[{"type":"result"}]`},
		{"string", `"result"`},
		{"unclosed object", `{"type":"result"`},
		{"unclosed string", `{"type":"resu`},
		{"trailing comma", `{"type":"result",}`},
		{"missing colon", `{"type" "result"}`},
		{"unquoted key", `{type:"result"}`},
		{"bad literal", `{"is_error":tru}`},
		{"leading zero", `{"n":01}`},
		{"bare fraction", `{"n":1.}`},
		{"bare exponent", `{"n":1e}`},
		{"mismatched bracket", `{"a":[1,2}`},
		{"two objects", `{"a":1} {"b":2}`},
		{"bad escape in a decoded field", `{"type":"result","result":"x\q"}`},
		{"short unicode escape", `{"type":"result","result":"\u12"}`},
		{"deep nesting", `{"a":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.line))
			if !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("Parse(%.40q) = %v, want ErrInvalidJSON", tt.line, err)
			}
		})
	}
}

// A line cut anywhere (a crash mid-write) is never taken for an event.
func TestParseRejectsEveryTruncation(t *testing.T) {
	for _, name := range streamFixtures {
		for n, line := range fixtureLines(t, name) {
			for k := range len(line) {
				if _, err := Parse(line[:k]); err == nil {
					t.Fatalf("%s line %d cut at %d parsed without error", name, n+1, k)
				}
			}
		}
	}
}

// Events must not point into the caller's buffer, which the line reader
// reuses for the next line.
func TestParseDoesNotAlias(t *testing.T) {
	for _, name := range streamFixtures {
		for _, line := range fixtureLines(t, name) {
			buf := bytes.Clone(line)
			ev, err := Parse(buf)
			if err != nil {
				t.Fatal(err)
			}
			for k := range buf {
				buf[k] = 'x'
			}
			again, _ := Parse(line)
			if !reflect.DeepEqual(ev, again) {
				t.Fatalf("%s: event changed when the buffer was overwritten:\n%+v\n%+v", name, ev, again)
			}
		}
	}
}

func benchLines(b *testing.B) [][]byte {
	var lines [][]byte
	for _, name := range streamFixtures {
		lines = append(lines, fixtureLines(b, name)...)
	}
	return lines
}

func bigWriteLine(size int) []byte {
	content := strings.Repeat("\tfmt.Printf(\"%d: %s\\n\", i, name) // é\n", size/40)
	input, _ := json.Marshal(map[string]string{"file_path": "/p/big.go", "content": content})
	return fmt.Appendf(nil, `{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t","name":"Write","input":%s}],"usage":{"input_tokens":1}},"parent_tool_use_id":null}`, input)
}

func BenchmarkParse(b *testing.B) {
	lines := benchLines(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.Run("fixtures", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, l := range lines {
				if _, err := Parse(l); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	big := bigWriteLine(4 << 20)
	b.Run("write-4MB", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			if _, err := Parse(big); err != nil {
				b.Fatal(err)
			}
		}
	})
	// For comparison: decoding the same lines fully with encoding/json.
	b.Run("encoding-json-fixtures", func(b *testing.B) {
		b.SetBytes(int64(size))
		for b.Loop() {
			for _, l := range lines {
				var v map[string]any
				if err := json.Unmarshal(l, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-json-write-4MB", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal(big, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
