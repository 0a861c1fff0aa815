package orchestrator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// What the CLI says about itself, as the session loop records it: its
// answers to get_context_usage (the window, its own compaction point, what
// fills the context at the start) and the models a cost budget cannot
// price yet. The loop calls these; they only log and record events.

// cliFacts is one session's record of the CLI's answers.
type cliFacts struct {
	phase    string
	session  int
	answered bool   // the first answer was recorded as context_breakdown
	model    string // model of the latest answer
	failed   bool   // a failed request was logged
}

func newCLIFacts(phase string, session int) *cliFacts {
	return &cliFacts{phase: phase, session: session}
}

// observeCLIFacts records a get_context_usage answer: the first of the
// session as a context_breakdown event (a user whose sessions restart early
// sees that MCP tools took 40K), a later one — the model changed — as
// context_window. Any other event is ignored.
func (r *orun) observeCLIFacts(cf *cliFacts, ev runner.Event, snap estimator.Snapshot) {
	cu := ev.ContextUsage
	if ev.Kind != runner.KindContextUsage || cu == nil {
		return
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
