package budget

import (
	"time"

	"github.com/debussy-dev/debussy/event"
)

// Meter is one phase's economics across its sessions: restarts and
// remediation add to it, a compaction changes nothing (the counts are of
// API calls, never of the context). The caller passes the phase's elapsed
// wall time; the Meter reads no clock. Not safe for concurrent use.
type Meter struct {
	limits   Limits
	mode     Mode
	adaptive AdaptiveConfig
	prices   Prices

	done  Totals      // sessions that ended
	cur   *Accountant // the running session, nil between sessions
	class Classifier

	// An adaptive restart opens a fresh budget window: the limits count
	// from the spend at its start.
	window    Spend
	evaluated int // quarters evaluated in this window
	quarters  []Quarter
	noted     Level // the highest level the agent has been told of in this window

	toldUnpriced map[string]bool // models Check has named in Status.Unpriced
}

// NewMeter returns a Meter for one phase. prices nil is DefaultPrices.
func NewMeter(limits Limits, mode Mode, adaptive AdaptiveConfig, prices Prices) *Meter {
	if prices == nil {
		prices = DefaultPrices()
	}
	return &Meter{limits: limits, mode: mode, adaptive: adaptive, prices: prices}
}

// StartSession begins a new claude process: what the previous one spent is
// kept, its progress phase is not.
func (m *Meter) StartSession() {
	m.EndSession()
	m.cur = NewAccountant(m.prices)
	m.class = Classifier{}
}

// EndSession folds the running session into the phase's totals.
func (m *Meter) EndSession() {
	if m.cur != nil {
		m.done = m.done.Add(m.cur.Totals())
		m.cur = nil
	}
}

// Observe folds one event of the running session in.
func (m *Meter) Observe(ev event.Event) {
	if m.cur == nil {
		m.StartSession()
	}
	m.cur.Observe(ev)
	m.class.Observe(ev)
}

// Totals is what the phase spent so far.
func (m *Meter) Totals() Totals {
	if m.cur == nil {
		return m.done
	}
	return m.done.Add(m.cur.Totals())
}

// SetTotals sets what the budget has spent when the API calls are counted
// by other Meters: a plan's budget is the sum of its phases', whose
// sessions may run at the same time (--parallel), and one Accountant can
// follow one process only (a result's figures are cumulative over it).
func (m *Meter) SetTotals(t Totals) { m.cur, m.done = nil, t }

// Progress is the running session's progress phase.
func (m *Meter) Progress() Progress { return m.class.Phase() }

// Spend is the phase's spend after elapsed wall time, whole phase.
func (m *Meter) Spend(elapsed time.Duration) Spend {
	t := m.Totals()
	return Spend{Tokens: t.Processed(), CostUSD: t.CostUSD, Duration: elapsed}
}

// Limits returns the phase's budget.
func (m *Meter) Limits() Limits { return m.limits }

// Quarters returns the adaptive evaluations so far.
func (m *Meter) Quarters() []Quarter { return m.quarters }

// Status is where the phase stands in its budget.
type Status struct {
	Spend     Spend
	Used      float64 // of the fullest dimension, in the current window
	Dimension Dimension
	Level     Level
	Action    Action
	// Note is the text for the agent when the level rose since the last
	// note (each level is told once); "" otherwise or when the mode is
	// silent.
	Note string
	// Exhausted describes the spend for the user at a stop: "tokens 1.2M
	// of 1M"; "" unless Action.Stop.
	Exhausted string
	// Unpriced names, once each, the models a cost budget cannot count yet:
	// the price table does not know them and the CLI has not priced them
	// in a result so far (Totals.UnpricedModels). Set only with a cost limit.
	Unpriced []string
}

// Check says where the phase stands after elapsed and what to do. It
// records that the agent was told a level's note, so call it once per
// occasion to tell (a hook call).
func (m *Meter) Check(elapsed time.Duration) Status {
	s := m.Spend(elapsed)
	w := m.inWindow(s)
	used, dim := m.limits.Used(w)
	st := Status{Spend: s, Used: used, Dimension: dim}
	if m.limits.None() {
		return st
	}
	if m.limits.CostUSD > 0 {
		st.Unpriced = m.newlyUnpriced()
	}
	st.Level = LevelOf(used)
	st.Action = m.mode.Action(st.Level)
	if st.Action.Note && st.Level > m.noted {
		st.Note = m.mode.Note(st.Level, m.limits.Remaining(w, dim))
		m.noted = st.Level
	}
	if st.Action.Stop {
		st.Exhausted = m.limits.Describe(w, dim)
	}
	return st
}

