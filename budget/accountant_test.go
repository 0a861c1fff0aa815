package budget

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

func readFixture(t *testing.T, name string) []runner.Event {
	t.Helper()
	return readEvents(t, filepath.Join("..", "runner", "testdata", "fixtures", name))
}

// readEvents parses a recorded stream.
func readEvents(t *testing.T, path string) []runner.Event {
	t.Helper()
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []runner.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		ev, err := runner.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return evs
}

func near(a, b, rel float64) bool {
	if b == 0 {
		return math.Abs(a) < 1e-12
	}
	return math.Abs(a-b)/math.Abs(b) <= rel
}

// Every fixture's result agrees with the price table to well within 1 %:
// the fake API's figures are priced by the CLI with the same list prices
// (Opus 4.5+ at $5/$25, Sonnet 4.x at $3/$15, cache read 0.1×, 5-minute
// cache write 1.25×; no request passed 200K input, so no long-context
// premium applies).
func TestAccountantFixtures(t *testing.T) {
	tests := []struct {
		file     string
		stream   Tokens // from the assistant lines, each response once
		final    Tokens // after the last result
		turns    int
		reported float64 // last total_cost_usd; 0: no result
	}{
		{"success-simple.jsonl",
			Tokens{Input: 11000, Output: 2}, Tokens{Input: 11000, Output: 52}, 2, 0.0563},
		{"success-sonnet-200k.jsonl",
			Tokens{Input: 5000, Output: 3, CacheRead: 373000}, Tokens{Input: 5000, Output: 210, CacheRead: 373000}, 3, 0.13005},
		// Three assistant lines of one response: counted once.
		{"multiblock-then-sigint.jsonl",
			Tokens{Input: 7000, Output: 2, CacheWrite: 500, CacheRead: 45000}, Tokens{Input: 7000, Output: 110, CacheWrite: 500, CacheRead: 45000}, 2, 0.063375},
		// The synthetic "Prompt is too long" line is no API call.
		{"prompt-too-long.jsonl",
			Tokens{Input: 2000, Output: 1, CacheRead: 150000}, Tokens{Input: 2000, Output: 80, CacheRead: 150000}, 1, 0.0522},
		// Two results in one process: modelUsage and total_cost_usd are
		// cumulative, so the second replaces the first.
		{"interrupt-then-followup.jsonl",
			Tokens{Input: 6000, Output: 4, CacheRead: 220000}, Tokens{Input: 6000, Output: 260, CacheRead: 220000}, 4, 0.0879},
		{"api-retry-overloaded-killed.jsonl", Tokens{}, Tokens{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			a := NewAccountant(nil)
			for _, ev := range readFixture(t, tt.file) {
				a.Observe(ev)
			}
			got := a.Totals()
			if s := a.Stream(); s != tt.stream {
				t.Errorf("stream tokens = %+v, want %+v", s, tt.stream)
			}
			if got.Tokens != tt.final {
				t.Errorf("tokens = %+v, want %+v", got.Tokens, tt.final)
			}
			if got.Turns != tt.turns {
				t.Errorf("turns = %d, want %d", got.Turns, tt.turns)
			}
			if !near(got.ReportedCostUSD, tt.reported, 1e-12) {
				t.Errorf("reported = %v, want %v", got.ReportedCostUSD, tt.reported)
			}
			if tt.reported == 0 {
				if got.Reconciled || got.CostUSD != 0 {
					t.Errorf("no result: reconciled %v, cost %v", got.Reconciled, got.CostUSD)
				}
				return
			}
			if !got.Reconciled || !near(got.CostUSD, tt.reported, 0.01) {
				t.Errorf("cost = %v (reconciled %v), reported %v: more than 1 %% apart", got.CostUSD, got.Reconciled, tt.reported)
			}
			if math.Abs(got.CostDiff()) > 1e-9 {
				t.Errorf("cost differs from the CLI's by %v: price table out of date?", got.CostDiff())
			}
			if len(got.UnknownModels) != 0 {
				t.Errorf("unknown models %v", got.UnknownModels)
			}
		})
	}
}

// Before the result, the live figure counts input and cache exactly and
// estimates output from the text written.
func TestAccountantLive(t *testing.T) {
	evs := readFixture(t, "multiblock-then-sigint.jsonl")
	a := NewAccountant(nil)
	var last Totals
	for _, ev := range evs {
		if ev.Result != nil {
			break
		}
		a.Observe(ev)
		last = a.Totals()
	}
	if last.Tokens.Input != 7000 || last.Tokens.CacheRead != 45000 || last.Tokens.CacheWrite != 500 {
		t.Errorf("live tokens = %+v", last.Tokens)
	}
	if !last.OutputEstimated || last.Tokens.Output < 2 {
		t.Errorf("live output = %d, estimated %v", last.Tokens.Output, last.OutputEstimated)
	}
	if last.Reconciled || last.Turns != 2 {
		t.Errorf("live reconciled %v turns %d", last.Reconciled, last.Turns)
	}
	// Opus 4.5+: 7000×5 + 500×6.25 + 45000×0.5 per MTok, plus the output.
	base := (7000*5 + 500*6.25 + 45000*0.5) / 1e6
	if want := base + float64(last.Tokens.Output)*25/1e6; !near(last.CostUSD, want, 1e-9) {
		t.Errorf("live cost = %v, want %v", last.CostUSD, want)
	}
}

