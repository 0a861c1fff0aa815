package session

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
)

// Meters are the budgets one session spends from: its phase's and the
// plan's. The plan's is shared with other phases' sessions under
// --parallel, so each method locks what it shares; none does I/O.
type Meters interface {
	// Observe counts a stream event against the phase and returns what the
	// agent is doing (exploring, acting, …).
	Observe(ev event.Event) budget.Progress
	// Check is where the phase's and the plan's budgets stand now; ok is
	// false when neither is set. Each level's note is told once (the
	// Meter remembers), so call it once per occasion.
	Check(now time.Time) (s Standing, ok bool)
	// Quarter evaluates an adaptive quarter of the phase's budget.
	Quarter(now time.Time, done, total int) (budget.Quarter, bool)
	// NextLevel is how long until a duration budget reaches its next level.
	NextLevel(now time.Time) (time.Duration, bool)
	// Live is the figures a live view shows now.
	Live(now time.Time) Live
}

// Standing is the phase's and the plan's budgets at one moment.
type Standing struct {
	Phase, Plan             budget.Status
	PhaseLimits, PlanLimits budget.Limits
}

// Live is a running phase's spend and budget for the live view: every API
// call of its sessions, the running one included.
type Live struct {
	Tokens   int64
	CostUSD  float64
	Activity string
	Budget   *BudgetProgress // nil without a budget
}

// BudgetProgress is the fuller of the phase's and the plan's budgets.
type BudgetProgress struct {
	Scope     string  // "phase" or "plan"
	UsedPct   float64 // of its fullest dimension, in the current window
	Dimension string  // tokens, cost or duration
	Level     string  // none, note, firm, wrapup or exhausted
}

// BudgetState is a phase's budget bookkeeping across its sessions: the
// orchestrator owns it and reads it between sessions (a stop's
// description, an extension resets the level); the running session alone
// writes it.
type BudgetState struct {
	Mode                     budget.Mode
	MinCompletionProbability float64
	PlanNoted                budget.Level    // the plan budget's highest level told to this phase
	Quarter                  int             // adaptive quarters evaluated in the current window
	Written                  map[string]bool // absolute paths the phase wrote: reading them is no exploration
	Level                    budget.Level    // the latest level, phase or plan, whichever is higher
	Scope                    string          // which budget Level is of
	// Exhausted describes the spend at a stop, "phase tokens 105K of 100K".
	Exhausted string
}

// Reset forgets the level: the budget was extended or a window opened.
func (b *BudgetState) Reset() { b.Level, b.Exhausted = budget.LevelNone, "" }

// observeBudgets follows the stream for the budgets: it counts the event,
// keeps the files the phase writes, and checks the levels.
func (s *Session) observeBudgets(ev event.Event) {
	m := s.cfg.Meters
	if m == nil {
		return
	}
	b := s.cfg.Budget
	if ev.Assistant != nil {
		for _, tu := range ev.Assistant.ToolUses {
			if tu.FilePath != "" && budget.ToolKind(tu.Name, tu.Command) == budget.KindWrite {
				b.Written[s.absPath(tu.FilePath)] = true
			}
		}
	}
	// What the agent is doing, live in `debussy status`: saved when it changes.
	if pr := string(m.Observe(ev)); pr != "" && pr != s.activity {
		s.activity = pr
		s.q.push(SpendChanged{})
	}
	s.checkBudgets()
}

// checkBudgets is the budgets' check after an event, or when the duration
// timer fires with no event (a silent long tool). The Meters measure; the
// policy decides what the agent hears, what it refuses and when the
// session stops.
func (s *Session) checkBudgets() {
	b := s.cfg.Budget
	now := s.now()
	st, ok := s.cfg.Meters.Check(now)
	if !ok {
		return
	}
	ps, pl := st.Phase, st.Plan
	s.noteUnpriced(ps.Unpriced, pl.Unpriced)
	// Which budget speaks is the policy's (policy.BudgetFirst). ps.Used
	// is of the current window.
	quarter := 0
	if b.Mode == budget.Adaptive && !st.PhaseLimits.None() {
		quarter = budget.QuarterDue(ps.Used, b.Quarter)
	}
	check := policy.BudgetCheck{QuarterDue: quarter > 0, Stopping: s.pol.StopReason() != "", Phase: ps.Level, Plan: pl.Level}
	if policy.BudgetFirst(check) == policy.PickQuarter {
		b.Quarter = quarter
		if s.evaluateQuarter(now) {
			return
		}
	}
	cur, scope, lim := ps, policy.ScopePhase, st.PhaseLimits
	if check.Fuller() == policy.PickPlan {
		cur, scope, lim = pl, policy.ScopePlan, st.PlanLimits
	}
	reading := policy.BudgetReading{Scope: scope, Action: cur.Action, Left: lim.Remaining(cur.Spend, cur.Dimension)}
	// The plan's Meter is shared by the phases: each level of the plan's
	// budget is told once to every phase, not once to whichever phase
	// crossed it (the others would be refused without a word).
	pl.Note = ""
	if pl.Action.Note && pl.Level > b.PlanNoted {
		b.PlanNoted = pl.Level
		pl.Note = b.Mode.Note(pl.Level, st.PlanLimits.Remaining(pl.Spend, pl.Dimension))
	}
	for _, x := range []struct {
		budget.Status
		scope string
	}{{ps, policy.ScopePhase}, {pl, policy.ScopePlan}} {
		if x.Note != "" {
			reading.Notes = append(reading.Notes, policy.BudgetNote{Scope: x.scope, Level: x.Level, Text: x.Note, WrapUpOnly: x.Action.WrapUpOnly})
		}
	}
	if cur.Action.Stop {
		reading.Exhausted = scope + " " + cur.Exhausted
	}
	// Each change of level is an event; a phase under its notes says nothing.
	if cur.Level != b.Level || (scope != b.Scope && cur.Level > budget.LevelNone) {
		b.Level, b.Scope = cur.Level, scope
		s.perform() // what the policy decided before, first
		s.record(record.BudgetLevel{Session: s.stamp(true), Scope: scope, Level: cur.Level.String(), UsedPct: budget.RoundPct(cur.Used * 100),
			Dimension: string(cur.Dimension), Enforcement: string(b.Mode), Left: reading.Left})
		if cur.Level > budget.LevelNone {
			s.log(policy.LevelWarn, "budget", "scope", scope, "level", cur.Level.String(), "used_percent", int(cur.Used*100),
				"dimension", cur.Dimension, "left", reading.Left, "enforcement", b.Mode)
		}
		s.q.push(SpendChanged{})
	}
	if s.pol.Budget(reading) {
		b.Exhausted = reading.Exhausted
	}
}

