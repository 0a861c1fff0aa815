package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/runner"
)

// Transcript renders a session's raw stream (session-N.jsonl) for people:
// the agent's text, each tool call with its short input, results cut
// short, the context per turn, and the result line. Feed it lines in order.
type Transcript struct {
	w       io.Writer
	cwd     string          // init's working directory, cut from paths
	lastMsg string          // the main thread's latest response id
	turn    int             // main-thread responses seen
	tools   map[string]bool // tool_use ids already shown (a line may repeat)
	lineNo  int
	// lastText is the main thread's latest text, so the result does not
	// print it a second time.
	lastText string
	told     []Told // not shown yet
	// turnsBefore is t.turn at the previous result: a result covers the
	// turns since (a session may take a second message).
	turnsBefore int
	// structure: show sizes in place of the agent's and its tools' text
	// (Structure).
	structure bool
}

// Told is something debussy told the agent or did to its session (from
// the run's events.jsonl): shown after the turn it happened in, or, for a
// refused tool, as that tool's result.
type Told struct {
	Turn      int    // the turn it followed; 0: shown at the end
	ToolUseID string // a refusal of this call
	Text      string
}

// keptLines is how many lines of a tool result or the final text show.
const keptLines = 3

// NewTranscript writes to w.
func NewTranscript(w io.Writer) *Transcript {
	return &Transcript{w: w, tools: map[string]bool{}}
}

// Structure makes t show structure only, for a pipe or a CI log: each
// tool's name, the path it touched in the repository, its input's and
// result's sizes, the context per turn, the result line — never the
// agent's text, a prompt, a tool's input or output (public's rule).
func (t *Transcript) Structure() { t.structure = true }

// size stands for text t may not show.
func size(what string, n int) string { return fmt.Sprintf("(%s, %d bytes)", what, n) }

// Tell adds what debussy told the agent; each shows once, in place.
func (t *Transcript) Tell(told ...Told) { t.told = append(t.told, told...) }

// showTold prints what is due after turn (every item when all).
func (t *Transcript) showTold(turn int, all bool) {
	kept := t.told[:0]
	for _, it := range t.told {
		if all || (it.Turn > 0 && it.Turn <= turn && it.ToolUseID == "") {
			fmt.Fprintf(t.w, "◆ debussy %s\n", it.Text)
			continue
		}
		kept = append(kept, it)
	}
	t.told = kept
}

// End prints what debussy did that has not shown yet and why the session
// ended ("" when unknown).
func (t *Transcript) End(why string) {
	t.showTold(0, true)
	if why != "" {
		fmt.Fprintf(t.w, "■ ended: %s\n", why)
	}
}

// refusal takes the refusal of the call id out of the pending items.
func (t *Transcript) refusal(id string) (string, bool) {
	for i, it := range t.told {
		if id != "" && it.ToolUseID == id {
			t.told = append(t.told[:i], t.told[i+1:]...)
			return it.Text, true
		}
	}
	return "", false
}

// Line renders one raw line of the stream.
func (t *Transcript) Line(line []byte) {
	t.lineNo++
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	ev, err := runner.Parse(line)
	if err != nil {
		fmt.Fprintf(t.w, "! line %d not readable: %v\n", t.lineNo, err)
		return
	}
	switch ev.Kind {
	case runner.KindInit:
		in := ev.Init
		t.cwd = in.Cwd
		fmt.Fprintf(t.w, "session %s · model %s · claude %s · %s\n", short(in.SessionID, 8), in.Model, in.Version, in.Cwd)
	case runner.KindUser:
		if ev.User.ParentToolUseID == "" {
			if t.structure {
				fmt.Fprintf(t.w, "» %s\n", size("prompt", len(ev.User.Text)))
				break
			}
			fmt.Fprintf(t.w, "» %s\n", t.firstLines(ev.User.Text, len(ev.User.Text), 2, "  "))
		}
	case runner.KindAssistant:
		t.assistant(ev.Assistant)
	case runner.KindToolResult:
		for _, tr := range ev.ToolResults {
			t.toolResult(tr)
		}
	case runner.KindSystem:
		t.system(ev.System)
	case runner.KindHook:
		// PreToolUse and PostToolUse come with every tool: only the rare
		// hooks say something.
		if h := ev.Hook; h.Event != runner.HookPreToolUse && h.Event != runner.HookPostToolUse {
			fmt.Fprintf(t.w, "· hook %s\n", h.Event)
		}
	case runner.KindResult:
		t.result(ev.Result)
	case runner.KindContextUsage:
		t.contextUsage(ev.ContextUsage)
	}
}

