package checkpoint

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/secrets"
)

// Memory bounds: a phase can run for hours, the recorder keeps only what a
// checkpoint could show (the session log keeps everything).
const (
	keepCalls    = 200
	keepFailed   = 50
	keepFiles    = 1000
	summaryRunes = 160
	errorRunes   = 600  // per failed call
	messageRunes = 2000 // the agent's last message
)

// rejectedPrefix starts the tool_result the CLI writes for a tool aborted by
// an interrupt — our own stop, not the tool's failure.
const rejectedPrefix = "The user doesn't want to proceed with this tool use"

// ToolCall is one main-thread tool call as the next session should see it.
type ToolCall struct {
	Name        string `json:"name"`
	Summary     string `json:"summary,omitempty"` // Bash command, file path, pattern …
	Failed      bool   `json:"failed,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"` // cut short by the stop, or no result seen
	Error       string `json:"error,omitempty"`       // bounded error text when Failed
	// Refused is debussy's own reason when debussy refused the call (a
	// PreToolUse deny: the handoff stage, a budget). Such a call did not
	// run, so it is neither Failed nor something to investigate.
	Refused string `json:"refused,omitempty"`
	// ID is the stream's tool_use id, to match debussy's refusals.
	ID string `json:"tool_use_id,omitempty"`
}

// Recorder observes one phase's sessions and keeps what a checkpoint needs.
// It is not safe for concurrent use.
type Recorder struct {
	calls     []*ToolCall // newest last, at most keepCalls
	callCount int
	pending   map[string]pendingCall

	failed      []ToolCall // newest last, at most keepFailed
	failedCount int
	failedIDs   map[string]bool // every failed call's id, to count refusals out

	files     []string
	fileSet   map[string]bool
	fileCount int

	lastMsg   string
	lastMsgID string
	// msgParts are the latest message's text blocks as the stream gave
	// them (the CLI writes each block as its own event): redacted joined,
	// so a secret split across two blocks is judged whole.
	msgParts []string

	session   string // latest init's session id
	totals    map[string]total
	anonymous []total // results without a session id
}

type pendingCall struct {
	call     *ToolCall
	filePath string // Write/Edit input, in case the result lacks filePath
}

type total struct {
	tokens int64
	cost   float64
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		pending:   map[string]pendingCall{},
		fileSet:   map[string]bool{},
		totals:    map[string]total{},
		failedIDs: map[string]bool{},
	}
}

// Observe records one event.
func (r *Recorder) Observe(ev event.Event) {
	switch {
	case ev.Init != nil:
		r.session = ev.Init.SessionID
	case ev.Assistant != nil:
		r.observeAssistant(ev.Assistant)
	case len(ev.ToolResults) > 0:
		for _, tr := range ev.ToolResults {
			r.observeResult(tr)
		}
	case ev.Result != nil:
		r.observeEnd(ev.Result)
	}
}

func (r *Recorder) observeAssistant(a *event.Assistant) {
	if !a.MainThread() {
		return // subagents' files still count, via their tool results
	}
	for _, tu := range a.ToolUses {
		if _, dup := r.pending[tu.ID]; dup && tu.ID != "" {
			continue
		}
		c := &ToolCall{Name: tu.Name, Summary: summarize(tu), ID: tu.ID}
		r.calls = append(r.calls, c)
		if len(r.calls) > keepCalls {
			r.calls = r.calls[len(r.calls)-keepCalls:]
		}
		r.callCount++
		if tu.ID != "" {
			r.pending[tu.ID] = pendingCall{call: c, filePath: writtenPath(tu)}
		}
	}
	// "<synthetic>" lines are the CLI's own words ("Prompt is too long").
	if text := strings.TrimSpace(a.Text); text != "" && !strings.HasPrefix(a.Model, "<") {
		if a.MessageID == "" || a.MessageID != r.lastMsgID {
			r.msgParts = r.msgParts[:0]
		}
		r.msgParts = append(r.msgParts, text)
		if n := len(r.msgParts); n > maxParts {
			r.msgParts = append(r.msgParts[:0], r.msgParts[n-maxParts:]...)
		}
		// Redacted before the clip, which could split a secret.
		r.lastMsg = clipMiddle(secrets.Joined(r.msgParts, "\n\n"), messageRunes)
		r.lastMsgID = a.MessageID
	}
}

