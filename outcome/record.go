package outcome

import (
	"cmp"
	"path/filepath"
	"slices"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// A CI job's structured record is pushed beside its branch (cijob): it
// leaves the machine, so it holds structured facts only — statuses,
// counts, figures, classes, debussy's own words — never an error's,
// a gate's, a hook's or a tool's text (an error's public reason says why)
// nor a person's answer or a local path.

// PublicRun is run as it may leave the machine (a CI job's pushed record,
// debussy export): a copy whose phases' errors are their structured
// reasons, without questions, answers, tool arguments and local paths.
func PublicRun(run *state.Run) *state.Run {
	c := *run
	c.Plan = base(c.Plan)
	c.Phases = make([]*state.PhaseRecord, len(run.Phases))
	for i, p := range run.Phases {
		q := *p
		if q.LastError != "" {
			q.LastError = cmp.Or(q.Reason, string(q.Status))
		}
		q.Question, q.Answered, q.Checkpoint, q.Worktree = "", "", "", ""
		if q.Uncommitted != "" {
			q.Uncommitted = "its work could not be committed (see debussy logs)"
		}
		q.Handoffs = slices.Clone(q.Handoffs)
		for k, h := range q.Handoffs {
			q.Handoffs[k] = filepath.Base(h)
		}
		q.Nudges = slices.Clone(q.Nudges)
		for k := range q.Nudges {
			q.Nudges[k].Args = ""
		}
		c.Phases[i] = &q
	}
	return &c
}

// PublicEvent is ev as it may leave the machine, false for a fact that
// never does (a volatile one: live figures, commit bookkeeping).
func PublicEvent(ev record.Event) (record.Event, bool) {
	switch e := ev.(type) {
	case record.Volatile:
		return nil, false
	case record.RunEnded:
		e.Error = ""
		return e, true
	case record.PhaseEnded:
		e.Error, e.Uncommitted = "", ""
		return e, true
	case record.Remediation:
		e.Problem = ""
		return e, true
	case record.SessionRetry:
		e.Why = ""
		return e, true
	case record.SessionEnded:
		e.Reason = ""
		return e, true
	case record.Gate:
		e.Command, e.OutputTail = nil, nil
		return e, true
	case record.CommitRejected:
		e.Output = ""
		return e, true
	case record.CommitFailed:
		e.Error = ""
		return e, true
	case record.MergeFailed:
		e.Error = ""
		return e, true
	case record.PushFailed:
		e.Error = ""
		return e, true
	case record.NotifyFailed:
		e.Error = ""
		return e, true
	case record.Warning:
		e.Error = ""
		return e, true
	case record.LockWait:
		e.Error = ""
		return e, true
	case record.Answered:
		e.Text = ""
		return e, true
	case record.Unanswered:
		e.Question = ""
		return e, true
	case record.StillBlocked:
		e.Question = ""
		return e, true
	case record.WorktreeSetup:
		e.Command, e.Log = "", ""
		return e, true
	case record.Worktree:
		e.Path = ""
		return e, true
	case record.Checkpoint:
		e.Path = base(e.Path)
		return e, true
	case record.PhaseResumed:
		e.Handoff = base(e.Handoff)
		return e, true
	case record.RunStarted:
		e.Plan = base(e.Plan)
		return e, true
	case record.Policy:
		e.Text, e.Args, e.Path = nil, nil, nil
		return e, true
	case record.Mark:
		e.Error, e.Err = nil, nil
		return e, true
	}
	return ev, true
}

// base is path's last element, "" for none: a local path says nothing
// elsewhere.
func base(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Base(path)
}
