package budget

import (
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/estimator"
)

// Limits is a budget; a zero field is no limit on that dimension.
type Limits struct {
	Tokens   int64         `json:"tokens,omitempty"`
	CostUSD  float64       `json:"cost_usd,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
}

// None reports whether no dimension is limited.
func (l Limits) None() bool { return l.Tokens <= 0 && l.CostUSD <= 0 && l.Duration <= 0 }

// Spend is what counts against Limits.
type Spend struct {
	Tokens   int64
	CostUSD  float64
	Duration time.Duration
}

// Dimension names a budget's dimension in messages and the ledger.
type Dimension string

const (
	DimTokens   Dimension = "tokens"
	DimCost     Dimension = "cost"
	DimDuration Dimension = "duration"
)

// Used is the fraction of the budget spent on its fullest dimension (1 =
// all of it) and which dimension that is; 0 and "" when nothing is limited.
func (l Limits) Used(s Spend) (float64, Dimension) {
	var frac float64
	var dim Dimension
	take := func(f float64, d Dimension) {
		if f > frac || dim == "" {
			frac, dim = f, d
		}
	}
	if l.Tokens > 0 {
		take(float64(s.Tokens)/float64(l.Tokens), DimTokens)
	}
	if l.CostUSD > 0 {
		take(s.CostUSD/l.CostUSD, DimCost)
	}
	if l.Duration > 0 {
		take(float64(s.Duration)/float64(l.Duration), DimDuration)
	}
	return frac, dim
}

// Describe says what was spent of which budget: "cost $4.12 of $4.00".
func (l Limits) Describe(s Spend, d Dimension) string {
	switch d {
	case DimTokens:
		return fmt.Sprintf("tokens %s of %s", estimator.FormatTokens(s.Tokens), estimator.FormatTokens(l.Tokens))
	case DimCost:
		return fmt.Sprintf("cost $%.2f of $%.2f", s.CostUSD, l.CostUSD)
	case DimDuration:
		return fmt.Sprintf("time %s of %s", s.Duration.Round(time.Second), l.Duration)
	}
	return "no budget"
}

// Level is how close a budget is to its end.
type Level int

const (
	LevelNone      Level = iota // below 70 %
	LevelNote                   // 70 to 90 %: tell the agent what remains
	LevelFirm                   // 90 to 95 %: firmer notes, exploration refused
	LevelWrapUp                 // 95 to 100 %: only the handoff and debussy progress/done
	LevelExhausted              // 100 % and over: stop at the next safe point
)

// Thresholds of the levels, as fractions of the budget.
const (
	NoteAt   = 0.70
	FirmAt   = 0.90
	WrapUpAt = 0.95
)

// LevelOf maps a used fraction to its level.
func LevelOf(used float64) Level {
	switch {
	case used >= 1:
		return LevelExhausted
	case used > WrapUpAt:
		return LevelWrapUp
	case used >= FirmAt:
		return LevelFirm
	case used >= NoteAt:
		return LevelNote
	}
	return LevelNone
}

func (l Level) String() string {
	switch l {
	case LevelNote:
		return "note"
	case LevelFirm:
		return "firm"
	case LevelWrapUp:
		return "wrapup"
	case LevelExhausted:
		return "exhausted"
	}
	return "none"
}

// Mode is budget.enforcement.
type Mode string

const (
	// Strict: notes, then exploration refused, then everything but the
	// wrap-up refused, then a stop at 100 % that ends the run.
	Strict Mode = "strict"
	// Advisory: the notes only; never refuses or stops.
	Advisory Mode = "advisory"
	// Soft: tracking only, the agent hears nothing.
	Soft Mode = "soft"
	// Adaptive: the notes, plus the quarter evaluations that may restart
	// the phase with a fresh budget window; at 100 % a stop unless that
	// quarter restarts.
	Adaptive Mode = "adaptive"
)

// Action is what a mode does at a level.
type Action struct {
	Note              bool // tell the agent what remains
	RefuseExploratory bool // deny reads and searches beyond the phase's files
	WrapUpOnly        bool // deny every tool but the handoff and debussy progress/done
	Stop              bool // end the session at the next safe point; no restart
}

// Action returns what m does at l. An unknown mode acts as strict: a budget
// the user set is a limit unless they said otherwise.
func (m Mode) Action(l Level) Action {
	switch m {
	case Soft:
		return Action{}
	case Advisory:
		return Action{Note: l >= LevelNote}
	case Adaptive:
		return Action{Note: l >= LevelNote, Stop: l >= LevelExhausted}
	}
	return Action{
		Note:              l >= LevelNote,
		RefuseExploratory: l >= LevelFirm,
		WrapUpOnly:        l >= LevelWrapUp,
		Stop:              l >= LevelExhausted,
	}
}

// Note is the sentence told to the agent at a level: what is left and what
// to do about it. "" below LevelNote.
func Note(l Level, remaining string) string {
	switch l {
	case LevelNote:
		return fmt.Sprintf("Budget: %s left. Keep to the phase's tasks; avoid broad exploration.", remaining)
	case LevelFirm:
		return fmt.Sprintf("Budget nearly spent: %s left. Finish the current task; reads and searches outside the phase's files are refused from now.", remaining)
	case LevelWrapUp:
		return fmt.Sprintf("Budget almost gone: %s left. Wrap up now: write the handoff and run debussy progress or debussy done; every other tool is refused.", remaining)
	case LevelExhausted:
		return "Budget exhausted: the session stops after this tool."
	}
	return ""
}

// Note is the sentence told to the agent at a level under mode m: the
// strict wording says what is refused; a mode that refuses nothing
// (advisory, adaptive) says only what to do, and only a mode that stops
// says the session will stop.
func (m Mode) Note(l Level, remaining string) string {
	a := m.Action(l)
	switch {
	case a.RefuseExploratory || a.WrapUpOnly || l < LevelFirm:
		return Note(l, remaining)
	case l == LevelFirm:
		return fmt.Sprintf("Budget nearly spent: %s left. Finish the current task; avoid reads and searches outside the phase's files.", remaining)
	case l == LevelWrapUp:
		return fmt.Sprintf("Budget almost gone: %s left. Wrap up now: record what remains with debussy progress and finish with debussy done.", remaining)
	case a.Stop:
		return Note(l, remaining)
	}
	return "Budget spent: the phase has used all of its budget. Wrap up now: record what remains with debussy progress and finish with debussy done."
}

// Remaining says what is left of the fullest dimension: "12.5K tokens".
func (l Limits) Remaining(s Spend, d Dimension) string {
	switch d {
	case DimTokens:
		return estimator.FormatTokens(max(l.Tokens-s.Tokens, 0)) + " tokens"
	case DimCost:
		return fmt.Sprintf("$%.2f", max(l.CostUSD-s.CostUSD, 0))
	case DimDuration:
		return max(l.Duration-s.Duration, 0).Round(time.Second).String()
	}
	return "no limit"
}
