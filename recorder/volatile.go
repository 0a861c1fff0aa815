package recorder

import (
	"log/slog"

	"github.com/debussy-dev/debussy/state"
)

// Spend is a phase's figures from its spend account: its economics and
// this run's tokens and cost (spend.Phase.Figures). Volatile: the ledger
// and status show them, the sessions' ends carry them in events.jsonl.
type Spend struct {
	Phase     string
	Economics state.Economics
	Tokens    int64
	CostUSD   float64
}

// Log is one line of the run's log that is no fact of the run's: what a
// session's policy and runner said (session.Log), handed on in order with
// the facts around it.
type Log struct {
	Phase string
	Level slog.Level
	Msg   string
	Args  []any
}

func (Spend) EventName() string { return "spend" }
func (Log) EventName() string   { return "log" }
func (Spend) Volatile()         {}
func (Log) Volatile()           {}
