package history

import (
	"cmp"
	"strings"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// sessionLog is one session's raw stream (the runner's log), digested.
type sessionLog struct {
	turns      []Turn
	at         []int // the estimator's message n (from 1) is turns[at[n-1]]
	side       budget.Tokens
	model      string
	version    string
	sessionID  string
	window     int64
	windowFrom string
	cost       float64
	bad        int
}

// readSessionLog reads a session's raw stream with the runner's own
// parser, each response counted once by its message id, the way the
// estimator counts it.
func readSessionLog(path string) (sessionLog, error) {
	var lg sessionLog
	var tb turnBuilder
	bad, err := eachLine(path, func(line []byte) bool {
		ev, perr := runner.Parse(line)
		if perr == nil {
			lg.observe(ev, &tb)
		}
		return perr == nil
	})
	lg.bad = bad
	if err != nil {
		return lg, err
	}
	lg.turns, lg.side, lg.at = tb.finish(), tb.side, tb.at
	return lg, nil
}

func (lg *sessionLog) observe(ev runner.Event, tb *turnBuilder) {
	switch {
	case ev.Init != nil:
		lg.model = cmp.Or(ev.Init.Model, lg.model)
		lg.version, lg.sessionID = cmp.Or(ev.Init.Version, lg.version), cmp.Or(ev.Init.SessionID, lg.sessionID)
	case ev.ContextUsage != nil:
		if ev.ContextUsage.OK() {
			lg.window, lg.windowFrom = ev.ContextUsage.MaxTokens, "cli"
		}
	case ev.Result != nil && ev.Kind == runner.KindResult:
		// total_cost_usd grows over the turns of one session: the latest.
		lg.cost = ev.Result.CostUSD
		for name, mu := range ev.Result.ModelUsage {
			if mu.ContextWindow > 0 && (lg.windowFrom != "cli") && sameModel(name, lg.model) {
				lg.window, lg.windowFrom = mu.ContextWindow, "result"
			}
		}
		tb.reportedOutput = ev.Result.Usage.OutputTokens
	default:
		tb.observe(ev)
	}
}

// observe folds a response, tool results or a compaction into the turns:
// what a session's raw stream and a Claude Code transcript share (both
// read by runner.Parse).
func (tb *turnBuilder) observe(ev runner.Event) {
	switch {
	case ev.Assistant != nil:
		a := ev.Assistant
		if strings.HasPrefix(a.Model, "<") {
			// "<synthetic>": the CLI's own reply, no API call, but a
			// message the estimator counts (events name turns by it).
			if a.MainThread() {
				tb.count(a.MessageID)
			}
			return
		}
		uses := make([]Call, 0, len(a.ToolUses))
		for _, tu := range a.ToolUses {
			uses = append(uses, Call{ID: tu.ID, Name: tu.Name, Input: tu.Input, FilePath: tu.FilePath, Command: tu.Command, NoResult: true})
		}
		usage := budget.Tokens{Input: a.Usage.InputTokens, Output: a.Usage.OutputTokens,
			CacheWrite: a.Usage.CacheCreationInputTokens, CacheRead: a.Usage.CacheReadInputTokens}
		chars := len(a.Text)
		for _, tu := range a.ToolUses {
			chars += max(len(tu.Input), tu.InputSize)
		}
		tb.response(a.MessageID, !a.MainThread(), usage, uses, chars)
	case len(ev.ToolResults) > 0:
		for _, tr := range ev.ToolResults {
			if tr.ParentToolUseID == "" {
				tb.result(tr.ToolUseID, tr.Content, tr.Size(), tr.IsError)
			}
		}
	case ev.System != nil && ev.System.Subtype == "compact_boundary":
		tb.compacted = true
	}
}

func sameModel(a, b string) bool {
	norm := func(s string) string { return strings.TrimSuffix(strings.ToLower(s), "[1m]") }
	return b == "" || norm(a) == norm(b)
}

// turnBuilder collects a session's responses in order, one turn per
// main-thread message id, whatever lines carry it.
type turnBuilder struct {
	turns     []Turn
	chars     []int
	byMsg     map[string]int    // main-thread message id → turn
	sideMsg   map[string]bool   // subagents' message ids counted
	byCall    map[string][2]int // tool_use id → turn, call
	side      budget.Tokens
	compacted bool // a compaction came since the last main response
	// at maps the estimator's count of main-thread messages (which the
	// events' turn numbers are) to turns: synthetic replies count there
	// and are no turn here.
	at      []int
	counted map[string]bool
	// reportedOutput is the CLI's output total for the session, 0 when
	// unknown: the placeholder output of stream lines is scaled to it.
	reportedOutput int64
}

func (b *turnBuilder) response(id string, sub bool, u budget.Tokens, calls []Call, chars int) {
	if b.byMsg == nil {
		b.byMsg, b.sideMsg, b.byCall = map[string]int{}, map[string]bool{}, map[string][2]int{}
	}
	if sub {
		if id == "" || !b.sideMsg[id] {
			b.side = b.side.Add(u)
			if id != "" {
				b.sideMsg[id] = true
			}
		}
		return
	}
	counted := b.count(id)
	i, seen := b.byMsg[id]
	if !seen || id == "" {
		i = len(b.turns)
		b.turns = append(b.turns, Turn{Usage: u, Compacted: b.compacted})
		b.chars = append(b.chars, 0)
		b.compacted = false
		if id != "" {
			b.byMsg[id] = i
		}
	} else {
		// Later lines of one response repeat its usage; a transcript's
		// last line of it has the final output count.
		t := &b.turns[i]
		t.Usage.Output = max(t.Usage.Output, u.Output)
	}
	b.chars[i] += chars
	if counted {
		b.at[len(b.at)-1] = i
	}
	t := &b.turns[i]
	for _, c := range calls {
		if _, dup := b.byCall[c.ID]; dup && c.ID != "" {
			continue
		}
		if c.ID != "" {
			b.byCall[c.ID] = [2]int{i, len(t.Calls)}
		}
		t.Calls = append(t.Calls, c)
	}
}

// count counts a main-thread message as the estimator does (each id
// once, a line without one every time) and reports whether it is new; a
// new one points at the last turn until response makes its own.
func (b *turnBuilder) count(id string) bool {
	if b.counted == nil {
		b.counted = map[string]bool{}
	}
	if id != "" && b.counted[id] {
		return false
	}
	if id != "" {
		b.counted[id] = true
	}
	b.at = append(b.at, len(b.turns)-1)
	return true
}

func (b *turnBuilder) result(id, content string, n int, isError bool) {
	at, ok := b.byCall[id]
	if !ok {
		return
	}
	c := &b.turns[at[0]].Calls[at[1]]
	c.Result, c.ResultLen, c.IsError, c.NoResult = content, max(n, len(content)), isError, false
}

// finish sets each turn's output: what its lines said when that is more
// than the stream's placeholder, else the text written / 4, scaled to the
// CLI's total when it gave one.
func (b *turnBuilder) finish() []Turn {
	var est int64
	for i := range b.turns {
		t := &b.turns[i]
		t.Usage.Output = max(t.Usage.Output, int64((b.chars[i]+3)/4))
		est += t.Usage.Output
	}
	main := b.reportedOutput - b.side.Output
	if main > 0 && est > 0 && b.reportedOutput > 0 {
		var sum int64
		for i := range b.turns {
			t := &b.turns[i]
			t.Usage.Output = t.Usage.Output * main / est
			sum += t.Usage.Output
		}
		if n := len(b.turns); n > 0 {
			b.turns[n-1].Usage.Output += main - sum // rounding
		}
	}
	return b.turns
}

// guessWindow is the window when no line said it: 1M for a "[1m]" model
// or a context beyond 200K, else 200K.
func guessWindow(model string, sessions []Session) (int64, string) {
	if estimator.WindowForModel(model) == estimator.LongWindow {
		return estimator.LongWindow, "model"
	}
	for _, s := range sessions {
		for _, t := range s.Turns {
			if t.Context() > estimator.DefaultWindow {
				return estimator.LongWindow, "context"
			}
		}
	}
	return estimator.DefaultWindow, "default"
}
