package budget

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/event"
)

// Tokens is a token count by kind.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheWrite int64 `json:"cache_write"`
	CacheRead  int64 `json:"cache_read"`
}

// Processed is every token an API call handled: what budgets count.
func (t Tokens) Processed() int64 { return t.Input + t.Output + t.CacheWrite + t.CacheRead }

// Add returns the sum of t and o.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{t.Input + o.Input, t.Output + o.Output, t.CacheWrite + o.CacheWrite, t.CacheRead + o.CacheRead}
}

func fromUsage(u event.Usage) Tokens {
	return Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheWrite: u.CacheCreationInputTokens, CacheRead: u.CacheReadInputTokens}
}

func fromModelUsage(u event.ModelUsage) Tokens {
	return Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheWrite: u.CacheCreationInputTokens, CacheRead: u.CacheReadInputTokens}
}

// Totals is what one or more sessions spent.
type Totals struct {
	Tokens Tokens `json:"tokens"`
	// CostUSD is computed from the price table.
	CostUSD float64 `json:"cost_usd"`
	// ReportedCostUSD is the CLI's own total_cost_usd, summed over the
	// sessions that ended with a result; Reconciled says every session
	// did. Both are kept so a price table gone stale shows as a gap.
	ReportedCostUSD float64 `json:"reported_cost_usd"`
	Reconciled      bool    `json:"reconciled"`
	// Turns are distinct API responses, main thread and subagents.
	Turns int `json:"turns"`
	// OutputEstimated: some output tokens are estimated from the text
	// (assistant lines carry a placeholder until the result says better).
	OutputEstimated bool `json:"output_estimated,omitempty"`
	// UnknownModels are not in the price table: they are priced by the
	// CLI's own figures (see observed.go).
	UnknownModels []string `json:"unknown_models,omitempty"`
	// UnpricedModels are unknown models that have used tokens but have no
	// price yet (no result of theirs so far): their cost is not in CostUSD.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// Processed is Tokens.Processed.
func (t Totals) Processed() int64 { return t.Tokens.Processed() }

// CostDiff is computed minus reported cost, over reconciled sessions only
// meaningful when Reconciled.
func (t Totals) CostDiff() float64 { return t.CostUSD - t.ReportedCostUSD }

// Add sums two Totals (sessions of one phase, phases of one run).
func (t Totals) Add(o Totals) Totals {
	s := Totals{
		Tokens:          t.Tokens.Add(o.Tokens),
		CostUSD:         t.CostUSD + o.CostUSD,
		ReportedCostUSD: t.ReportedCostUSD + o.ReportedCostUSD,
		Turns:           t.Turns + o.Turns,
		OutputEstimated: t.OutputEstimated || o.OutputEstimated,
	}
	// A zero Totals is the identity: it has seen no session to reconcile.
	switch {
	case t.isZero():
		s.Reconciled = o.Reconciled
	case o.isZero():
		s.Reconciled = t.Reconciled
	default:
		s.Reconciled = t.Reconciled && o.Reconciled
	}
	s.UnknownModels = mergeNames(t.UnknownModels, o.UnknownModels)
	s.UnpricedModels = mergeNames(t.UnpricedModels, o.UnpricedModels)
	return s
}

func (t Totals) isZero() bool {
	return t.Tokens == Tokens{} && t.Turns == 0 && t.CostUSD == 0 && t.ReportedCostUSD == 0
}

func mergeNames(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// charsPerToken estimates output tokens from text while the CLI reports
// only a placeholder.
const charsPerToken = 4

// response is one API response, however many assistant lines carry it.
type response struct {
	model string
	usage Tokens // per kind, the largest seen on its lines
	chars int    // text and tool input of all its lines
}

func (r response) tokens() Tokens {
	t := r.usage
	// output_tokens on assistant lines is a placeholder (1) unless the
	// stream has partial messages; the text written is a floor.
	t.Output = max(t.Output, int64((r.chars+charsPerToken-1)/charsPerToken))
	return t
}

// Accountant counts what one claude process spent. Feed it every event of
// the process, in order; it is not safe for concurrent use.
//
// While the session runs it counts each API response once by message id
// (one response spans several assistant lines with the same usage), main
// thread and subagents alike. At each result it replaces those live figures
// with the result's modelUsage — cumulative over the process, with the real
// output tokens and any calls the stream does not show — and keeps the CLI's
// total_cost_usd beside the computed cost.
type Accountant struct {
	prices Prices
	model  string // init's model: the price of lines without one

	seen    map[string]bool
	pending []response // since the latest result
	byID    map[string]int
	turns   int

	base       Tokens // from the latest result
	baseCost   float64
	reported   float64
	reconciled bool
	unknown    map[string]bool
	observed   map[string]Price // unknown models' price per token, as the CLI charged it
	stream     Tokens           // every response's usage as the lines said
}

// NewAccountant returns an Accountant using prices (DefaultPrices when nil).
func NewAccountant(prices Prices) *Accountant {
	if prices == nil {
		prices = DefaultPrices()
	}
	return &Accountant{prices: prices, seen: map[string]bool{}, byID: map[string]int{}, unknown: map[string]bool{},
		observed: map[string]Price{}}
}

// Observe folds one event in.
func (a *Accountant) Observe(ev event.Event) {
	switch {
	case ev.Init != nil:
		if ev.Init.Model != "" {
			a.model = ev.Init.Model
		}
	case ev.Assistant != nil:
		a.observeAssistant(ev.Assistant)
	case ev.Result != nil:
		a.observeResult(ev.Result)
	}
}

func (a *Accountant) observeAssistant(m *event.Assistant) {
	u := fromUsage(m.Usage)
	// "<synthetic>" lines are the CLI's own words ("Prompt is too long"):
	// no API call, no cost.
	if strings.HasPrefix(m.Model, "<") || (u == Tokens{} && m.MessageID == "") {
		return
	}
	chars := len(m.Text)
	for _, tu := range m.ToolUses {
		chars += max(tu.InputSize, len(tu.Input))
	}
	model := m.Model
	if model == "" {
		model = a.model
	}
	if m.MessageID != "" {
		if i, ok := a.byID[m.MessageID]; ok {
			r := &a.pending[i]
			grown := maxTokens(r.usage, u)
			a.stream = a.stream.Add(grown.sub(r.usage))
			r.usage = grown
			r.chars += chars
			return
		}
		if a.seen[m.MessageID] {
			return // already reconciled by a result
		}
		a.seen[m.MessageID] = true
		a.byID[m.MessageID] = len(a.pending)
	}
	a.stream = a.stream.Add(u)
	a.pending = append(a.pending, response{model: model, usage: u, chars: chars})
	a.turns++
}

func (t Tokens) sub(o Tokens) Tokens {
	return Tokens{t.Input - o.Input, t.Output - o.Output, t.CacheWrite - o.CacheWrite, t.CacheRead - o.CacheRead}
}

func maxTokens(a, b Tokens) Tokens {
	return Tokens{max(a.Input, b.Input), max(a.Output, b.Output), max(a.CacheWrite, b.CacheWrite), max(a.CacheRead, b.CacheRead)}
}

func (a *Accountant) observeResult(r *event.Result) {
	switch {
	case len(r.ModelUsage) > 0:
		// Cumulative over the process: replaces, never adds.
		a.base, a.baseCost = Tokens{}, 0
		for _, name := range slices.Sorted(maps.Keys(r.ModelUsage)) {
			mu := r.ModelUsage[name]
			t := fromModelUsage(mu)
			a.base = a.base.Add(t)
			if p, known := a.prices.Lookup(name); known {
				a.baseCost += p.Cost(t)
				continue
			}
			a.unknown[name] = true
			cost := mu.CostUSD
			if cost == 0 && len(r.ModelUsage) == 1 {
				cost = r.CostUSD // a CLI that gives only the total
			}
			a.baseCost += cost
			if p, ok := impliedPrice(t, cost); ok {
				a.observed[normalize(name)] = p
			}
		}
	case fromUsage(r.Usage) != Tokens{}:
		// No modelUsage (older CLIs): usage is the sum over this turn's
		// calls, so it adds to what earlier results counted.
		t := fromUsage(r.Usage)
		a.base = a.base.Add(t)
		model := a.mainModel()
		if p, known := a.prices.Lookup(model); known {
			a.baseCost += p.Cost(t)
		} else {
			// total_cost_usd is cumulative: this turn cost the difference.
			cost := max(r.CostUSD-a.reported, 0)
			a.unknown[model] = true
			a.baseCost += cost
			if p, ok := impliedPrice(t, cost); ok {
				a.observed[normalize(model)] = p
			}
		}
	default:
		// A result that says nothing about usage leaves the live figures.
		a.reported = r.CostUSD
		a.reconciled = true
		return
	}
	a.reported = r.CostUSD
	a.reconciled = true
	a.pending = a.pending[:0]
	clear(a.byID)
}

func (a *Accountant) mainModel() string {
	if a.model != "" {
		return a.model
	}
	for _, r := range a.pending {
		if r.model != "" {
			return r.model
		}
	}
	return ""
}

// priceOf is the price of a live response: the table's, else what the CLI
// charged for the model so far; false when there is no price yet.
func (a *Accountant) priceOf(model string) (Price, bool) {
	if p, known := a.prices.Lookup(model); known {
		return p, true
	}
	if model != "" {
		a.unknown[model] = true
	}
	p, ok := a.observed[normalize(model)]
	return p, ok
}

// Totals returns what the process spent so far: the latest result's
// figures plus every response since.
func (a *Accountant) Totals() Totals {
	t := Totals{
		Tokens:          a.base,
		CostUSD:         a.baseCost,
		ReportedCostUSD: a.reported,
		Reconciled:      a.reconciled && len(a.pending) == 0,
		Turns:           a.turns,
	}
	unpriced := map[string]bool{}
	for _, r := range a.pending {
		rt := r.tokens()
		t.Tokens = t.Tokens.Add(rt)
		if p, ok := a.priceOf(r.model); ok {
			t.CostUSD += p.Cost(rt)
		} else {
			unpriced[cmp.Or(r.model, "(unnamed model)")] = true
		}
		if rt.Output > r.usage.Output {
			t.OutputEstimated = true
		}
	}
	if len(a.unknown) > 0 {
		t.UnknownModels = slices.Sorted(maps.Keys(a.unknown))
	}
	if len(unpriced) > 0 {
		t.UnpricedModels = slices.Sorted(maps.Keys(unpriced))
	}
	return t
}

// Stream returns the tokens counted from assistant lines alone, results
// ignored: input and cache figures equal the result's modelUsage when each
// response was counted once and no call was hidden from the stream; output
// is the lines' placeholder.
func (a *Accountant) Stream() Tokens { return a.stream }
