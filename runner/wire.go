package runner

// The JSON shapes of stream-json's lines below the top level, each
// decoded as the CLI writes it (Parse reads the line, build turns it into
// an Event).

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
)

// message is the "message" object of assistant and user lines. Its content
// is an array of blocks, or a string (a replayed prompt: see Parse).
type message struct {
	ID      string  `json:"id"`
	Model   string  `json:"model"`
	Usage   usage   `json:"usage"`
	Content []block `json:"content"`
}

// block is one element of message.content. Everything a block type could
// need is decoded, because its "type" may come after the fields.
type block struct {
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	ToolUseID string        `json:"tool_use_id"`
	IsError   bool          `json:"is_error"`
	Text      text          `json:"text"`    // text blocks
	Content   resultContent `json:"content"` // tool_result
	Input     toolInput     `json:"input"`   // tool_use
}

// textBlock is an element of a tool_result's content: only text blocks are
// kept (images are not). It has no content of its own, so decoding cannot
// recurse.
type textBlock struct {
	Type string `json:"type"`
	Text text   `json:"text"`
}

type usage struct {
	InputTokens              integer `json:"input_tokens"`
	OutputTokens             integer `json:"output_tokens"`
	CacheCreationInputTokens integer `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     integer `json:"cache_read_input_tokens"`
}

func (u usage) value() Usage {
	return Usage{
		InputTokens:              int64(u.InputTokens),
		OutputTokens:             int64(u.OutputTokens),
		CacheCreationInputTokens: int64(u.CacheCreationInputTokens),
		CacheReadInputTokens:     int64(u.CacheReadInputTokens),
	}
}

// modelUsage is one entry of a result's modelUsage; ok is false for an
// entry that is not an object, which is dropped.
type modelUsage struct {
	ok bool
	v  ModelUsage
}

func (m *modelUsage) UnmarshalJSON(raw []byte) error {
	*m = modelUsage{}
	if raw[0] != '{' {
		return nil
	}
	var w struct {
		InputTokens              integer `json:"inputTokens"`
		OutputTokens             integer `json:"outputTokens"`
		CacheReadInputTokens     integer `json:"cacheReadInputTokens"`
		CacheCreationInputTokens integer `json:"cacheCreationInputTokens"`
		CostUSD                  float   `json:"costUSD"`
		ContextWindow            integer `json:"contextWindow"`
	}
	if err := decode(raw, &w); err != nil {
		return err
	}
	m.ok = true
	m.v = ModelUsage{
		InputTokens:              int64(w.InputTokens),
		OutputTokens:             int64(w.OutputTokens),
		CacheReadInputTokens:     int64(w.CacheReadInputTokens),
		CacheCreationInputTokens: int64(w.CacheCreationInputTokens),
		CostUSD:                  float64(w.CostUSD),
		ContextWindow:            int64(w.ContextWindow),
	}
	return nil
}

// optString is an array element that is kept only if it is a string.
type optString struct {
	s  string
	ok bool
}

func (o *optString) UnmarshalJSON(raw []byte) error {
	*o = optString{}
	if raw[0] != '"' {
		return nil
	}
	o.ok = true
	return json.Unmarshal(raw, &o.s)
}

// toolInput is a tool_use input: copied when small, measured always, with
// the few fields consumers read pulled out. encoding/json hands
// UnmarshalJSON a slice of the line, so a 64 MB Write input costs a scan,
// not a copy.
type toolInput struct {
	raw         json.RawMessage
	size        int
	command     string
	filePath    string
	path        string
	description string
	sum         [sha256.Size]byte // of an input over MaxInputBytes
}

func (in *toolInput) UnmarshalJSON(raw []byte) error {
	*in = toolInput{size: len(raw)}
	if len(raw) <= MaxInputBytes {
		in.raw = bytes.Clone(raw)
	}
	if raw[0] != '{' {
		return nil
	}
	var f struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		Description  string `json:"description"`
	}
	if err := decode(raw, &f); err != nil {
		return err
	}
	in.command, in.filePath, in.path, in.description = f.Command, cmp.Or(f.FilePath, f.NotebookPath), f.Path, f.Description
	if in.raw == nil {
		in.sum = sha256.Sum256(raw)
	}
	return nil
}

// resultContent is a tool_result's content: a string or an array of blocks.
type resultContent struct {
	text   text
	blocks []textBlock
}

func (c *resultContent) UnmarshalJSON(raw []byte) error {
	*c = resultContent{}
	switch raw[0] {
	case '"':
		return c.text.UnmarshalJSON(raw)
	case '[':
		return decode(raw, &c.blocks)
	}
	return nil
}

// joined is the string, or the text blocks joined with newlines.
func (c *resultContent) joined() (string, int) {
	if len(c.blocks) == 0 {
		return c.text.s, c.text.n
	}
	var t textBuf
	t.init(MaxTextBytes, 256)
	first := true
	for _, b := range c.blocks {
		if b.Type != "text" || !b.Text.isString() {
			continue
		}
		if !first {
			t.write([]byte("\n"))
		}
		first = false
		t.writeText(b.Text)
	}
	return string(t.b), t.n
}

// joinTexts joins the texts of several blocks with newlines, as the CLI
// shows them, bounded like a single text.
func joinTexts(texts []text) string {
	var t textBuf
	t.init(MaxTextBytes, 256)
	for k, x := range texts {
		if k > 0 && t.n > 0 && x.kind != 0 {
			t.write([]byte("\n"))
		}
		t.writeText(x)
	}
	return string(t.b)
}
