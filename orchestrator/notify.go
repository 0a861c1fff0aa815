package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/state"
)

// The run's notifications (notify.yaml's targets): sent beside the work,
// never waited for until the run's end, and then at most notify's bound.

// AnswerCommand is the command that answers a blocked phase, as status and
// the notification print it.
func AnswerCommand(phase string) string {
	return fmt.Sprintf("debussy answer --phase %s \"…\"", phase)
}

// startNotify makes the run's dispatcher (nil without targets): a delivery
// that gives up is a warning (notify logs it) and an event here.
func (r *orun) startNotify() {
	r.notifier = notify.New(r.cfg.Notify, notify.Options{
		Logger: r.log,
		OnFailure: func(f notify.Failure) {
			r.recorder.event(record.NotifyFailed{Kind: f.Kind, To: f.Target, Notification: f.Event, Error: f.Err.Error()})
		},
	})
}

// announce sends ev with the run's facts and summary as they are now.
func (r *orun) announce(ev notify.Event) {
	if r.notifier == nil || r.run == nil {
		return
	}
	ev.Run, ev.Plan, ev.At = r.id, r.Plan.Name, r.now()
	// As last saved: a phase may announce while others run (recorder.go).
	r.recorder.read(func(run *state.Run) {
		status := run.Status
		if ev.Event == notify.Blocked && status == state.StatusRunning {
			// A block ends the run (recorded a moment later): its
			// summary is headed blocked, not running.
			status = state.StatusBlocked
		}
		ev.Summary = notifySummary(r.Plan.Name, run, status)
	})
	r.notifier.Send(ev)
}

// notifySummary is the run's step summary, headed with status, without the
// phases' errors, which may quote a gate's output: only structured facts
// leave.
func notifySummary(plan string, rec *state.Run, status state.Status) *notify.Summary {
	run := *rec
	run.Status = status
	run.Phases = nil
	s := &notify.Summary{}
	for _, p := range rec.Phases {
		c := *p
		c.LastError = ""
		run.Phases = append(run.Phases, &c)
		s.Phases = append(s.Phases, notify.PhaseState{ID: p.ID, Title: p.Title, Status: string(p.Status), Sessions: p.Sessions,
			Restarts: p.Restarts, Attempts: p.Attempts, Tokens: p.Tokens, CostUSD: p.CostUSD, Commits: slices.Clone(p.Commits)})
	}
	t := report.TotalsOf(rec) // this run's, as the summary says it
	s.Tokens, s.CostUSD = t.RunTokens, t.RunCostUSD
	s.Markdown = report.StepSummary(plan, &run)
	return s
}

// announceBlocked tells that phase p is blocked on question and how to
// answer it.
func (p *phaseRun) announceBlocked(question string) {
	r := p.r
	answer := AnswerCommand(p.ph.ID)
	r.announce(notify.Event{Event: notify.Blocked, Phase: p.ph.ID, Title: p.ph.ShortTitle(), Status: string(state.StatusBlocked),
		Question: question, Answer: answer,
		Message: fmt.Sprintf("phase %s is blocked: %s — answer with: %s, then run again", p.ph.ID, oneLine(question), answer)})
}

// announceUsageLimit tells of a usage limit: waited for (until), or the end
// of the run with exit code (75).
func (p *phaseRun) announceUsageLimit(limit string, ev notify.Event) {
	r := p.r
	ev.Event, ev.Phase, ev.Title, ev.Limit = notify.UsageLimit, p.ph.ID, p.ph.ShortTitle(), limit
	name := failure.LimitName(limit)
	if ev.Waiting {
		ev.Status = string(state.StatusRunning)
		ev.Message = fmt.Sprintf("phase %s: %s limit reached; waiting until %s, then going on", p.ph.ID, name, ev.Until.Format("15:04 MST"))
	} else {
		ev.Status = string(state.StatusInterrupted)
		ev.Message = fmt.Sprintf("phase %s: %s limit reached; it resets at %s; the run ended (exit %d) — run it again after the reset",
			p.ph.ID, name, failure.ResetClock(ev.Resets, r.now()), derefInt(ev.ExitCode))
	}
	r.announce(ev)
}

