package tune

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/debussy-dev/debussy/estimator"
)

// recommend picks a candidate under the objective. A candidate that runs
// a phase out of restarts is never picked while another does not; the
// current settings win a tie.
func recommend(cands []Candidate, objective string) *Recommendation {
	if len(cands) == 0 {
		return nil
	}
	pool := slices.DeleteFunc(slices.Clone(cands), func(c Candidate) bool { return c.OutOfRestarts > 0 })
	if len(pool) == 0 {
		pool = slices.Clone(cands)
	}
	cheapest := slices.MinFunc(pool, func(a, b Candidate) int { return cmp.Compare(a.CostUSD, b.CostUSD) }).CostUSD
	byCost := func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.CostUSD, b.CostUSD), cmp.Compare(a.Restarts, b.Restarts), current(a, b))
	}
	byContext := func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.TurnsOver400K, b.TurnsOver400K), cmp.Compare(a.TurnsOver200K, b.TurnsOver200K),
			cmp.Compare(a.PeakTokens, b.PeakTokens), byCost(a, b))
	}
	var pick Candidate
	var why string
	switch objective {
	case ObjectiveContext:
		pick = slices.MinFunc(pool, byContext)
		why = fmt.Sprintf("the least long context: %d turns above 400K, %d above 200K, peak %s",
			pick.TurnsOver400K, pick.TurnsOver200K, estimator.FormatTokens(pick.PeakTokens))
	case ObjectiveBalanced:
		near := slices.DeleteFunc(slices.Clone(pool), func(c Candidate) bool { return c.CostUSD > cheapest*(1+balancedSlack)+1e-9 })
		pick = slices.MinFunc(near, byContext)
		why = fmt.Sprintf("the least long context within %d %% of the cheapest ($%.2f): $%.2f, %d turns above 200K, peak %s",
			int(balancedSlack*100), cheapest, pick.CostUSD, pick.TurnsOver200K, estimator.FormatTokens(pick.PeakTokens))
	default:
		pick = slices.MinFunc(pool, byCost)
		why = fmt.Sprintf("the lowest modelled cost: $%.2f", pick.CostUSD)
	}
	if cur := cands[0]; cur.Current && !pick.Current {
		why += fmt.Sprintf(" (now $%.2f, %s)", cur.CostUSD, plural(cur.Restarts, "restart"))
	}
	if pick.Adaptive != nil && !*pick.Adaptive {
		why += "; without the adaptive budget's restarts (budget.enforcement is yours to change)"
	}
	if pick.OutOfRestarts > 0 {
		why += fmt.Sprintf("; every candidate runs %d phases out of restarts", pick.OutOfRestarts)
	}
	return &Recommendation{Candidate: pick, Objective: objective, Why: why}
}

// current orders the current settings first.
func current(a, b Candidate) int {
	switch {
	case a.Current && !b.Current:
		return -1
	case b.Current && !a.Current:
		return 1
	}
	return 0
}
