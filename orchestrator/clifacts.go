package orchestrator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// What the CLI says about itself, as the session loop records it: its
// answers to get_context_usage (the window, its own compaction point, what
// fills the context at the start) and the models a cost budget cannot
// price yet. The loop calls these; they only log and record events.

// cliFacts is one session's record of the CLI's answers.
type cliFacts struct {
	phase     string
	session   int
	specModel string // the --model the session was started with
	answered  bool   // the first answer was recorded as context_breakdown
	model     string // model of the latest answer
	failed    bool   // a failed request was logged
	init      *runner.Init
	first     *runner.ContextUsage // the first answer, kept for the run once init is seen
	known     *runner.KnownContext // the run's answer the session started with (not asked again)
}

func newCLIFacts(phase string, session int, specModel string, known *runner.KnownContext) *cliFacts {
	return &cliFacts{phase: phase, session: session, specModel: specModel, known: known}
}

// cliAnswers are the run's get_context_usage answers, by the --model a
// session starts with: the next session with that model starts from the
// latest (the runner does not ask again) unless its init names another CLI
// version or model. The request costs the CLI ~20 count_tokens calls to
// the API (2.1.197 holds the first prompt until they return), and the
// answer does not change within a run. Phases share it under --parallel.
type cliAnswers struct {
	mu     sync.Mutex
	bySpec map[string]*runner.KnownContext
}

// known is the answer a session started with specModel may reuse, or nil.
func (c *cliAnswers) known(specModel string) *runner.KnownContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bySpec[specModel]
}

// keep records a session's first answer, when it is about the model the
// session's init names (a fallback model's answer is not the next
// session's).
func (c *cliAnswers) keep(specModel string, init *runner.Init, cu *runner.ContextUsage) {
	if init == nil || !cu.OK() || baseModel(cu.Model) != baseModel(init.Model) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySpec == nil {
		c.bySpec = map[string]*runner.KnownContext{}
	}
	c.bySpec[specModel] = &runner.KnownContext{Version: init.Version, Model: init.Model, Usage: *cu}
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

// observeCLIFacts records a get_context_usage answer: the first of the
// session as a context_breakdown event (a user whose sessions restart early
// sees that MCP tools took 40K), a later one — the model changed — as
// context_window. Any other event is ignored.
func (r *orun) observeCLIFacts(cf *cliFacts, ev runner.Event, snap estimator.Snapshot) {
	if ev.Kind == runner.KindInit && ev.Init != nil && cf.init == nil {
		cf.init = ev.Init
		if cf.first != nil {
			r.answers.keep(cf.specModel, cf.init, cf.first) // 2.1.197 answers before init
		}
		// Not asked again: the session's breakdown is the run's answer.
		if k := cf.known; k != nil && !cf.answered && k.Matches(ev.Init.Version, ev.Init.Model) {
			cf.answered, cf.model = true, k.Usage.Model
			fields := contextFields(&k.Usage)
			fields["phase"], fields["session"], fields["reused"] = cf.phase, cf.session, true
			r.event("context_breakdown", fields)
			r.log.Debug("claude's context at start: the run's answer for this CLI and model", "phase", cf.phase,
				"model", k.Usage.Model, "window", estimator.FormatTokens(k.Usage.MaxTokens))
		}
	}
	cu := ev.ContextUsage
	if ev.Kind != runner.KindContextUsage || cu == nil {
		return
	}
	if cf.first == nil && cu.OK() {
		cf.first = cu
		if cf.init != nil {
			r.answers.keep(cf.specModel, cf.init, cu) // 2.1.332 answers after init
		}
	}
	if !cu.OK() {
		if !cf.failed {
			cf.failed = true
			r.log.Warn("claude did not report its context window: using the model table", "phase", cf.phase,
				"error", cu.Error, "window", estimator.FormatTokens(snap.Window))
		}
		return
	}
	fields := contextFields(cu)
	fields["phase"], fields["session"] = cf.phase, cf.session
	compact := "never (no autocompact buffer)"
	if at := cu.CompactionPoint(); at > 0 {
		compact = estimator.FormatTokens(at)
	}
	if !cf.answered {
		cf.answered, cf.model = true, cu.Model
		r.event("context_breakdown", fields)
		r.log.Info("claude's context at start", "phase", cf.phase, "model", cu.Model, "window", estimator.FormatTokens(cu.MaxTokens),
			"used", estimator.FormatTokens(cu.TotalTokens), "compacts_at", compact, "by", breakdownSummary(cu))
		return
	}
	if cu.Model != cf.model {
		r.log.Warn("claude changed model: window from its answer", "phase", cf.phase, "from", cf.model, "to", cu.Model,
			"window", estimator.FormatTokens(cu.MaxTokens), "compacts_at", compact)
	}
	cf.model = cu.Model
	r.event("context_window", fields)
}

// contextFields are the event fields of an answer.
func contextFields(cu *runner.ContextUsage) map[string]any {
	cats := make([]map[string]any, 0, len(cu.Categories))
	for _, c := range cu.Categories {
		m := map[string]any{"name": c.Name, "tokens": c.Tokens}
		if c.ID != "" {
			m["id"] = c.ID
		}
		if c.Kind != "" {
			m["kind"] = c.Kind
		}
		cats = append(cats, m)
	}
	return map[string]any{
		"model": cu.Model, "window": cu.MaxTokens, "total_tokens": cu.TotalTokens,
		"compact_at": cu.CompactionPoint(), "autocompact_source": cu.AutocompactSource, "categories": cats,
	}
}

// breakdownSummary names what occupies the context, largest first:
// "System tools 14.4K, System prompt 1.6K".
func breakdownSummary(cu *runner.ContextUsage) string {
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

// noteUnpriced says, once per model and budget (budget.Status.Unpriced),
// that a cost budget cannot count a model yet: the price table does not
// know it and the CLI has not priced it in a result so far.
func (r *orun) noteUnpriced(phase string, lists ...[]string) {
	var models []string
	for _, l := range lists {
		models = append(models, l...)
	}
	slices.Sort(models)
	for _, m := range slices.Compact(models) {
		r.log.Warn("cost budget: no price yet for this model; its cost counts from claude's first result for it",
			"phase", phase, "model", m)
		r.event("cost_unpriced", map[string]any{"phase": phase, "model": m})
	}
}
