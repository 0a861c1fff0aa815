package session

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
)

// What the CLI says about itself, as a session records it: its answers to
// get_context_usage (the window, its own compaction point, what fills the
// context at the start), and what a person watching the run wants to see
// of the stream. These only record and log.

// Answers are a run's get_context_usage answers, by the --model a session
// starts with: the next session with that model starts from the latest
// (the runner does not ask again) unless its init names another CLI
// version or model. The request costs the CLI ~20 count_tokens calls to
// the API (2.1.197 holds the first prompt until they return), and the
// answer does not change within a run. Phases share it under --parallel.
type Answers struct {
	mu     sync.Mutex
	bySpec map[string]*event.KnownContext
	at     map[string]time.Time // when each answer was given
}

// Seed starts the run with answers an earlier run kept (at is when each
// was given); a session's own answer replaces one.
func (c *Answers) Seed(specModel string, k event.KnownContext, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.bySpec[specModel], c.at[specModel] = &k, at
}

// Each calls fn for every answer, with when it was given.
func (c *Answers) Each(fn func(specModel string, k event.KnownContext, at time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for m, k := range c.bySpec {
		fn(m, *k, c.at[m])
	}
}

func (c *Answers) init() {
	if c.bySpec == nil {
		c.bySpec, c.at = map[string]*event.KnownContext{}, map[string]time.Time{}
	}
}

// Known is the answer a session started with specModel may reuse, or nil.
func (c *Answers) Known(specModel string) *event.KnownContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bySpec[specModel]
}

// keep records a session's first answer, when it is about the model the
// session's init names (a fallback model's answer is not the next
// session's).
func (c *Answers) keep(specModel string, init *event.Init, cu *event.ContextUsage) {
	if init == nil || !cu.OK() || baseModel(cu.Model) != baseModel(init.Model) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.bySpec[specModel] = &event.KnownContext{Version: init.Version, Model: init.Model, Usage: *cu}
	c.at[specModel] = time.Now()
}

// baseModel compares a model across the CLI's spellings
// ("claude-opus-4-8[1m]" in init and answers, "claude-opus-4-8" in
// responses).
func baseModel(m string) string {
	m = strings.ToLower(strings.TrimSpace(m))
	if i := strings.IndexByte(m, '['); i > 0 {
		m = m[:i]
	}
	return m
}

// cliFacts is one session's record of the CLI's answers.
type cliFacts struct {
	answered bool   // the first answer was recorded as context_breakdown
	model    string // model of the latest answer
	failed   bool   // a failed request was logged
	init     *event.Init
	first    *event.ContextUsage // the first answer, kept for the run once init is seen
	lastBand int                 // the context's last logged tenth
	// tools are the main thread's tool calls not yet answered: their name
	// and start, for the result's line.
	tools map[string]toolCall
	// calls are the main thread's tool uses without a result yet, kept
	// while the run is bounded: a result is judged with its call.
	calls map[string]event.ToolUse
}

// toolCall is a main-thread tool call waiting for its result.
type toolCall struct {
	name  string
	start time.Time
}