// newlyUnpriced is Totals.UnpricedModels less the models already told.
func (m *Meter) newlyUnpriced() []string {
	var out []string
	for _, name := range m.Totals().UnpricedModels {
		if !m.toldUnpriced[name] {
			if m.toldUnpriced == nil {
				m.toldUnpriced = map[string]bool{}
			}
			m.toldUnpriced[name] = true
			out = append(out, name)
		}
	}
	return out
}

func (m *Meter) inWindow(s Spend) Spend {
	return Spend{Tokens: s.Tokens - m.window.Tokens, CostUSD: s.CostUSD - m.window.CostUSD, Duration: s.Duration - m.window.Duration}
}

// Standing is where the current window stands in the budget, without the
// side effects of Check (no note is marked told): for a live view.
func (m *Meter) Standing(elapsed time.Duration) (float64, Dimension) {
	return m.limits.Used(m.inWindow(m.Spend(elapsed)))
}

// NextDurationLevel is how much wall time is left, after elapsed, until the
// duration budget crosses its next level (70, 90, 95 or 100 % of the
// window); false without a duration limit or once it is spent. A caller
// arms a timer with it, so a silent tool cannot outrun the budget.
func (m *Meter) NextDurationLevel(elapsed time.Duration) (time.Duration, bool) {
	lim := m.limits.Duration
	if lim <= 0 {
		return 0, false
	}
	in := elapsed - m.window.Duration
	for _, f := range []float64{NoteAt, FirmAt, WrapUpAt, 1} {
		at := time.Duration(f * float64(lim))
		if f == WrapUpAt {
			at++ // LevelOf: wrap-up is above 95 %, not at it
		}
		if at > in {
			return at - in, true
		}
	}
	return 0, false
}

// Extend raises the budget by by, each dimension that by sets (a user's
// extension on a terminal). The notes start over, so the agent hears the
// levels of the larger budget; the quarters evaluated stay.
func (m *Meter) Extend(by Limits) {
	m.limits.Tokens += by.Tokens
	m.limits.CostUSD += by.CostUSD
	m.limits.Duration += by.Duration
	m.noted = LevelNone
}

// Quarter evaluates the quarter of the phase budget that the spend has
// reached, if one is due and the mode is adaptive; at is the caller's clock
// reading, done/total the phase's tasks.
func (m *Meter) Quarter(at time.Time, elapsed time.Duration, done, total int) (Quarter, bool) {
	if m.mode != Adaptive || m.limits.None() {
		return Quarter{}, false
	}
	used, _ := m.limits.Used(m.inWindow(m.Spend(elapsed)))
	n := QuarterDue(used, m.evaluated)
	if n == 0 {
		return Quarter{}, false
	}
	m.evaluated = n
	q := m.adaptive.Evaluate(at, used, done, total)
	m.quarters = append(m.quarters, q)
	return q, true
}

// OpenWindow starts a fresh budget window at the current spend: an
// adaptive restart gets the whole budget again, its quarters and notes
// start over. The phase's totals still count everything.
func (m *Meter) OpenWindow(elapsed time.Duration) {
	m.window = m.Spend(elapsed)
	m.evaluated = 0
	m.noted = LevelNone
}

// Call is a tool call as enforcement sees it.
type Call struct {
	Name    string
	Command string // Bash
	// PhaseFile: the call reads one of the phase's own files (its plan,
	// the files it names or has written).
	PhaseFile bool
	// WrapUp: the call writes the handoff or runs debussy progress/done.
	WrapUp bool
}

// Refusal is the reason to deny c under a, "" to let it run. left says what
// remains of the budget, for the agent.
func Refusal(a Action, c Call, left string) string {
	switch {
	case c.WrapUp:
		return ""
	case a.Stop || a.WrapUpOnly:
		return "Refused: the budget is almost spent (" + left + " left). Wrap up now: write the handoff and run debussy progress or debussy done."
	case a.RefuseExploratory && ToolKind(c.Name, c.Command) == KindRead && !c.PhaseFile:
		return "Refused: the budget is nearly spent (" + left + " left); no exploration beyond the phase's files. Finish the current task with what you know."
	}
	return ""
}
