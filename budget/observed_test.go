package budget

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// Recorded on 2.1.330 with its default model, which the table does not
// know (testdata/README.md): no cost before the result — not Opus's or
// Sonnet's rates — and exactly the CLI's figure after it.
func TestAccountantUnknownModelRecorded(t *testing.T) {
	a := NewAccountant(nil)
	var live Totals
	for _, ev := range readEvents(t, filepath.Join("testdata", "unknown-model-2.1.330.jsonl")) {
		if ev.Result != nil {
			live = a.Totals()
		}
		a.Observe(ev)
	}
	if live.CostUSD != 0 || !slices.Equal(live.UnpricedModels, []string{"claude-opus-5-5"}) || live.Tokens.Processed() == 0 {
		t.Errorf("before the result: cost %v unpriced %v tokens %d", live.CostUSD, live.UnpricedModels, live.Tokens.Processed())
	}
	got := a.Totals()
	if !got.Reconciled || !near(got.CostUSD, 0.1046, 1e-12) || !near(got.ReportedCostUSD, 0.1046, 1e-12) {
		t.Errorf("after the result: cost %v reported %v reconciled %v", got.CostUSD, got.ReportedCostUSD, got.Reconciled)
	}
	if !slices.Equal(got.UnknownModels, []string{"claude-opus-5-5"}) || got.UnpricedModels != nil {
		t.Errorf("unknown %v unpriced %v", got.UnknownModels, got.UnpricedModels)
	}
	// The observed price charges the result's tokens exactly what the CLI
	// did. (This model's cache reads cost 0.05× input, not 0.1×, so a live
	// figure between results is an estimate that the next result corrects.)
	tok := Tokens{Input: 4500, Output: 180, CacheWrite: 12800, CacheRead: 95000}
	if p := a.observed["claude-opus-5-5"]; !near(p.Cost(tok), 0.1046, 1e-9) {
		t.Errorf("observed price %+v charges %v", p, p.Cost(tok))
	}
}

// A synthetic stream of an unknown main model (priced by the CLI at $4/$20)
// with a known subagent model: every result agrees with total_cost_usd, the
// live figure between results extrapolates the observed price, and the
// known model keeps the table.
func TestAccountantUnknownModelSynthetic(t *testing.T) {
	const model = "claude-nova-1"
	nova := Price{Input: 4, Output: 20, CacheWrite: 5, CacheRead: 0.4}
	haiku, _ := DefaultPrices().Lookup("claude-haiku-4-5")
	asst := func(id, parent, m string, u runner.Usage) runner.Event {
		return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: id, ParentToolUseID: parent, Model: m, Usage: u}}
	}
	type call struct {
		model string
		t     Tokens
	}
	var cum = map[string]Tokens{}
	result := func(calls ...call) runner.Event {
		for _, c := range calls {
			cum[c.model] = cum[c.model].Add(c.t)
		}
		mu := map[string]runner.ModelUsage{}
		var total float64
		for name, t := range cum {
			p := nova
			if name != model {
				p = haiku
			}
			cost := p.Cost(t)
			total += cost
			mu[name] = runner.ModelUsage{InputTokens: t.Input, OutputTokens: t.Output, CacheReadInputTokens: t.CacheRead,
				CacheCreationInputTokens: t.CacheWrite, CostUSD: cost}
		}
		return runner.Event{Kind: runner.KindResult, Result: &runner.Result{CostUSD: total, ModelUsage: mu}}
	}
	u := func(in, write, read int64) runner.Usage {
		return runner.Usage{InputTokens: in, CacheCreationInputTokens: write, CacheReadInputTokens: read, OutputTokens: 1}
	}
	a := NewAccountant(nil)
	a.Observe(runner.Event{Kind: runner.KindInit, Init: &runner.Init{Model: model}})
	a.Observe(asst("m1", "", model, u(3000, 12000, 40000)))
	a.Observe(asst("s1", "toolu_1", "claude-haiku-4-5", u(2000, 0, 0)))
	if got := a.Totals(); !slices.Equal(got.UnpricedModels, []string{model}) || !near(got.CostUSD, haiku.Cost(Tokens{Input: 2000, Output: 1}), 1e-9) {
		t.Fatalf("before any result: unpriced %v cost %v (only the known subagent may count)", got.UnpricedModels, got.CostUSD)
	}
	r1 := result(call{model, Tokens{Input: 3000, CacheWrite: 12000, CacheRead: 40000, Output: 400}},
		call{"claude-haiku-4-5", Tokens{Input: 2000, Output: 50}})
	a.Observe(r1)
	if got := a.Totals(); !near(got.CostUSD, r1.Result.CostUSD, 0.01) || got.UnpricedModels != nil {
		t.Fatalf("at result 1: cost %v, CLI %v, unpriced %v", got.CostUSD, r1.Result.CostUSD, got.UnpricedModels)
	}
	// Between results: the next response is priced at the observed rate.
	next := Tokens{Input: 1500, CacheWrite: 800, CacheRead: 55000, Output: 1}
	a.Observe(asst("m2", "", model, u(1500, 800, 55000)))
	if got, want := a.Totals().CostUSD, r1.Result.CostUSD+nova.Cost(next); !near(got, want, 1e-6) {
		t.Errorf("live: cost %v, want %v (the observed price)", got, want)
	}
	r2 := result(call{model, Tokens{Input: 1500, CacheWrite: 800, CacheRead: 55000, Output: 90}})
	a.Observe(r2)
	got := a.Totals()
	if !near(got.CostUSD, r2.Result.CostUSD, 0.01) || !near(got.ReportedCostUSD, r2.Result.CostUSD, 1e-12) {
		t.Errorf("at result 2: cost %v, CLI %v", got.CostUSD, r2.Result.CostUSD)
	}
	if !slices.Equal(got.UnknownModels, []string{model}) {
		t.Errorf("unknown %v", got.UnknownModels)
	}
}

