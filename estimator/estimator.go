// Package estimator turns a session's stream events into the figures debussy
// restarts on: how full the context window is, how many tools the main
// thread has called, and whether the CLI started compacting. It is pure:
// events in, snapshots out, no I/O and no clock.
package estimator

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/debussy-dev/debussy/event"
)

// Window sizes used when neither the config nor the stream says better.
const (
	DefaultWindow int64 = 200_000
	LongWindow    int64 = 1_000_000
)

// charsPerToken is the rough ratio used only when a stream carries no usage.
const charsPerToken = 4

// Config says what the estimator knows before the stream. It decides
// nothing: thresholds are compared in one place, package policy.
type Config struct {
	// Window overrides the detected context window when > 0.
	Window int64
	// LearnedWindow is the window an earlier session of the same CLI
	// reported: used until this session's CLI answers, before the model
	// table.
	LearnedWindow int64
	// Known is the CLI's answer to get_context_usage from an earlier
	// session of the run: used while this session's init names the same
	// CLI version and model (the runner does not ask again then).
	Known *event.KnownContext
	// AwaitCLI says the runner asked the CLI at the start: until it
	// answers (or fails to), a window that only the model table assumed is
	// pending (Snapshot.WindowPending), not judged.
	AwaitCLI bool
	// PromptChars is the length of the prompt, used by the character-based
	// fallback for streams without usage.
	PromptChars int
}

// Trigger says why a session should be restarted. The estimator itself
// sets only TriggerCompaction (a fact of the stream); the others are
// policy's decisions, named here for every package.
type Trigger string

const (
	TriggerNone       Trigger = ""
	TriggerContext    Trigger = "context"
	TriggerToolCalls  Trigger = "tool_calls"
	TriggerCompaction Trigger = "compaction"
)

// Snapshot is the estimator's view after an event.
type Snapshot struct {
	Tokens int64 // context of the latest main-thread response
	Window int64 // context window in use
	// WindowPending: Window is only the model table's guess (200K for a
	// name without "[1m]") and the CLI's answer is still awaited, so no
	// decision may rest on it. npm's 2.1.332 answers get_context_usage
	// after the first response when the API is slow, and its default
	// model (claude-opus-5-5) has a 1M window the table cannot know.
	WindowPending bool
	Percent       float64 // Tokens / Window × 100
	Estimated     bool    // Tokens came from the character fallback, not usage
	Model         string  // init's model id, e.g. "claude-opus-4-8[1m]"
	ToolCalls     int     // main-thread tool_use blocks
	SubagentCalls int     // subagents' tool_use blocks
	Messages      int     // distinct main-thread responses
	Trigger       Trigger // TriggerCompaction once the CLI compacted (sticky)
	Reason        string  // human wording of Trigger
	ResultWindow  int64   // result.modelUsage contextWindow of the main model, 0 if not seen
	CostUSD       float64 // latest result's total_cost_usd
	LargeReads    int     // main-thread Read results over LargeReadLines lines or LargeReadBytes
	Delegations   int     // main-thread Task/Agent tool_use blocks
	// CLIWindow is the window the CLI reported (get_context_usage), 0
	// until it answers; the window in use unless context_window is set.
	CLIWindow int64
	// CLICompactAt is where the CLI compacts on its own by its answer
	// (window − autocompact buffer); 0 when it did not answer or will not
	// compact before the window is full. See CompactionPoints.
	CLICompactAt int64
}

// Estimator accumulates one session's events. It is not safe for concurrent
// use; the orchestrator feeds it from its event loop.
type Estimator struct {
	cfg Config

	model        string
	resultWindow int64
	costUSD      float64
	cliWindow    int64 // from the CLI's get_context_usage answer
	cliCompact   int64
	awaiting     bool // an answer is due: see Config.AwaitCLI

	tokens    int64 // latest main-thread context from usage
	haveUsage bool
	lastMsgID string
	seenMsg   map[string]bool
	seenTool  map[string]bool
	messages  int
	toolCalls int
	subCalls  int

	reads       map[string]bool // main-thread Read tool_use ids awaiting their result
	largeReads  int
	delegations int

	// chars feeds the fallback: prompt, tool results and the agent's own
	// output all occupy the context.
	chars       int64
	sawResponse bool

	trigger Trigger
	reason  string
}

