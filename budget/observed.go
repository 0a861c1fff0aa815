package budget

// A model the price table does not know (a new default of the CLI, a
// proxy's name) is priced by the CLI itself: its modelUsage[model].costUSD
// at each result is the truth, and between results the figure extrapolates
// the price per token the CLI charged for that model so far. Before the
// first result of such a model its cost is unknown: it is left out of
// CostUSD and named in Totals.UnpricedModels — never priced with another
// model's rates.

// Weights of each token kind relative to an input token, as the Claude 4
// list prices have them (output 5×, 5-minute cache write 1.25×, cache read
// 0.1×): they split one observed figure into a Price. A model may differ
// (2.1.330's claude-opus-5-5 charges cache reads 0.05×), so the live figure
// is an estimate until the next result, which is exact.
const (
	outputWeight     = 5
	cacheWriteWeight = 1.25
	cacheReadWeight  = 0.1
)

// impliedPrice is the Price that charges cost for t, with the API's ratios
// between token kinds; false when t or cost says nothing.
func impliedPrice(t Tokens, cost float64) (Price, bool) {
	w := float64(t.Input) + outputWeight*float64(t.Output) +
		cacheWriteWeight*float64(t.CacheWrite) + cacheReadWeight*float64(t.CacheRead)
	if w <= 0 || cost <= 0 {
		return Price{}, false
	}
	in := cost / w * 1e6
	return Price{Input: in, Output: in * outputWeight, CacheWrite: in * cacheWriteWeight, CacheRead: in * cacheReadWeight}, true
}