// Subagent responses count like the main thread's; a result without
// modelUsage adds its per-turn usage; an unknown model is flagged.
func TestAccountantSynthetic(t *testing.T) {
	asst := func(id, parent, model string, in, read int64) runner.Event {
		return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{
			MessageID: id, ParentToolUseID: parent, Model: model,
			Usage: runner.Usage{InputTokens: in, CacheReadInputTokens: read, OutputTokens: 1},
		}}
	}
	result := func(cost float64, u runner.Usage) runner.Event {
		return runner.Event{Kind: runner.KindResult, Result: &runner.Result{CostUSD: cost, Usage: u}}
	}
	tests := []struct {
		name    string
		events  []runner.Event
		tokens  Tokens
		turns   int
		unknown []string
		recon   bool
	}{
		{"subagent counted",
			[]runner.Event{asst("m1", "", "claude-sonnet-4-5", 1000, 0), asst("s1", "toolu_1", "claude-haiku-4-5", 500, 0), asst("s1", "toolu_1", "claude-haiku-4-5", 500, 0)},
			Tokens{Input: 1500, Output: 2}, 2, nil, false},
		{"result without modelUsage adds its usage",
			[]runner.Event{asst("m1", "", "claude-sonnet-4-5", 1000, 0), result(0.01, runner.Usage{InputTokens: 1000, OutputTokens: 50}),
				asst("m2", "", "claude-sonnet-4-5", 800, 1000), result(0.02, runner.Usage{InputTokens: 800, CacheReadInputTokens: 1000, OutputTokens: 20})},
			Tokens{Input: 1800, Output: 70, CacheRead: 1000}, 2, nil, true},
		{"unknown model counted, not priced",
			[]runner.Event{asst("m1", "", "gpt-9", 1000, 0)},
			Tokens{Input: 1000, Output: 1}, 1, []string{"gpt-9"}, false},
		{"a response after the result is live again",
			[]runner.Event{asst("m1", "", "claude-sonnet-4-5", 1000, 0), result(0.01, runner.Usage{InputTokens: 1000, OutputTokens: 50}), asst("m1", "", "claude-sonnet-4-5", 1000, 0), asst("m2", "", "claude-sonnet-4-5", 10, 0)},
			Tokens{Input: 1010, Output: 51}, 2, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccountant(nil)
			for _, e := range tt.events {
				a.Observe(e)
			}
			got := a.Totals()
			if got.Tokens != tt.tokens || got.Turns != tt.turns || got.Reconciled != tt.recon {
				t.Errorf("got tokens %+v turns %d reconciled %v, want %+v %d %v", got.Tokens, got.Turns, got.Reconciled, tt.tokens, tt.turns, tt.recon)
			}
			if len(got.UnknownModels) != len(tt.unknown) || (len(tt.unknown) > 0 && got.UnknownModels[0] != tt.unknown[0]) {
				t.Errorf("unknown = %v, want %v", got.UnknownModels, tt.unknown)
			}
		})
	}
}

func TestPricesLookup(t *testing.T) {
	over := DefaultPrices().Merge(Prices{"claude-opus-4-8": {Input: 1, Output: 2}})
	tests := []struct {
		model string
		in    float64
		known bool
	}{
		{"claude-opus-4-8[1m]", 1, true}, // the override, longest prefix
		{"claude-opus-4-6", 5, true},
		{"claude-opus-4-1-20250805", 15, true},
		{"claude-opus-4-20250514", 15, true},
		{"claude-sonnet-4-5", 3, true},
		{"CLAUDE-SONNET-4-6[1M]", 3, true},
		{"claude-haiku-4-5-20251001", 1, true},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", 3, true},
		{"opus", 5, true},
		{"my-haiku-proxy", 1, false},
		{"gpt-9", 3, false},
		{"", 3, false},
	}
	for _, tt := range tests {
		p, known := over.Lookup(tt.model)
		if p.Input != tt.in || known != tt.known {
			t.Errorf("Lookup(%q) = %v %v, want input %v known %v", tt.model, p.Input, known, tt.in, tt.known)
		}
	}
}

func TestTotalsAdd(t *testing.T) {
	a := Totals{Tokens: Tokens{Input: 1}, CostUSD: 1, ReportedCostUSD: 1, Reconciled: true, Turns: 1, UnknownModels: []string{"x"}}
	b := Totals{Tokens: Tokens{Output: 2}, CostUSD: 2, Turns: 2, OutputEstimated: true, UnknownModels: []string{"x", "y"}}
	s := Totals{}.Add(a)
	if !s.Reconciled {
		t.Error("zero + reconciled should stay reconciled")
	}
	s = s.Add(b)
	if s.Tokens.Processed() != 3 || s.CostUSD != 3 || s.Turns != 3 || s.Reconciled || !s.OutputEstimated || len(s.UnknownModels) != 2 {
		t.Errorf("sum = %+v", s)
	}
}