// New returns an Estimator for one session.
func New(cfg Config) *Estimator {
	e := &Estimator{
		cfg:      cfg,
		awaiting: cfg.AwaitCLI,
		chars:    int64(max(cfg.PromptChars, 0)),
		seenMsg:  map[string]bool{},
		seenTool: map[string]bool{},
		reads:    map[string]bool{},
	}
	if k := cfg.Known; k != nil && k.Usage.OK() {
		e.cliWindow, e.cliCompact = k.Usage.MaxTokens, k.Usage.CompactionPoint()
	}
	return e
}

// Observe folds one event in and returns the snapshot after it.
func (e *Estimator) Observe(ev event.Event) Snapshot {
	switch {
	case ev.Init != nil:
		if ev.Init.Model != "" {
			e.model = ev.Init.Model
		}
		// Another CLI version or model than the earlier answer's: the
		// runner asks again (contextAsker), and the answer is awaited.
		if k := e.cfg.Known; k != nil && !k.Matches(ev.Init.Version, ev.Init.Model) {
			e.cliWindow, e.cliCompact, e.awaiting = 0, 0, true
			e.cfg.Known = nil
		}
	case ev.Assistant != nil:
		e.observeAssistant(ev.Assistant)
	case len(ev.ToolResults) > 0:
		for _, tr := range ev.ToolResults {
			if tr.ParentToolUseID != "" {
				continue
			}
			e.chars += int64(tr.Size())
			if e.reads[tr.ToolUseID] {
				delete(e.reads, tr.ToolUseID)
				if !tr.IsError && largeRead(tr) {
					e.largeReads++
				}
			}
		}
	case ev.System != nil:
		e.observeSystem(ev.System, ev.Subtype)
	case ev.Result != nil:
		e.observeResult(ev.Result)
	case ev.ContextUsage != nil:
		// A failed request (refused, or unanswered for the runner's
		// timeout) ends the wait: the table's window is then judged.
		e.awaiting = false
		if cu := ev.ContextUsage; cu.OK() {
			e.cliWindow, e.cliCompact = cu.MaxTokens, cu.CompactionPoint()
		}
	}
	return e.Snapshot()
}

func (e *Estimator) observeAssistant(a *event.Assistant) {
	if !a.MainThread() {
		e.subCalls += len(e.newTools(a.ToolUses))
		return
	}
	if e.model == "" && a.Model != "" && !strings.HasPrefix(a.Model, "<") {
		e.model = a.Model // no init line seen; "<synthetic>" is not a model
	}
	e.sawResponse = true
	// One response spans several lines with the same id and usage: the
	// first line sets the figure, later lines of the same id repeat it.
	newMsg := a.MessageID == "" || !e.seenMsg[a.MessageID]
	if newMsg {
		e.messages++
		if a.MessageID != "" {
			e.seenMsg[a.MessageID] = true
		}
	}
	// A zero usage comes from synthetic lines (the CLI's own "Prompt is too
	// long"); it says nothing about the context.
	if ctx := a.Usage.Context(); ctx > 0 && (newMsg || a.MessageID == e.lastMsgID) {
		e.tokens = ctx
		e.haveUsage = true
		e.lastMsgID = a.MessageID
	}
	for _, tu := range e.newTools(a.ToolUses) {
		e.toolCalls++
		switch tu.Name {
		case "Read":
			if tu.ID != "" {
				e.reads[tu.ID] = true
			}
		case "Task", "Agent":
			e.delegations++
		}
	}
	e.chars += int64(len(a.Text))
	for _, tu := range a.ToolUses {
		e.chars += int64(len(tu.Input))
	}
}

// newTools returns the tool_use blocks not seen before, by id: the CLI
// repeats a response's blocks on several lines.
func (e *Estimator) newTools(uses []event.ToolUse) []event.ToolUse {
	var out []event.ToolUse
	for _, tu := range uses {
		if tu.ID != "" {
			if e.seenTool[tu.ID] {
				continue
			}
			e.seenTool[tu.ID] = true
		}
		out = append(out, tu)
	}
	return out
}

func (e *Estimator) observeSystem(s *event.System, evSubtype string) {
	if e.trigger != TriggerNone {
		return
	}
	sub := s.Subtype
	if sub == "" {
		sub = evSubtype
	}
	// Only a compact_boundary is a compaction. status "compacting" is the
	// CLI's attempt: it is also sent when a PreCompact hook blocks it
	// (measured with 2.1.197: the status line follows the blocked
	// callback, no summary request is sent) and before a reactive
	// compaction that fails with "Prompt is too long", which the result
	// reports. The usage of the next response gives the new size.
	if sub == "compact_boundary" {
		e.trigger = TriggerCompaction
		e.reason = "the CLI compacted the context"
		if s.PreTokens > 0 {
			e.reason = fmt.Sprintf("the CLI compacted the context at %s tokens", FormatTokens(s.PreTokens))
		}
	}
}