// observeCLI records a get_context_usage answer: the first of the session
// as a context_breakdown event (a user whose sessions restart early sees
// that MCP tools took 40K), a later one — the model changed — as
// context_window.
func (s *Session) observeCLI(ev event.Event, snap estimator.Snapshot) {
	cf, known := &s.cli, s.known
	if ev.Kind == event.KindInit && ev.Init != nil && cf.init == nil {
		cf.init = ev.Init
		if cf.first != nil && s.cfg.Answers != nil {
			s.cfg.Answers.keep(s.cfg.Spec.Model, cf.init, cf.first) // 2.1.197 answers before init
		}
		// Not asked again: the session's breakdown is the run's answer.
		if known != nil && !cf.answered && known.Matches(ev.Init.Version, ev.Init.Model) {
			cf.answered, cf.model = true, known.Usage.Model
			s.record(record.ContextBreakdown{Session: s.stamp(true), ContextUsage: contextUsage(&known.Usage), Reused: true})
			s.log(policy.LevelDebug, "claude's context at start: the run's answer for this CLI and model",
				"model", known.Usage.Model, "window", estimator.FormatTokens(known.Usage.MaxTokens))
		}
	}
	cu := ev.ContextUsage
	if ev.Kind != event.KindContextUsage || cu == nil {
		return
	}
	if cf.first == nil && cu.OK() {
		cf.first = cu
		if cf.init != nil && s.cfg.Answers != nil {
			s.cfg.Answers.keep(s.cfg.Spec.Model, cf.init, cu) // 2.1.332 answers after init
		}
	}
	if !cu.OK() {
		if !cf.failed {
			cf.failed = true
			s.log(policy.LevelWarn, "claude did not report its context window: using the model table",
				"error", cu.Error, "window", estimator.FormatTokens(snap.Window))
		}
		return
	}
	usage := contextUsage(cu)
	compact := "never (no autocompact buffer)"
	if at := cu.CompactionPoint(); at > 0 {
		compact = estimator.FormatTokens(at)
	}
	if !cf.answered {
		cf.answered, cf.model = true, cu.Model
		s.record(record.ContextBreakdown{Session: s.stamp(true), ContextUsage: usage})
		s.log(policy.LevelInfo, "claude's context at start", "model", cu.Model, "window", estimator.FormatTokens(cu.MaxTokens),
			"used", estimator.FormatTokens(cu.TotalTokens), "compacts_at", compact, "by", breakdownSummary(cu))
		return
	}
	if cu.Model != cf.model {
		s.log(policy.LevelWarn, "claude changed model: window from its answer", "from", cf.model, "to", cu.Model,
			"window", estimator.FormatTokens(cu.MaxTokens), "compacts_at", compact)
	}
	cf.model = cu.Model
	s.record(record.ContextWindow{Session: s.stamp(true), ContextUsage: usage})
}

// contextUsage is an answer as events.jsonl records it.
func contextUsage(cu *event.ContextUsage) record.ContextUsage {
	cats := make([]record.ContextCategory, 0, len(cu.Categories))
	for _, c := range cu.Categories {
		cats = append(cats, record.ContextCategory{ID: c.ID, Kind: c.Kind, Name: c.Name, Tokens: c.Tokens})
	}
	return record.ContextUsage{Model: cu.Model, Window: cu.MaxTokens, TotalTokens: cu.TotalTokens,
		CompactAt: cu.CompactionPoint(), AutocompactSource: cu.AutocompactSource, Categories: cats}
}

// breakdownSummary names what occupies the context, largest first:
// "System tools 14.4K, System prompt 1.6K".
func breakdownSummary(cu *event.ContextUsage) string {
	var parts []string
	for _, c := range cu.Used() {
		parts = append(parts, fmt.Sprintf("%s %s", c.Name, estimator.FormatTokens(c.Tokens)))
	}
	return strings.Join(parts, ", ")
}

// learnedWindow is the window a session found out from the CLI (its
// get_context_usage answer, else a result's modelUsage), for the next
// session to start from; 0 when it learned nothing.
func learnedWindow(snap estimator.Snapshot) int64 {
	return cmp.Or(snap.CLIWindow, snap.ResultWindow)
}