// contextUsage shows claude's answer about its window and what fills it.
func (t *Transcript) contextUsage(c *runner.ContextUsage) {
	if !c.OK() {
		fmt.Fprintf(t.w, "· context: %s\n", c.Error)
		return
	}
	compact := "no compaction before the window is full"
	if at := c.CompactionPoint(); at > 0 {
		compact = "compacts at " + formatTokens(at)
	}
	var used []string
	for _, cat := range c.Used() {
		used = append(used, cat.Name+" "+formatTokens(cat.Tokens))
	}
	fmt.Fprintf(t.w, "· context window %s (%s), %s · in use %s: %s\n", formatTokens(c.MaxTokens), c.Model, compact,
		formatTokens(c.TotalTokens), strings.Join(used, ", "))
}

func (t *Transcript) assistant(a *runner.Assistant) {
	indent := "  "
	switch {
	case !a.MainThread():
		indent = "    ⤷ " // a subagent's work, under the Task that started it
	case a.Model == "<synthetic>":
		// The CLI's own reply (an API error, an abort): no request, no turn.
		if txt := text.OneLine(a.Text, 0); a.Error != "" || txt != "" {
			if t.structure && txt != "" {
				txt = size("message", len(txt))
			}
			fmt.Fprintf(t.w, "! claude: %s\n", strings.TrimPrefix(strings.Join([]string{a.Error, txt}, ": "), ": "))
		}
		return
	case a.MessageID == "" || a.MessageID != t.lastMsg:
		t.lastMsg = a.MessageID
		t.showTold(t.turn, false)
		t.turn++
		t.lastText = ""
		// Only the context: output_tokens on assistant lines is a
		// placeholder; the real totals are in the result line.
		fmt.Fprintf(t.w, "● turn %d · context %s\n", t.turn, formatTokens(a.Usage.Context()))
	}
	if a.Error != "" {
		fmt.Fprintf(t.w, "%s! %s\n", indent, a.Error)
	}
	if txt := strings.TrimSpace(a.Text); txt != "" {
		if a.MainThread() {
			t.lastText = strings.TrimSpace(t.lastText + "\n" + txt)
		}
		if t.structure {
			fmt.Fprintf(t.w, "%s%s\n", indent, size("text", len(txt)))
		}
		for _, l := range strings.Split(txt, "\n") {
			if t.structure {
				break
			}
			fmt.Fprintf(t.w, "%s%s\n", indent, strings.TrimRight(l, " \t\r"))
		}
	}
	for _, tu := range a.ToolUses {
		if tu.ID != "" && t.tools[tu.ID] {
			continue
		}
		t.tools[tu.ID] = true
		fmt.Fprintf(t.w, "%s→ %s %s\n", indent, tu.Name, t.toolInput(tu))
	}
}

// toolInput is a tool call's input in one short line.
func (t *Transcript) toolInput(tu runner.ToolUse) string {
	if t.structure {
		in := fmt.Sprintf("(%d bytes of input)", tu.InputSize)
		if p := t.rel(tu.FilePath); p != "" && !filepath.IsAbs(p) {
			in = p + " " + in // a file in the repository
		}
		return in
	}
	switch {
	case tu.Command != "":
		return text.OneLine(tu.Command, 160)
	case tu.FilePath != "":
		return t.rel(tu.FilePath)
	case tu.Input == nil:
		return fmt.Sprintf("(%d bytes of input)", tu.InputSize)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, tu.Input) != nil {
		return text.OneLine(string(tu.Input), 160)
	}
	return cut(buf.String(), 160)
}