func (e *Estimator) observeResult(r *event.Result) {
	// total_cost_usd grows over the turns of one session: keep the latest.
	e.costUSD = r.CostUSD
	if w := mainContextWindow(e.model, r.ModelUsage); w > 0 {
		e.resultWindow = w
	}
}

// mainContextWindow picks the main model's contextWindow from modelUsage:
// the entry named like the init model (ignoring "[1m]"), else the entry
// with the most tokens — subagent and helper models use fewer.
func mainContextWindow(model string, mu map[string]event.ModelUsage) int64 {
	if len(mu) == 0 {
		return 0
	}
	base := stripLong(model)
	if base != "" {
		for name, u := range mu {
			if stripLong(name) == base && u.ContextWindow > 0 {
				return u.ContextWindow
			}
		}
	}
	var best int64 = -1
	var bestName string
	var window int64
	for name, u := range mu {
		n := u.InputTokens + u.OutputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		// Ties break by name so map order cannot change the answer.
		if n > best || (n == best && name < bestName) {
			best, bestName, window = n, name, u.ContextWindow
		}
	}
	return window
}

func stripLong(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	return strings.TrimSuffix(m, "[1m]")
}

// WindowForModel is the context window implied by a model id: 1M for a
// "[1m]" id, 200K otherwise.
func WindowForModel(model string) int64 {
	if strings.HasSuffix(strings.ToLower(strings.TrimSpace(model)), "[1m]") {
		return LongWindow
	}
	return DefaultWindow
}

// Snapshot returns the current view without observing anything.
func (e *Estimator) Snapshot() Snapshot {
	s := Snapshot{
		Tokens:        e.tokens,
		Window:        e.window(),
		Model:         e.model,
		ToolCalls:     e.toolCalls,
		SubagentCalls: e.subCalls,
		Messages:      e.messages,
		Trigger:       e.trigger,
		Reason:        e.reason,
		ResultWindow:  e.resultWindow,
		CostUSD:       e.costUSD,
		LargeReads:    e.largeReads,
		Delegations:   e.delegations,
		CLIWindow:     e.cliWindow,
		CLICompactAt:  e.cliCompact,
	}
	if !e.haveUsage && e.sawResponse {
		s.Tokens = (e.chars + charsPerToken - 1) / charsPerToken
		s.Estimated = true
	}
	s.Percent = float64(s.Tokens) * 100 / float64(s.Window)
	s.WindowPending = e.awaiting && !e.windowKnown()
	return s
}

// window: the user's context_window, else what the CLI says (asked at the
// start, or its last result), else what an earlier session learned, else
// the model-name table.
func (e *Estimator) window() int64 {
	switch {
	case e.cfg.Window > 0:
		return e.cfg.Window
	case e.cliWindow > 0:
		return e.cliWindow
	case e.resultWindow > 0:
		return e.resultWindow
	case e.cfg.LearnedWindow > 0:
		return e.cfg.LearnedWindow
	default:
		return WindowForModel(e.model)
	}
}

// windowKnown reports whether window() rests on more than the table's
// default: a source above, or a "[1m]" model name, which says 1M itself.
func (e *Estimator) windowKnown() bool {
	return e.cfg.Window > 0 || e.cliWindow > 0 || e.resultWindow > 0 || e.cfg.LearnedWindow > 0 ||
		WindowForModel(e.model) == LongWindow
}

// FormatPercent prints at most one decimal: 83 → "83", 92.5 → "92.5".
func FormatPercent(p float64) string {
	return trimZero(strconv.FormatFloat(p, 'f', 1, 64))
}

// FormatCap prints context_max_tokens for humans: 0 (no cap) → "none".
func FormatCap(c int) string {
	if c <= 0 {
		return "none"
	}
	return FormatTokens(int64(c))
}

// FormatTokens prints a token count for humans: 200000 → "200K",
// 1000000 → "1M", 83412 → "83.4K", 950 → "950".
func FormatTokens(n int64) string {
	if n < 0 {
		return "-" + FormatTokens(-n)
	}
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 999_950: // would round to "1000.0K"
		return trimZero(strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64)) + "K"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