// A cost budget names a model it cannot price yet, once.
func TestMeterUnpricedOnce(t *testing.T) {
	m := NewMeter(Limits{CostUSD: 1}, Strict, AdaptiveConfig{}, nil)
	m.StartSession()
	m.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m1", Model: "claude-nova-1",
		Usage: runner.Usage{InputTokens: 1000, OutputTokens: 1}}})
	if st := m.Check(0); !slices.Equal(st.Unpriced, []string{"claude-nova-1"}) || st.Spend.CostUSD != 0 {
		t.Errorf("first check: unpriced %v cost %v", st.Unpriced, st.Spend.CostUSD)
	}
	if st := m.Check(0); st.Unpriced != nil {
		t.Errorf("told twice: %v", st.Unpriced)
	}
	tokens := NewMeter(Limits{Tokens: 100}, Strict, AdaptiveConfig{}, nil)
	tokens.Observe(runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m1", Model: "claude-nova-1",
		Usage: runner.Usage{InputTokens: 10, OutputTokens: 1}}})
	if st := tokens.Check(0); st.Unpriced != nil {
		t.Errorf("a token budget needs no price: %v", st.Unpriced)
	}
}

func TestImpliedPrice(t *testing.T) {
	p := Price{Input: 4, Output: 20, CacheWrite: 5, CacheRead: 0.4}
	tok := Tokens{Input: 4500, Output: 180, CacheWrite: 12800, CacheRead: 95000}
	got, ok := impliedPrice(tok, p.Cost(tok))
	if !ok || !near(got.Input, 4, 1e-9) || !near(got.Output, 20, 1e-9) || !near(got.CacheRead, 0.4, 1e-9) || !near(got.CacheWrite, 5, 1e-9) {
		t.Errorf("implied %+v %v", got, ok)
	}
	if _, ok := impliedPrice(Tokens{}, 1); ok {
		t.Error("no tokens gave a price")
	}
	if _, ok := impliedPrice(tok, 0); ok {
		t.Error("no cost gave a price")
	}
}
