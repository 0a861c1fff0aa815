package notify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/state"
)

// Facts tells a run's notifications from its facts (a subscriber of the
// run's recorder): a blocked phase, a usage limit waited for or ending the
// run, and the run's end unless one of those said it already.
type Facts struct {
	d    *Dispatcher
	run  string // the run's id
	plan string // its plan's name
	// limitExit is the exit code of a run ended by a usage limit (75).
	limitExit int
	// limits are the usage limits not waited for, by phase: told with the
	// phase's end, when the ledger has it.
	limits map[string]record.UsageLimit
}

// Facts tells d's notifications of run runID of plan; limitExit is the
// exit code a usage limit ends a run with.
func (d *Dispatcher) Facts(runID, plan string, limitExit int) *Facts {
	return &Facts{d: d, run: runID, plan: plan, limitExit: limitExit, limits: map[string]record.UsageLimit{}}
}

// Tell sends what fact ev (at at) is to be told as; run is the run's
// record as the fact left it.
func (f *Facts) Tell(at time.Time, ev record.Event, run *state.Run) {
	if f == nil || f.d == nil {
		return
	}
	switch ev := ev.(type) {
	case record.PhaseEnded:
		switch {
		case ev.Status == string(state.StatusBlocked):
			answer := state.AnswerCommand(ev.Phase)
			f.send(at, run, Event{Event: Blocked, Phase: ev.Phase, Title: title(run, ev.Phase), Status: ev.Status,
				Question: ev.Question, Answer: answer,
				Message: fmt.Sprintf("phase %s is blocked: %s — answer with: %s, then run again", ev.Phase, text.OneLine(ev.Question, 200), answer)})
		case ev.Status == string(state.StatusInterrupted):
			if l, ok := f.limits[ev.Phase]; ok {
				delete(f.limits, ev.Phase)
				code := f.limitExit
				f.usageLimit(at, run, l, Event{Resets: l.Resets, ExitCode: &code})
			}
		}
	case record.UsageLimit:
		if !ev.Waiting {
			f.limits[ev.Phase] = ev
			return
		}
		until := time.Time{}
		if ev.Until != nil {
			until = *ev.Until
		}
		f.usageLimit(at, run, ev, Event{Resets: ev.Resets, Waiting: true, Until: until})
	case record.RunEnded:
		f.ended(at, ev, run)
	}
}

// usageLimit tells of a usage limit: waited for (until), or the end of
// the run with its exit code.
func (f *Facts) usageLimit(at time.Time, run *state.Run, l record.UsageLimit, ev Event) {
	ev.Event, ev.Phase, ev.Title, ev.Limit = UsageLimit, l.Phase, title(run, l.Phase), l.Limit
	name := failure.LimitName(l.Limit)
	if ev.Waiting {
		ev.Status = string(state.StatusRunning)
		ev.Message = fmt.Sprintf("phase %s: %s limit reached; waiting until %s, then going on", l.Phase, name, ev.Until.Format("15:04 MST"))
	} else {
		ev.Status = string(state.StatusInterrupted)
		ev.Message = fmt.Sprintf("phase %s: %s limit reached; it resets at %s; the run ended (exit %d) — run it again after the reset",
			l.Phase, name, failure.ResetClock(ev.Resets, at), *ev.ExitCode)
	}
	f.send(at, run, ev)
}

// ended tells how the run ended, unless a phase's own notification
// already said it (blocked, a usage limit not waited for).
func (f *Facts) ended(at time.Time, end record.RunEnded, run *state.Run) {
	code := end.ExitCode
	ev := Event{Status: end.Status, ExitCode: &code}
	switch {
	case end.Status == string(state.StatusBlocked), end.Reason == "usage limit reached":
		return
	case end.Status == string(state.StatusCompleted):
		ev.Event = Completed
		ev.Message = fmt.Sprintf("run %s completed: %s", f.run, phaseCounts(run))
	case end.Status == string(state.StatusInterrupted):
		ev.Event = Interrupted
		ev.Message = fmt.Sprintf("run %s interrupted (exit %d); the work so far is committed — run it again to resume", f.run, code)
	case end.Reason == "budget exhausted":
		ev.Event = BudgetExhausted
		ev.Phase = phaseWith(run, state.StatusFailed)
		// debussy's own words: which budget, how much, how to raise it.
		ev.Reason = end.Error
		ev.Message = fmt.Sprintf("run %s stopped: budget exhausted (exit %d): %s", f.run, code, text.OneLine(end.Error, 200))
	default:
		ev.Event = Failed
		ev.Phase = phaseWith(run, state.StatusFailed)
		// The error may quote a gate's output: only which phase failed
		// is sent; `debussy status` has the rest.
		what := "failed"
		if ev.Phase != "" {
			what = "failed at phase " + ev.Phase
		}
		ev.Message = fmt.Sprintf("run %s %s (exit %d): %s — see debussy status", f.run, what, code, phaseCounts(run))
	}
	f.send(at, run, ev)
}

// send sends ev with the run's facts and summary as they are now.
func (f *Facts) send(at time.Time, run *state.Run, ev Event) {
	ev.Run, ev.Plan, ev.At = f.run, f.plan, at
	status := run.Status
	if ev.Event == Blocked && status == state.StatusRunning {
		// A block ends the run (recorded a moment later): its summary is
		// headed blocked, not running.
		status = state.StatusBlocked
	}
	ev.Summary = summaryOf(f.plan, run, status)
	f.d.Send(ev)
}

func title(run *state.Run, phase string) string {
	if p := run.Phase(phase); p != nil {
		return p.Title
	}
	return ""
}

// summaryOf is the run's step summary, headed with status, without the
// phases' errors, which may quote a gate's output: only structured facts
// leave.
func summaryOf(plan string, rec *state.Run, status state.Status) *Summary {
	run := *rec
	run.Status = status
	run.Phases = nil
	s := &Summary{}
	for _, p := range rec.Phases {
		c := *p
		c.LastError = ""
		run.Phases = append(run.Phases, &c)
		s.Phases = append(s.Phases, PhaseState{ID: p.ID, Title: p.Title, Status: string(p.Status), Sessions: p.Sessions,
			Restarts: p.Restarts, Attempts: p.Attempts, Tokens: p.Tokens, CostUSD: p.CostUSD, Commits: slices.Clone(p.Commits)})
	}
	t := report.TotalsOf(rec) // this run's, as the summary says it
	s.Tokens, s.CostUSD = t.RunTokens, t.RunCostUSD
	s.Markdown = report.StepSummary(plan, &run)
	return s
}

// phaseWith is the first phase of the run with that status, or "".
func phaseWith(run *state.Run, s state.Status) string {
	for _, p := range run.Phases {
		if p.Status == s {
			return p.ID
		}
	}
	return ""
}

// phaseCounts says how many phases ended how: "2 completed, 1 skipped".
func phaseCounts(run *state.Run) string {
	order := []state.Status{state.StatusCompleted, state.StatusSkipped, state.StatusFailed, state.StatusBlocked,
		state.StatusInterrupted, state.StatusPending}
	n := map[state.Status]int{}
	for _, p := range run.Phases {
		n[p.Status]++
	}
	var parts []string
	for _, s := range order {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return "no phases"
	}
	return strings.Join(parts, ", ")
}