// logEvent logs what a person watching the run wants to see of an event.
func (s *Session) logEvent(ev event.Event, snap estimator.Snapshot) {
	switch ev.Kind {
	case event.KindInit:
		window := estimator.FormatTokens(snap.Window)
		if snap.WindowPending {
			window = "asked of claude"
		}
		s.log(policy.LevelInfo, "session started", "session", s.cfg.Number, "model", ev.Init.Model, "window", window, "claude", ev.Init.Version)
	case event.KindAssistant:
		for _, tu := range ev.Assistant.ToolUses {
			if !ev.Assistant.MainThread() {
				continue
			}
			args := []any{"name", tu.Name, "input", strings.TrimPrefix(ToolSummary(tu), s.cfg.Root+"/"), "size", tu.InputSize}
			if p := s.inRepo(tu.FilePath); p != "" {
				args = append(args, "path", p)
			}
			s.log(policy.LevelInfo, "tool", args...)
			if s.cli.tools == nil {
				s.cli.tools = map[string]toolCall{}
			}
			s.cli.tools[tu.ID] = toolCall{tu.Name, s.now()}
			if s.cfg.Boundary != nil {
				if s.cli.calls == nil {
					s.cli.calls = map[string]event.ToolUse{}
				}
				s.cli.calls[tu.ID] = tu
			}
		}
	case event.KindToolResult:
		for _, tr := range ev.ToolResults {
			if call, ok := s.cli.tools[tr.ToolUseID]; ok && tr.ParentToolUseID == "" {
				delete(s.cli.tools, tr.ToolUseID)
				exit := "ok"
				switch {
				case tr.Interrupted:
					exit = "interrupted"
				case tr.IsError:
					exit = "error"
				}
				s.log(policy.LevelInfo, "tool ended", "name", call.name, "exit", exit, "took", s.now().Sub(call.start).Round(time.Millisecond), "size", tr.Size())
			}
			// claude's permission mode refusing a call: the log says so
			// (the agent only sees an error and may look stuck).
			if tr.IsError && tr.ParentToolUseID == "" && permissionRefusal(tr.Content) {
				s.log(policy.LevelWarn, "claude refused a tool call (permission_mode; allowed_tools lists what it lets run)",
					"result", text.OneLine(tr.Content, 160))
			}
			s.boundaryRefusal(tr)
		}
	case event.KindSystem:
		sys := ev.System
		switch {
		case sys.Subtype == "api_retry":
			s.log(policy.LevelWarn, "API error: claude retries", "api_status", sys.ErrorStatus, "error", sys.Error,
				"retry_in", time.Duration(sys.RetryDelayMs*float64(time.Millisecond)).Round(100*time.Millisecond),
				"attempt", sys.Attempt, "max_attempts", sys.MaxRetries)
		case sys.Status == "compacting":
			// An attempt: PreCompact may have blocked it, or it fails into
			// "Prompt is too long" (the result says so).
			allowed := s.cfg.Policy.AllowCompaction
			s.log(policy.LevelDebug, "claude started compacting its context", "allowed", allowed)
			s.record(record.CompactionAttempt{Session: s.stamp(true), Allowed: allowed})
		case sys.Subtype == "compact_boundary":
			allowed := s.cfg.Policy.AllowCompaction
			s.log(policy.LevelWarn, "claude compacted its context", "allowed", allowed, "pre_tokens", sys.PreTokens)
			s.record(record.Compaction{Session: s.stamp(true), PreTokens: sys.PreTokens, Allowed: allowed})
		}
	}
	// A window still pending is the model table's guess: its percent
	// ("150 % of 200K" for a 1M model) is not shown.
	if snap.Tokens > 0 && snap.Window > 0 && !snap.WindowPending {
		if band := int(snap.Percent / 10); band != s.cli.lastBand {
			s.cli.lastBand = band
			s.log(policy.LevelInfo, "context", "percent", int(snap.Percent), "window", estimator.FormatTokens(snap.Window),
				"estimated", snap.Estimated, "tokens", snap.Tokens, "tool_calls", snap.ToolCalls, "zone", string(s.pol.Zone()))
		}
	}
	if ev.Kind == event.KindInit || ev.Kind == event.KindContextUsage {
		s.warnCompactionPoint(snap)
	}
}

