// Package budget is debussy's economics: what a session spent (tokens, API
// turns, USD from a price table, reconciled with the CLI's own figures),
// how close that is to the user's budget, what each enforcement mode does
// about it, the adaptive quarter evaluation and the progress phase of a
// session. It is pure: events and figures in, figures out, no I/O and no
// clock (durations are passed in).
package budget

import (
	"strings"
)

// Price is what one model costs, in USD per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheWrite float64 `json:"cache_write" yaml:"cache_write"` // 5-minute cache writes
	CacheRead  float64 `json:"cache_read" yaml:"cache_read"`
}

// Prices maps a model id prefix ("claude-sonnet-4", "claude-opus-4-1") to
// its price; the longest matching prefix wins, so an override for one
// version beats the family's default.
type Prices map[string]Price

// Cache write multipliers of the API: a 5-minute write costs 1.25× input,
// a read 0.1× input. The CLI's usage lines give one cache_creation figure
// without its 5m/1h split and Claude Code writes 5-minute entries, so every
// write is priced at 5m; a 1h write (2× input) would read low here and show
// as a difference at reconciliation.
func price(in, out float64) Price {
	return Price{Input: in, Output: out, CacheWrite: in * 1.25, CacheRead: in * 0.1}
}

// DefaultPrices are Anthropic's list prices of the Claude 4 models. Ids are
// matched by prefix after normalising ("[1m]" and provider prefixes
// stripped), so "claude-opus-4-8" is a 4.5-or-later Opus and
// "claude-opus-4-20250514" the original Opus 4. Long-context (>200K input)
// premiums are not modelled: the CLI's total_cost_usd at the session's end
// corrects the figure, and the difference is kept.
func DefaultPrices() Prices {
	return Prices{
		// Opus 4.5 and later cut the price to a third.
		"claude-opus-4":     price(5, 25),
		"claude-opus-4-0":   price(15, 75),
		"claude-opus-4-20":  price(15, 75), // claude-opus-4-20250514
		"claude-opus-4-1":   price(15, 75),
		"claude-sonnet-4":   price(3, 15),
		"claude-3-7-sonnet": price(3, 15),
		"claude-haiku-4":    price(1, 5),
		"claude-3-5-haiku":  price(0.8, 4),
		// The CLI's aliases.
		"opus":   price(5, 25),
		"sonnet": price(3, 15),
		"haiku":  price(1, 5),
	}
}

// fallbackKey is the price used for a model nobody knows.
const fallbackKey = "claude-sonnet-4"

// Merge returns p with over's entries added or replaced.
func (p Prices) Merge(over Prices) Prices {
	out := make(Prices, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		out[normalize(k)] = v
	}
	return out
}

// Lookup returns the price of a model id and whether it was known. For an
// unknown model it returns its family's price (or Sonnet's) as a guess of
// the tier, for display only: the Accountant never charges a guess, it
// prices unknown models by the CLI's own figures (observed.go).
func (p Prices) Lookup(model string) (Price, bool) {
	m := normalize(model)
	best, bestLen := Price{}, -1
	for k, v := range p {
		if strings.HasPrefix(m, k) && len(k) > bestLen {
			best, bestLen = v, len(k)
		}
	}
	if bestLen >= 0 {
		return best, true
	}
	// A family word anywhere ("us.anthropic.claude-…", "my-opus-proxy")
	// still says which tier it is billed at.
	for _, family := range []string{"opus", "sonnet", "haiku"} {
		if strings.Contains(m, family) {
			if v, ok := p[family]; ok {
				return v, false
			}
		}
	}
	if v, ok := p[fallbackKey]; ok {
		return v, false
	}
	return DefaultPrices()[fallbackKey], false
}

// normalize lower-cases a model id and strips what does not change its
// price: the 1M-window suffix, a provider prefix before "claude-", a
// Bedrock version suffix.
func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	m = strings.TrimSuffix(m, "[1m]")
	if i := strings.Index(m, "claude-"); i > 0 {
		m = m[i:]
	}
	return m
}

// Cost is the USD price of t at p.
func (p Price) Cost(t Tokens) float64 {
	return (float64(t.Input)*p.Input + float64(t.Output)*p.Output +
		float64(t.CacheWrite)*p.CacheWrite + float64(t.CacheRead)*p.CacheRead) / 1e6
}