// evaluateQuarter records one adaptive evaluation; the policy decides
// whether it restarts the session. It reports whether it did.
func (s *Session) evaluateQuarter(now time.Time) bool {
	done, total := s.facts.tasks()
	q, ok := s.cfg.Meters.Quarter(now, done, total)
	if !ok {
		return false
	}
	s.perform() // what the policy decided before, first
	s.record(record.BudgetQuarter{Session: s.stamp(true), UsedPct: q.UsedPct, TasksDone: q.TasksDone, TasksTotal: q.TasksTotal,
		Probability: q.Probability, Decision: string(q.Decision)})
	s.log(policy.LevelInfo, "budget quarter", "used_percent", q.UsedPct, "tasks_done", q.TasksDone, "tasks_total", q.TasksTotal,
		"probability", q.Probability, "decision", q.Decision)
	s.q.push(SpendChanged{})
	return s.pol.Quarter(q, s.cfg.Budget.MinCompletionProbability)
}

// noteUnpriced says, once per model and budget (budget.Status.Unpriced),
// that a cost budget cannot count a model yet: the price table does not
// know it and the CLI has not priced it in a result so far.
func (s *Session) noteUnpriced(lists ...[]string) {
	seen := map[string]bool{}
	for _, l := range lists {
		for _, m := range l {
			if seen[m] {
				continue
			}
			seen[m] = true
			s.log(policy.LevelWarn, "cost budget: no price yet for this model; its cost counts from claude's first result for it", "model", m)
			s.record(record.CostUnpriced{Session: s.stamp(true), Model: m})
		}
	}
}

// econC fires when a duration budget reaches its next level; nil without
// a duration budget or once the session is stopping.
func (s *Session) econC() <-chan time.Time {
	if s.econTimer == nil || s.pol.StopReason() != "" {
		return nil
	}
	return s.econTimer.C
}

// armEconTimer sets the duration timer to the next level of the phase's
// or the plan's duration budget, whichever comes first. Events check the
// budgets too; the timer is for a tool that runs long and says nothing.
func (s *Session) armEconTimer() {
	if s.cfg.Meters == nil {
		return
	}
	next, ok := s.cfg.Meters.NextLevel(s.now())
	if !ok {
		return
	}
	// A clock that reads a hair early finds no new level and re-arms.
	next = max(next, time.Millisecond)
	if s.econTimer == nil {
		s.econTimer = time.NewTimer(next)
		return
	}
	s.econTimer.Reset(next)
}

// phaseFile reports whether a call reads one of the phase's own files: its
// phase file, the master plan, a file the phase names or has written.
func (s *Session) phaseFile(paths ...string) bool {
	root, written := s.cfg.Root, s.cfg.Budget.Written
	own := []string{s.cfg.PhaseFile, s.cfg.PlanFile}
	for _, raw := range paths {
		if raw == "" {
			continue
		}
		if strings.ContainsAny(raw, " \t") { // a command: any own file it names
			for w := range written {
				if strings.Contains(raw, w) || strings.Contains(raw, relTo(root, w)) {
					return true
				}
			}
			for _, f := range own {
				if strings.Contains(raw, relTo(root, f)) {
					return true
				}
			}
			continue
		}
		abs := s.absPath(raw)
		if written[abs] {
			return true
		}
		for _, f := range own {
			if a, err := filepath.Abs(f); err == nil && a == abs {
				return true
			}
		}
		if rel := relTo(root, abs); rel != "" && !strings.HasPrefix(rel, "..") && strings.Contains(s.cfg.PhaseContent, rel) {
			return true
		}
	}
	return false
}

// callPhaseFile sets c.PhaseFile for the policy's budget refusal.
func (s *Session) callPhaseFile(c *policy.Call) {
	if s.cfg.Meters == nil {
		return
	}
	var in struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(c.Input, &in)
	c.PhaseFile = s.phaseFile(c.FilePath, in.Path, c.Command)
}

func (s *Session) absPath(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.cfg.Root, path)
	}
	return filepath.Clean(path)
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
