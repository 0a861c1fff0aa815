package state

import (
	"encoding/json"
	"strconv"
)

// Clean drops the noise binary floats leave in sums (0.1+0.2 is
// 0.30000000000000004) from a figure written as JSON: 12 significant
// digits keep every real fraction of a cent and of a percent, so JSON
// stays full precision as a number and reads 0.4089, not
// 0.40890000000000004.
func Clean(v float64) float64 {
	f, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if err != nil {
		return v
	}
	return f
}

// MarshalJSON writes the record with its cost cleaned (Clean).
func (p PhaseRecord) MarshalJSON() ([]byte, error) {
	type plain PhaseRecord // without this method
	q := plain(p)
	q.CostUSD = Clean(q.CostUSD)
	return json.Marshal(q)
}

// MarshalJSON writes the economics with its costs and percent cleaned.
func (e Economics) MarshalJSON() ([]byte, error) {
	type plain Economics // without this method
	q := plain(e)
	q.CostUSD, q.ReportedCostUSD, q.UsedPct = Clean(q.CostUSD), Clean(q.ReportedCostUSD), Clean(q.UsedPct)
	q.Limits.CostUSD = Clean(q.Limits.CostUSD)
	return json.Marshal(q)
}