// boundaryRefusal logs a tool result that shows the sandbox's refusal (a
// read-only file system, a hidden path, a cut connection) as the
// boundary's, with its call: the agent met the boundary, the tool did not
// break. debussy's own refusals before the call are logged by the policy.
func (s *Session) boundaryRefusal(tr event.ToolResult) {
	tu, ok := s.cli.calls[tr.ToolUseID]
	if !ok {
		return
	}
	delete(s.cli.calls, tr.ToolUseID)
	if strings.Contains(tr.Content, "debussy sandbox: ") { // 2.1.332 prefixes "PreToolUse:Write hook error: "
		return // refused before it ran: logged then
	}
	kind := s.cfg.Boundary(tu.Name, tu.Input, tr.Content)
	if kind == "" {
		return
	}
	what := map[string]string{
		"write":   "a write outside the places this run may write",
		"read":    "a read of a hidden credential path",
		"network": "a connection outside sandbox_allow_domains",
	}[kind]
	s.log(policy.LevelWarn, "sandbox boundary refused a tool call: "+what, "tool", tu.Name,
		"input", strings.TrimPrefix(ToolSummary(tu), s.cfg.Root+"/"), "result", text.OneLine(tr.Content, 160))
}

// inRepo is path relative to the repository when it lies inside it, else
// "": the log names the files a tool touched in the repository, not the
// machine's other paths.
func (s *Session) inRepo(path string) string {
	if path == "" || s.cfg.Root == "" {
		return ""
	}
	rel, err := filepath.Rel(s.cfg.Root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return ""
	}
	return rel
}

// ToolSummary is a tool call in one line: its command or its file.
func ToolSummary(tu event.ToolUse) string {
	switch {
	case tu.Command != "":
		return text.OneLine(tu.Command, 200)
	case tu.FilePath != "":
		return tu.FilePath
	}
	return ""
}

// warnCompactionPoint warns, once per phase (Config.PointsChecked), when
// context_threshold lies above the point where the CLI compacts the
// conversation or refuses the prompt as too long for this window: the
// restart would come too late.
func (s *Session) warnCompactionPoint(snap estimator.Snapshot) {
	pc := s.cfg.Policy
	if s.pointsChecked || snap.Window <= 0 || snap.WindowPending || pc.ContextThreshold >= 100 {
		return
	}
	s.pointsChecked = true
	at := policy.ContextLimitOf(pc.ContextThreshold, pc.ContextMaxTokens, snap.Window).At
	// The CLI's own numbers when it answered get_context_usage; compact
	// is 0 when it said it will not compact on its own.
	compact, tooLong := estimator.CompactionPoints(snap)
	window := estimator.FormatTokens(snap.Window)
	switch {
	case at >= tooLong:
		s.log(policy.LevelWarn, "context_threshold lies above the point where claude refuses the prompt as too long: sessions will fail before debussy restarts them; lower context_threshold",
			"context_threshold", pc.ContextThreshold, "window", window, "too_long_at", estimator.FormatTokens(tooLong))
	case compact <= 0:
	case at >= compact && pc.AllowCompaction:
		s.log(policy.LevelWarn, "context_threshold lies above claude's own compaction point: claude will compact before debussy restarts the session",
			"context_threshold", pc.ContextThreshold, "window", window, "compacts_at", estimator.FormatTokens(compact))
	case at >= compact:
		s.log(policy.LevelWarn, "context_threshold lies above claude's own compaction point; debussy blocks that compaction (allow_compaction: false)",
			"context_threshold", pc.ContextThreshold, "window", window, "compacts_at", estimator.FormatTokens(compact))
	}
}

// permissionRefusal reports whether a tool result is claude refusing the
// call for permission (measured: "This command requires approval" on
// 2.1.197 and 2.1.332 under acceptEdits; "…requested permissions to use
// …, but you haven't granted it yet" for other tools).
func permissionRefusal(content string) bool {
	return strings.Contains(content, "requires approval") || strings.Contains(content, "haven't granted it yet")
}