func (t *Transcript) toolResult(tr runner.ToolResult) {
	indent := "  "
	if tr.ParentToolUseID != "" {
		indent = "    ⤷ "
	}
	if why, ok := t.refusal(tr.ToolUseID); ok {
		fmt.Fprintf(t.w, "%s← debussy %s\n", indent, why)
		return
	}
	mark := "←"
	switch {
	case tr.IsError:
		mark = "← error:"
	case tr.Interrupted:
		mark = "← interrupted:"
	}
	n := tr.Size()
	if t.structure {
		fmt.Fprintf(t.w, "%s%s %s\n", indent, mark, size("output", n))
		return
	}
	fmt.Fprintf(t.w, "%s%s %s\n", indent, mark, t.firstLines(tr.Content, n, keptLines, indent+"  "))
}

func (t *Transcript) system(s *runner.System) {
	switch {
	case s.Subtype == "api_retry":
		msg := text.OneLine(s.Error, 0)
		if t.structure {
			msg = size("message", len(msg))
		}
		fmt.Fprintf(t.w, "· API error %d, claude retries (%d/%d) in %s: %s\n", s.ErrorStatus, s.Attempt, s.MaxRetries,
			(time.Duration(s.RetryDelayMs) * time.Millisecond).Round(100*time.Millisecond), msg)
	case s.Subtype == "compact_boundary":
		fmt.Fprintf(t.w, "· context compacted (was %s)\n", formatTokens(s.PreTokens))
	case s.Status == "compacting":
		fmt.Fprintf(t.w, "· compacting the context\n")
	case strings.HasPrefix(s.Subtype, "task_") && s.Description != "":
		what := text.OneLine(s.Description, 0)
		if t.structure {
			what = size("description", len(what))
		}
		fmt.Fprintf(t.w, "    ⤷ %s: %s\n", strings.TrimPrefix(s.Subtype, "task_"), what)
	}
}

func (t *Transcript) result(r *runner.Result) {
	what := r.Subtype
	if r.IsError {
		what = "error"
		if r.Subtype != "success" && r.Subtype != "" {
			what += ": " + r.Subtype
		}
		if r.APIErrorStatus != 0 {
			what += fmt.Sprintf(" (API status %d)", r.APIErrorStatus)
		}
	}
	if r.TerminalReason != "" && r.TerminalReason != "completed" {
		what += " (" + r.TerminalReason + ")"
	}
	u := r.Usage
	t.showTold(t.turn, false)
	// The turns numbered above since the last result: the CLI's num_turns
	// counts differently, so it disagreed with the numbering.
	turns := t.turn - t.turnsBefore
	t.turnsBefore = t.turn
	fmt.Fprintf(t.w, "■ result %s · %s · %s · $%.2f · tokens in %s, out %s\n", what, plural(turns, "turn"),
		(time.Duration(r.DurationMs) * time.Millisecond).Round(100*time.Millisecond), r.CostUSD,
		formatTokens(u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens), formatTokens(u.OutputTokens))
	// The final text is the agent's last message, shown above already.
	if txt := strings.TrimSpace(r.Text); txt != "" && txt != t.lastText && !strings.HasSuffix(t.lastText, txt) {
		if t.structure {
			fmt.Fprintf(t.w, "  %s\n", size("text", len(txt)))
			return
		}
		fmt.Fprintf(t.w, "  %s\n", t.firstLines(txt, len(txt), keptLines, "  "))
	}
}

// firstLines keeps max lines of s (each cut to 200 columns), indenting the
// ones after the first, and says how much was left out of total bytes.
func (t *Transcript) firstLines(s string, total, max int, indent string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "(empty)"
	}
	lines := strings.Split(s, "\n")
	more := len(lines) - max
	if more > 0 {
		lines = lines[:max]
	}
	for i, l := range lines {
		l = cut(strings.TrimRight(l, " \t\r"), 200)
		if i > 0 && l != "" {
			l = indent + l // a blank line keeps no trailing indent
		}
		lines[i] = l
	}
	out := strings.Join(lines, "\n")
	switch {
	case more > 0:
		noun := "lines"
		if more == 1 {
			noun = "line"
		}
		out += fmt.Sprintf("\n%s… %d more %s (%d bytes in all)", indent, more, noun, total)
	case total > len(s)+1:
		out += fmt.Sprintf(" … (%d bytes in all)", total)
	}
	return out
}

func (t *Transcript) rel(path string) string {
	if t.cwd != "" {
		if r, ok := strings.CutPrefix(path, strings.TrimSuffix(t.cwd, "/")+"/"); ok {
			return r
		}
	}
	return path
}

// cut keeps at most n runes of s.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