// maxParts bounds the text blocks of one message kept for its redaction.
const maxParts = 64

func (r *Recorder) observeResult(tr event.ToolResult) {
	p, ok := r.pending[tr.ToolUseID]
	if ok {
		delete(r.pending, tr.ToolUseID)
	}
	if !tr.IsError {
		path := tr.FilePath
		if path == "" {
			path = p.filePath
		}
		r.touch(path)
	}
	if !ok {
		return // a subagent's tool, or a result without its call
	}
	c := p.call
	switch {
	case tr.Interrupted || (tr.IsError && strings.HasPrefix(tr.Content, rejectedPrefix)):
		c.Interrupted = true
	case tr.IsError:
		c.Failed = true
		c.Error = clipMiddle(Redact(strings.TrimSpace(tr.Content)), errorRunes)
		if tr.ContentLen > len(tr.Content) {
			c.Error += "\n… (output truncated at " + strconv.Itoa(len(tr.Content)) + " of " + strconv.Itoa(tr.ContentLen) + " bytes)"
		}
		r.failed = append(r.failed, *c)
		if len(r.failed) > keepFailed {
			r.failed = r.failed[len(r.failed)-keepFailed:]
		}
		r.failedCount++
		if c.ID != "" {
			r.failedIDs[c.ID] = true
		}
	}
}

func (r *Recorder) touch(path string) {
	if path == "" || r.fileSet[path] {
		return
	}
	r.fileSet[path] = true
	r.fileCount++
	if len(r.files) < keepFiles {
		r.files = append(r.files, path)
	}
}

func (r *Recorder) observeEnd(res *event.Result) {
	t := total{cost: res.CostUSD}
	for _, u := range res.ModelUsage {
		t.tokens += u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	}
	if len(res.ModelUsage) == 0 {
		u := res.Usage
		t.tokens = u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	}
	id := res.SessionID
	if id == "" {
		id = r.session
	}
	if id == "" {
		r.anonymous = append(r.anonymous, t)
		return
	}
	// Within one session both figures are cumulative: keep the latest.
	r.totals[id] = t
}

// Totals returns the tokens (input, output and cache, from modelUsage) and
// cost of every session observed, each session's latest result counted once.
func (r *Recorder) Totals() (tokens int64, costUSD float64) {
	for _, t := range r.totals {
		tokens += t.tokens
		costUSD += t.cost
	}
	for _, t := range r.anonymous {
		tokens += t.tokens
		costUSD += t.cost
	}
	return tokens, costUSD
}

// writtenPath is the file a writing tool targets.
func writtenPath(tu event.ToolUse) string {
	switch tu.Name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		if tu.FilePath != "" {
			return tu.FilePath
		}
		return inputField(tu.Input, "file_path", "notebook_path")
	}
	return ""
}

// summarize gives the one line that identifies a call: the command, the
// file, the pattern.
func summarize(tu event.ToolUse) string {
	s := tu.Command
	if s == "" {
		s = tu.FilePath
	}
	if s == "" {
		s = inputField(tu.Input, "command", "file_path", "notebook_path", "path", "pattern", "url", "query",
			"description", "skill", "prompt")
	}
	s = strings.TrimSpace(Redact(s))
	if first, _, multi := strings.Cut(s, "\n"); multi {
		s = strings.TrimSpace(first) + " …"
	}
	return clip(s, summaryRunes)
}

// inputField returns the first non-empty string among keys of a tool input.
func inputField(raw json.RawMessage, keys ...string) string {
	if len(raw) == 0 {
		return ""
	}
	// Each key decoded on its own: a tool's input is the model's JSON, and
	// a key of another type is skipped, not the whole input.
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range keys {
		var s string
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// clip bounds s to n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// clipMiddle bounds s to about n runes keeping its head and tail: compiler
// errors come first, test summaries last.
func clipMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head, tail := n/2, n-n/2
	return string(r[:head]) + "\n… (" + strconv.Itoa(len(r)-head-tail) + " characters cut) …\n" + string(r[len(r)-tail:])
}
