package budget

import "time"

// Defaults of the adaptive evaluation.
const (
	DefaultRestartThreshold         = 0.9
	DefaultMinCompletionProbability = 0.5
)

// Decision is what a quarter evaluation concludes.
type Decision string

const (
	Continue Decision = "continue"
	// Restart: a fresh session with a checkpoint carrying the lessons so
	// far, in a fresh budget window.
	Restart Decision = "restart"
)

// Quarter is one evaluation at 25, 50, 75 or 100 % of the phase budget.
type Quarter struct {
	At          time.Time `json:"at"`
	UsedPct     float64   `json:"used_pct"`
	TasksDone   int       `json:"tasks_done"`
	TasksTotal  int       `json:"tasks_total"`
	Probability float64   `json:"probability"`
	Decision    Decision  `json:"decision"`
}

// AdaptiveConfig holds the adaptive settings.
type AdaptiveConfig struct {
	RestartThreshold         float64 // fraction of the budget, e.g. 0.9
	MinCompletionProbability float64 // e.g. 0.5
}

// QuarterDue returns the quarter (1..4) that used has reached beyond done
// quarters already evaluated, or 0. Several crossed at once (one expensive
// response) give only the last: an evaluation is of the present.
func QuarterDue(used float64, done int) int {
	q := min(int(used*4+1e-9), 4)
	if q > done {
		return q
	}
	return 0
}

// CompletionProbability is the chance the phase finishes within its budget
// at the rate so far. The model is linear and meant to be explained in one
// line: if a fraction f = done/total of the tasks took a fraction u of the
// budget, the rest needs u·(1−f)/f more; the probability is what remains
// of the budget, 1−u, over that need, clamped to [0, 1]. All tasks done is
// 1; none done with budget spent is 0; no tasks known is 1 (no evidence of
// lag, so no restart on it).
func CompletionProbability(used float64, done, total int) float64 {
	switch {
	case total <= 0 || done >= total:
		return 1
	case used <= 0:
		return 1
	case done <= 0:
		return 0
	}
	f := float64(done) / float64(total)
	need := used * (1 - f) / f
	return min(max((1-used)/need, 0), 1)
}

// Evaluate is one quarter's evaluation: restart when the budget used has
// reached the restart threshold and the completion probability is below the
// minimum. at is the caller's clock reading.
func (a AdaptiveConfig) Evaluate(at time.Time, used float64, done, total int) Quarter {
	q := Quarter{
		At: at, UsedPct: RoundPct(used * 100), TasksDone: done, TasksTotal: total,
		Probability: round3(CompletionProbability(used, done, total)), Decision: Continue,
	}
	if used >= a.RestartThreshold && q.Probability < a.MinCompletionProbability {
		q.Decision = Restart
	}
	return q
}

// RoundPct rounds a percentage to one decimal, as the ledger and events show it.
func RoundPct(p float64) float64 { return float64(int64(p*10+0.5)) / 10 }
func round3(p float64) float64   { return float64(int64(p*1000+0.5)) / 1000 }