// announceEnd tells how the run ended, unless a phase's own notification
// already said it (blocked, a usage limit not waited for).
func (r *orun) announceEnd(err error) {
	code := r.run.ExitCode
	ev := notify.Event{Status: string(r.run.Status), ExitCode: &code}
	switch {
	case errors.Is(err, ErrBlocked), errors.Is(err, ErrUsageLimit):
		return
	case err == nil:
		ev.Event = notify.Completed
		ev.Message = fmt.Sprintf("run %s completed: %s", r.id, phaseCounts(r.run))
	case errors.Is(err, ErrInterrupted):
		ev.Event = notify.Interrupted
		ev.Message = fmt.Sprintf("run %s interrupted (exit %d); the work so far is committed — run it again to resume", r.id, code)
	case errors.Is(err, ErrBudgetExhausted):
		ev.Event = notify.BudgetExhausted
		ev.Phase = phaseWith(r.run, state.StatusFailed)
		// debussy's own words: which budget, how much, how to raise it.
		ev.Reason = err.Error()
		ev.Message = fmt.Sprintf("run %s stopped: budget exhausted (exit %d): %s", r.id, code, oneLine(err.Error()))
	default:
		ev.Event = notify.Failed
		ev.Phase = phaseWith(r.run, state.StatusFailed)
		// The error may quote a gate's output: only which phase failed
		// is sent; `debussy status` has the rest.
		what := "failed"
		if ev.Phase != "" {
			what = "failed at phase " + ev.Phase
		}
		ev.Message = fmt.Sprintf("run %s %s (exit %d): %s — see debussy status", r.id, what, code, phaseCounts(r.run))
	}
	r.announce(ev)
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

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// answerTo is the person's answer (debussy answer) to the question phase
// p asked in prevRun, or nil.
func (p *phaseRun) answerTo(prevRun *state.Run) *state.Answer {
	a, err := p.r.Store.ReadAnswer(prevRun.ID, p.ph.ID)
	if err != nil {
		p.r.log.Warn("read the answer to the blocked phase", "phase", p.ph.ID, "err", err)
	}
	return a
}

// stillBlocked ends phase p, blocked in prevRun and not answered since, as
// blocked again without a session: the question stands, and a session
// would only meet it again. Nothing is committed (the blocked run's commit
// recorded the block); the answer still goes to prevRun, whose question it
// is (this record has no session, so the next run resumes from prevRun).
func (p *phaseRun) stillBlocked(prevRun *state.Run, prev *state.PhaseRecord) error {
	r, id := p.r, p.ph.ID
	p.rec.Question = prev.Question
	p.recorded = true
	r.log.Warn("the phase is still blocked: no session starts until its question is answered",
		"phase", id, "question", prev.Question, "answer_with", AnswerCommand(id), "or", "run again with --resume-blocked to resume it unanswered")
	err := p.endPhase(state.StatusBlocked, withPublic(fmt.Errorf("phase %s %w: its question (run %s) is not answered yet: %s", id, ErrBlocked, prevRun.ID, prev.Question),
		fmt.Sprintf("phase %s was blocked: its question is not answered yet", id)))
	p.announceBlocked(prev.Question)
	return err
}

// answered puts the person's answer a (debussy answer) to the question
// the blocked phase asked in prev first in the resumed prompt next, as a
// new attempt of the same phase. Without an answer (--resume-blocked) the
// phase resumes as any interrupted one, with a warning naming the command.
func (p *phaseRun) answered(prevRun *state.Run, prev *state.PhaseRecord, a *state.Answer, next string) string {
	r := p.r
	if a == nil {
		r.log.Warn("resuming the blocked phase without an answer (--resume-blocked)", "phase", p.ph.ID,
			"question", prev.Question, "answer_with", AnswerCommand(p.ph.ID))
		return next
	}
	q := a.Question
	if q == "" {
		q = prev.Question
	}
	p.rec.Answered = a.Text
	p.priorAttempts = prev.Attempts
	r.recorder.event(record.Answered{Phase: p.ph.ID, Run: prevRun.ID, Attempt: prev.Attempts + 1})
	r.log.Info("resuming the blocked phase with the person's answer", "phase", p.ph.ID, "attempt", prev.Attempts+1)
	return prompt.Answered(p.ph.ID, q, a.Text, next)
}
