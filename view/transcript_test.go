package view

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTranscriptFixtures renders every recorded stream of the real CLI.
func TestTranscriptFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "runner", "testdata", "fixtures", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if strings.HasSuffix(name, ".stdin") {
			continue // what debussy sent, not the stream
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			tr := NewTranscript(&out)
			sc := bufio.NewReader(bytes.NewReader(data))
			for {
				line, err := sc.ReadBytes('\n')
				if len(line) > 0 {
					tr.Line(line)
				}
				if err != nil {
					break
				}
			}
			golden(t, "transcript-"+name, out.String())
		})
	}
}

func TestTranscriptOddLines(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{name: "not json", line: "garbage", want: "! line 1 not readable"},
		{name: "blank", line: "  ", want: ""},
		{name: "unknown type", line: `{"type":"rate_limit_event"}`, want: ""},
		{name: "long result", line: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":"a\nb\nc\nd\ne"}]}}`,
			want: "  ← a\n    b\n    c\n    … 2 more lines (9 bytes in all)\n"},
		{name: "blank line in a result", line: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":"a\n\nb"}]}}`,
			want: "  ← a\n\n    b\n"},
		{name: "synthetic reply", line: `{"type":"assistant","message":{"id":"s","model":"<synthetic>","content":[{"type":"text","text":"Prompt is too long"}]},"error":"invalid_request"}`,
			want: "! claude: invalid_request: Prompt is too long\n"},
		{name: "context usage", line: `{"type":"control_response","response":{"subtype":"success","request_id":"ctx_1","response":{"model":"claude-opus-5-5","maxTokens":1000000,"totalTokens":9525,"categories":[{"id":"system_prompt","name":"System prompt","tokens":1965,"kind":"used"},{"id":"system_tools","name":"System tools","tokens":5473,"kind":"used"},{"id":"autocompact_buffer","name":"Autocompact buffer","tokens":33000,"kind":"buffer"},{"id":"free_space","name":"Free space","tokens":957475,"kind":"free"}]}}}`,
			want: "· context window 1M (claude-opus-5-5), compacts at 967K · in use 9.5K: System tools 5.5K, System prompt 2K\n"},
		{name: "context usage refused", line: `{"type":"control_response","response":{"subtype":"error","request_id":"ctx_1","error":"Unknown subtype"}}`,
			want: "· context: claude refused get_context_usage: Unknown subtype\n"},
		{name: "error result", line: `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","is_error":true,"content":"boom"}]}}`,
			want: "  ← error: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			NewTranscript(&out).Line([]byte(tt.line))
			if tt.want == "" && out.Len() != 0 || !strings.Contains(out.String(), tt.want) {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}
