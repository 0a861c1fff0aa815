package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// decodeFile is a small test-only decoder of recorded stream-json into
// runner.Events, so these tests do not depend on runner's parser.
func decodeFile(t *testing.T, path string) []runner.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []runner.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		evs = append(evs, decodeLine(t, line))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

type rawLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Model           string          `json:"model"`
	SessionID       string          `json:"session_id"`
	Message         json.RawMessage `json:"message"`
	ToolUseResult   json.RawMessage `json:"tool_use_result"`
	Status          *string         `json:"status"`
	CompactResult   string          `json:"compact_result"`
	CompactError    string          `json:"compact_error"`
	CompactMetadata struct {
		PreTokens int64 `json:"pre_tokens"`
	} `json:"compact_metadata"`
	IsError        bool                         `json:"is_error"`
	APIErrorStatus *int                         `json:"api_error_status"`
	TerminalReason string                       `json:"terminal_reason"`
	NumTurns       int                          `json:"num_turns"`
	CostUSD        float64                      `json:"total_cost_usd"`
	Result         string                       `json:"result"`
	Usage          runner.Usage                 `json:"usage"`
	ModelUsage     map[string]runner.ModelUsage `json:"modelUsage"`
}

type rawMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Usage   runner.Usage    `json:"usage"`
	Content json.RawMessage `json:"content"`
}

type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func decodeLine(t *testing.T, line []byte) runner.Event {
	t.Helper()
	var r rawLine
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	parent := ""
	if r.ParentToolUseID != nil {
		parent = *r.ParentToolUseID
	}
	ev := runner.Event{Type: r.Type, Subtype: r.Subtype, Size: len(line), Kind: runner.KindUnknown}
	switch r.Type {
	case "system":
		if r.Subtype == "init" {
			ev.Kind = runner.KindInit
			ev.Init = &runner.Init{SessionID: r.SessionID, Model: r.Model}
			break
		}
		ev.Kind = runner.KindSystem
		s := &runner.System{Subtype: r.Subtype, CompactResult: r.CompactResult, CompactError: r.CompactError,
			PreTokens: r.CompactMetadata.PreTokens}
		if r.Status != nil {
			s.Status = *r.Status
		}
		ev.System = s
	case "assistant":
		var m rawMessage
		if err := json.Unmarshal(r.Message, &m); err != nil {
			t.Fatal(err)
		}
		var blocks []rawBlock
		_ = json.Unmarshal(m.Content, &blocks)
		a := &runner.Assistant{MessageID: m.ID, ParentToolUseID: parent, Model: m.Model, Usage: m.Usage}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				a.Text += b.Text
			case "tool_use":
				var in struct {
					Command  string `json:"command"`
					FilePath string `json:"file_path"`
				}
				_ = json.Unmarshal(b.Input, &in)
				a.ToolUses = append(a.ToolUses, runner.ToolUse{ID: b.ID, Name: b.Name, Input: b.Input,
					Command: in.Command, FilePath: in.FilePath})
			}
		}
		ev.Kind = runner.KindAssistant
		ev.Assistant = a
	case "user":
		var m rawMessage
		_ = json.Unmarshal(r.Message, &m)
		var blocks []rawBlock
		_ = json.Unmarshal(m.Content, &blocks)
		var tur struct {
			FilePath    string `json:"filePath"`
			Interrupted bool   `json:"interrupted"`
		}
		_ = json.Unmarshal(r.ToolUseResult, &tur)
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			text := flatten(b.Content)
			ev.ToolResults = append(ev.ToolResults, runner.ToolResult{ToolUseID: b.ToolUseID,
				ParentToolUseID: parent, IsError: b.IsError, Content: text, ContentLen: len(text),
				FilePath: tur.FilePath, Interrupted: tur.Interrupted})
		}
		ev.Kind = runner.KindUser
		if len(ev.ToolResults) > 0 {
			ev.Kind = runner.KindToolResult
		}
	case "result":
		res := &runner.Result{Subtype: r.Subtype, IsError: r.IsError, TerminalReason: r.TerminalReason,
			NumTurns: r.NumTurns, CostUSD: r.CostUSD, SessionID: r.SessionID, Text: r.Result,
			Usage: r.Usage, ModelUsage: r.ModelUsage}
		if r.APIErrorStatus != nil {
			res.APIErrorStatus = *r.APIErrorStatus
		}
		ev.Kind = runner.KindResult
		ev.Result = res
	}
	return ev
}

// flatten turns tool_result content (a string or an array of blocks) into text.
func flatten(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []rawBlock
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
