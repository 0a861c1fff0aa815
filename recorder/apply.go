package recorder

import (
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// The ledger is a projection of the facts: what each one changes in a
// run's record, here and nowhere else. The recorder applies every fact to
// the ledger it saves; a phase applies its own facts to its copy of its
// record (Phase), so both read the same.

// MaxNudges bounds the nudges a phase keeps in the ledger.
const MaxNudges = 100

// Apply changes run, the record of the run the fact belongs to, and l's
// other runs a fact names (StaleRun, another run's CommitListed); it
// reports whether anything changed. A fact about a phase the run has no
// record of changes nothing.
func Apply(l *state.Ledger, run *state.Run, f Fact) bool {
	switch ev := f.Event.(type) {
	case record.RunStarted:
		run.Status, run.StartedAt = state.StatusRunning, f.At
		if ev.Plan != "" {
			run.Plan = ev.Plan
		}
		if ev.PID != 0 {
			run.PID = ev.PID
		}
		for _, p := range ev.Order {
			if run.Phase(p.ID) == nil {
				run.Phases = append(run.Phases, &state.PhaseRecord{ID: p.ID, Title: p.Title, Status: state.StatusPending,
					UncheckedGates: p.Unchecked})
			}
		}
		if l != nil && l.Run(run.ID) == nil {
			l.Runs = append(l.Runs, run)
		}
		return true
	case record.RunEnded:
		run.Status, run.EndedAt, run.ExitCode = state.Status(ev.Status), f.At, ev.ExitCode
		return true
	case record.AfterFailure:
		run.AfterFailure = &state.AfterFailure{Phase: ev.Phase, FailFast: ev.FailFast, Running: ev.Running}
		return true
	case record.StaleRun:
		return stale(l, f.At, ev)
	case record.BudgetExhausted:
		if ev.Scope == "plan" {
			if run.Economics == nil {
				run.Economics = &state.Economics{}
			}
			run.Economics.Exhausted = true
		}
	case record.CommitListed:
		if ev.Run != "" && ev.Run != run.ID {
			return listIn(l, ev.Run, ev.Phase, ev.Commit, true)
		}
	case record.CommitUnlisted:
		if ev.Run != "" && ev.Run != run.ID {
			return listIn(l, ev.Run, ev.Phase, ev.Commit, false)
		}
	}
	id := PhaseOf(f.Event)
	if id == "" {
		return false
	}
	rec := run.Phase(id)
	if rec == nil {
		return false
	}
	return ApplyPhase(rec, f)
}

// ApplyPhase changes a phase's record by one of its facts and reports
// whether anything changed.
func ApplyPhase(rec *state.PhaseRecord, f Fact) bool {
	switch ev := f.Event.(type) {
	case record.PhaseSkipped:
		rec.Status = state.StatusSkipped
		if ev.Commits != nil {
			rec.Commits = slices.Clone(ev.Commits)
		}
	case record.PhaseResumed:
		rec.PriorTokens, rec.PriorCostUSD, rec.Limit, rec.Model = ev.PriorTokens, ev.PriorCostUSD, ev.Limit, ev.Model
		rec.WaitingUntil = time.Time{}
		if ev.WaitingUntil != nil {
			rec.WaitingUntil = *ev.WaitingUntil
		}
	case record.Answered:
		rec.Answered = ev.Text
	case record.PhaseStarted:
		rec.Status, rec.BaseCommit, rec.StartedAt = state.StatusRunning, ev.Base, f.At
		if ev.Attempt > 0 {
			rec.Attempts = ev.Attempt
		}
	case record.Remediation:
		rec.Attempts = ev.Attempt
	case record.UsageLimitHold:
		rec.WaitingUntil, rec.Limit = ev.Resets, ev.Limit
	case record.Worktree:
		rec.Worktree, rec.Branch = ev.Path, ev.Branch
	case record.WorktreeDiscarded:
		rec.Worktree = ""
		if ev.Branch {
			rec.Branch = ""
		}
	case record.SessionSpawned:
		rec.Sessions = ev.Session
		if ev.TurnaroundMs != nil {
			rec.RestartTurnaroundMs = append(rec.RestartTurnaroundMs, *ev.TurnaroundMs)
		}
		rec.Zone = string(estimator.ZoneGreen)
		rec.Zones = append(rec.Zones, rec.Zone)
	case record.SessionEnded:
		if ev.StopLatencyMs == nil {
			return false
		}
		rec.StopLatencyMs = append(rec.StopLatencyMs, *ev.StopLatencyMs)
	case record.Policy:
		return applyPolicy(rec, f.At, ev)
	case record.NoHandoff:
		rec.Emergencies++
	case Spend:
		exhausted := rec.Economics != nil && rec.Economics.Exhausted
		progress := ""
		if rec.Economics != nil {
			progress = rec.Economics.Progress
		}
		ec := ev.Economics
		ec.Exhausted = ec.Exhausted || exhausted
		if ec.Progress == "" {
			ec.Progress = progress
		}
		rec.Economics, rec.Tokens, rec.CostUSD = &ec, ev.Tokens, ev.CostUSD
	case record.BudgetExhausted:
		if rec.Economics == nil {
			rec.Economics = &state.Economics{}
		}
		rec.Economics.Exhausted = true
	case record.Restart:
		rec.Restarts++
	case record.Checkpoint:
		rec.Checkpoint = strings.TrimSuffix(ev.Path, ".md") + ".json"
	case record.CommitListed:
		rec.Commits = append(rec.Commits, ev.Commit)
	case record.CommitUnlisted:
		return unlist(rec, ev.Commit)
	case record.CommitFailed:
		if !ev.Interrupted {
			return false
		}
		rec.Uncommitted = ev.Error
	case record.Merge:
		rec.Merge = ev.Commit
	case record.MergeFailed:
		rec.Status, rec.LastError, rec.Reason = state.StatusFailed, ev.Error, ev.Reason
	case record.UsageLimit:
		rec.WaitingUntil, rec.Limit = ev.Resets, ev.Limit
		if ev.Session > 0 {
			rec.UsageLimits++
		}
	case record.UsageLimitReset:
		rec.WaitingUntil, rec.Limit = time.Time{}, ""
	case record.FallbackModel:
		rec.Model = ev.To
		rec.UsageLimits++
	case record.PhaseEnded:
		rec.Status, rec.EndedAt = state.Status(ev.Status), f.At
		if ev.Error != "" {
			rec.LastError, rec.Reason = ev.Error, ev.Reason
		}
		if ev.Question != "" {
			rec.Question = ev.Question
		}
		if ev.Uncommitted != "" {
			rec.Uncommitted = ev.Uncommitted
		}
		if ev.Sessions != nil {
			rec.Sessions = *ev.Sessions
		}
	default:
		return false
	}
	return true
}

// applyPolicy keeps what the session's policy decided that the ledger
// shows: the zone, the nudges, the handoffs.
func applyPolicy(rec *state.PhaseRecord, at time.Time, ev record.Policy) bool {
	switch ev.Name {
	case record.Zone:
		rec.Zone = ev.Zone
		if k := len(rec.Zones); k > 0 {
			rec.Zones[k-1] = rec.Zone
		}
	case record.Nudge:
		if len(rec.Nudges) >= MaxNudges {
			return false
		}
		rec.Nudges = append(rec.Nudges, state.Nudge{Session: ev.Session.Session, Kind: ev.Kind, Tool: deref(ev.Tool),
			Args: deref(ev.Args), Count: deref(ev.Count), Restart: deref(ev.Restart), At: at})
	case record.HandoffWritten:
		if ev.Path == nil {
			return false
		}
		rec.Handoffs = append(rec.Handoffs, *ev.Path)
	default:
		return false
	}
	return true
}

func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// unlist takes commit back out of the record's commits (the last one
// listed: commits land in order).
func unlist(rec *state.PhaseRecord, commit string) bool {
	if i := slices.Index(rec.Commits, commit); i >= 0 {
		rec.Commits = slices.Delete(rec.Commits, i, i+1)
		return true
	}
	return false
}

// listIn lists (or unlists) commit in phase of run id, another run of l.
func listIn(l *state.Ledger, id, phase, commit string, list bool) bool {
	if l == nil {
		return false
	}
	r := l.Run(id)
	if r == nil {
		return false
	}
	p := r.Phase(phase)
	if p == nil {
		p = &state.PhaseRecord{ID: phase}
		r.Phases = append(r.Phases, p)
	}
	if list {
		p.Commits = append(p.Commits, commit)
		return true
	}
	return unlist(p, commit)
}

// stale marks a dead run interrupted, and its running phases as ev says.
func stale(l *state.Ledger, at time.Time, ev record.StaleRun) bool {
	if l == nil {
		return false
	}
	r := l.Run(ev.Run)
	if r == nil {
		return false
	}
	r.Status, r.EndedAt = state.StatusInterrupted, at
	for _, sp := range ev.Phases {
		p := r.Phase(sp.Phase)
		if p == nil {
			continue
		}
		p.Status, p.LastError, p.Reason = state.Status(sp.Status), sp.Reason, sp.Reason
		if sp.Commit != "" && !slices.Contains(p.Commits, sp.Commit) {
			p.Commits = append(p.Commits, sp.Commit)
		}
	}
	return true
}

// PhaseOf is the phase a fact is about: its Phase field (a session's
// stamp's included), "" for a fact of the run's.
func PhaseOf(ev record.Event) string {
	v := reflect.ValueOf(ev)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("Phase"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}
