package report

import (
	"cmp"
	"slices"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// A run spread over CI jobs: each job ran one phase (--only) and pushed
// its record beside its branch (cijob.RecordPusher); together they are the
// plan's run, phase by phase.

// JobRecord is one job's record of one phase: the job's run (its record
// of every phase: the phase's own is the one that counts) and the facts
// it pushed.
type JobRecord struct {
	Plan   string // the plan's id
	Phase  string
	Run    *state.Run
	Events []record.Line
}

// Record is the job's record of its phase.
func (j JobRecord) Record() *state.PhaseRecord {
	if p := j.Run.Phase(j.Phase); p != nil {
		return p
	}
	return &state.PhaseRecord{ID: j.Phase, Status: state.StatusPending}
}

// Across is a plan's run across its jobs.
type Across struct {
	Plan   string
	Name   string // the plan's name, as a job's run started it
	Phases []AcrossPhase
}

// AcrossPhase is one phase and the jobs that ran it, oldest first: the
// last is where the phase stands.
type AcrossPhase struct {
	ID, Title string
	Jobs      []JobRecord
}

// Last is the phase's latest job's record, nil for a phase no job ran.
func (p AcrossPhase) Last() *state.PhaseRecord {
	if len(p.Jobs) == 0 {
		return nil
	}
	return p.Jobs[len(p.Jobs)-1].Record()
}

// Sessions, Restarts, Tokens and CostUSD add up what every job spent on
// the phase.
func (p AcrossPhase) Sessions() (n int) {
	for _, j := range p.Jobs {
		n += j.Record().Sessions
	}
	return n
}

func (p AcrossPhase) Restarts() (n int) {
	for _, j := range p.Jobs {
		n += j.Record().Restarts
	}
	return n
}

func (p AcrossPhase) Tokens() (n int64) {
	for _, j := range p.Jobs {
		n += j.Record().Tokens
	}
	return n
}

func (p AcrossPhase) CostUSD() (c float64) {
	for _, j := range p.Jobs {
		c += j.Record().CostUSD
	}
	return c
}

// AcrossJobs groups the jobs' records of plan by phase, in the plan's
// order as the jobs' runs list it.
func AcrossJobs(plan string, jobs []JobRecord) *Across {
	a := &Across{Plan: plan}
	byID := map[string]int{}
	slices.SortStableFunc(jobs, func(x, y JobRecord) int {
		return cmp.Or(x.Run.StartedAt.Compare(y.Run.StartedAt), cmp.Compare(x.Run.ID, y.Run.ID))
	})
	for _, j := range jobs {
		if j.Plan != plan {
			continue
		}
		for _, l := range j.Events {
			if ev, ok := record.As[record.RunStarted](l); ok && ev.Name != "" {
				a.Name = ev.Name
			}
		}
		for _, p := range j.Run.Phases { // every job's run lists the plan's phases
			if _, ok := byID[p.ID]; !ok {
				byID[p.ID] = len(a.Phases)
				a.Phases = append(a.Phases, AcrossPhase{ID: p.ID, Title: p.Title})
			}
		}
		i, ok := byID[j.Phase]
		if !ok {
			byID[j.Phase] = len(a.Phases)
			a.Phases = append(a.Phases, AcrossPhase{ID: j.Phase})
			i = len(a.Phases) - 1
		}
		a.Phases[i].Jobs = append(a.Phases[i].Jobs, j)
	}
	return a
}

// Status is the plan's across its jobs: completed when every phase is,
// else the first phase's that failed, was blocked or interrupted, else
// running (some phase not done yet).
func (a *Across) Status() state.Status {
	done := true
	for _, p := range a.Phases {
		last := p.Last()
		if last == nil {
			done = false
			continue
		}
		switch last.Status {
		case state.StatusCompleted, state.StatusSkipped:
		case state.StatusFailed, state.StatusBlocked, state.StatusInterrupted:
			return last.Status
		default:
			done = false
		}
	}
	if done {
		return state.StatusCompleted
	}
	return state.StatusRunning
}

// Run is the plan's run as one record, for the report: each phase as its
// latest job left it, with that job's facts.
func (a *Across) Run() (*state.Run, []record.Line) {
	run := &state.Run{ID: a.Plan, Plan: a.Name, Status: a.Status()}
	var lines []record.Line
	for _, p := range a.Phases {
		if len(p.Jobs) == 0 {
			run.Phases = append(run.Phases, &state.PhaseRecord{ID: p.ID, Title: p.Title, Status: state.StatusPending})
			continue
		}
		j := p.Jobs[len(p.Jobs)-1]
		rec := *j.Record()
		run.Phases = append(run.Phases, &rec)
		if run.StartedAt.IsZero() || j.Run.StartedAt.Before(run.StartedAt) {
			run.StartedAt = j.Run.StartedAt
		}
		if j.Run.EndedAt.After(run.EndedAt) {
			run.EndedAt = j.Run.EndedAt
		}
		for _, l := range j.Events {
			if l.Phase == p.ID || l.Phase == "" && l.Event == "run_started" {
				lines = append(lines, l)
			}
		}
	}
	slices.SortStableFunc(lines, func(x, y record.Line) int { return x.TS.Compare(y.TS) })
	return run, lines
}
