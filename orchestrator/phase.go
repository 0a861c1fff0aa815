package orchestrator

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
)

// run runs the phase: its attempts, until it ends.
func (p *phaseRun) run(ctx context.Context) error {
	ph, st := p.ph, &p.start
	st.basePrompt = prompt.Phase(st.plan, ph, phaseFile(st.root, ph))
	if err := p.prepareSandbox(); err != nil {
		return err
	}
	head, err := p.commits.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	st.base = head
	next := st.basePrompt
	if st.prev != nil {
		var answer *state.Answer
		if st.prev.Status == state.StatusBlocked {
			// Its question waits for a person: no session is spent on it
			// until they answer, unless --resume-blocked says so.
			if answer = p.answerTo(); answer == nil && !st.unblock {
				return p.stillBlocked()
			}
		}
		next = p.resume(head, answer)
	}
	st.progressRuns = append(st.progressRuns, p.files.run)
	p.applyHold()
	p.rec.Emit(record.PhaseStarted{Phase: ph.ID, Title: ph.Title, Base: st.base, Attempt: st.priorAttempts + 1, Short: ph.ShortTitle()})
	if err := p.rec.Sync(); err != nil {
		return err
	}

	// lastProblem is for the agent and the local record; lastPublic is
	// what the commit trailer and step summary may say (public.go).
	var lastProblem, lastPublic string
	for attempt := 1; ; attempt++ {
		p.tries.restarts = 0
		// A signal that cannot be cleared or read ends the phase as failed
		// in the ledger too, not left "running".
		if err := p.files.store.ClearSignal(p.files.run, ph.ID); err != nil {
			return p.endPhase(state.StatusFailed, err)
		}
		if err := p.runSessions(ctx, next); err != nil {
			return err
		}
		sig, err := p.files.store.ReadSignal(p.files.run, ph.ID)
		if err != nil {
			return p.endPhase(state.StatusFailed, err)
		}
		var problem string
		var rejected *gitcommit.HookError
		status := ""
		if sig != nil {
			status = string(sig.Status)
		}
		switch policy.AfterAttempt(status, p.cfg.RequireDoneSignal) {
		case policy.VerdictBlocked:
			return p.end(record.PhaseEnded{Status: string(state.StatusBlocked), Question: secrets.Redact(oneLine(sig.Reason))},
				outcome.WithPublic(fmt.Errorf("phase %s %w: the agent reported: %s", ph.ID, ErrBlocked, sig.Reason),
					fmt.Sprintf("phase %s was blocked: the agent reported: %s", ph.ID, outcome.AgentReason(sig.Reason))), true)
		case policy.VerdictAgentFailed:
			problem = fmt.Sprintf("In your last session you reported this phase failed: %s\nLook again: fix what can be fixed, or explain precisely with `debussy done --phase %s --status blocked --reason ...`.", sig.Reason, ph.ID)
			lastProblem = "the agent reported failure: " + sig.Reason
			lastPublic = "the agent reported failure: " + outcome.AgentReason(sig.Reason)
		case policy.VerdictNoSignal:
			problem = fmt.Sprintf("Your last session ended without running `debussy done --phase %s`, so debussy cannot tell whether the phase is finished. Check the phase's tasks and gates, finish what is missing, then run `debussy done --phase %s`.", ph.ID, ph.ID)
			lastProblem = "the session ended without `debussy done`"
			lastPublic = lastProblem
		default:
			res, ok := p.runGates(ctx)
			if ctx.Err() != nil {
				p.commit(eventInterrupted, "interrupted while running gates", commitOpts{})
				return p.endPhase(state.StatusInterrupted, ErrInterrupted)
			}
			if ok {
				var ended bool
				if rejected, ended, err = p.completed(ctx); ended {
					return err
				}
				// The user's hook refused the phase's final commit: the
				// phase is not done, like a failing gate.
				problem = prompt.HookEvidence(rejected)
				lastProblem = rejected.Hook + " hook rejected the commit"
				lastPublic = text.OneLine(rejected.Hook, 40) + " hook rejected the commit"
				break
			}
			if last := res[len(res)-1]; last.Missing() != "" {
				return p.endPhase(state.StatusFailed, outcome.WithPublic(missingError(ph.ID, last), fmt.Sprintf("phase %s failed: %s", ph.ID, outcome.GatePublic(res))))
			}
			problem = gate.Evidence(res)
			lastProblem = gate.Summary(res)
			lastPublic = outcome.GatePublic(res)
		}
		if !policy.Remediate(attempt, p.limits.MaxRetries) {
			break
		}
		c := p.commit(eventRemediation, fmt.Sprintf("before remediation %d/%d", attempt, p.limits.MaxRetries), commitOpts{})
		next = prompt.Remediation(ph, attempt, p.limits.MaxRetries, problem, st.basePrompt)
		if rejected == nil { // else the problem already is the hook's output
			next = prompt.WithRejection(c.rejected, next)
		}
		p.rec.Emit(record.Remediation{Phase: ph.ID, Attempt: st.priorAttempts + attempt + 1, Problem: lastProblem,
			Remediation: attempt, MaxRetries: p.limits.MaxRetries, ProblemPublic: lastPublic})
	}
	return p.endPhase(state.StatusFailed, outcome.WithPublic(fmt.Errorf("phase %s %w on attempt %d: %s", ph.ID, ErrPhaseFailed, p.rec.Record().Attempts, lastProblem),
		fmt.Sprintf("phase %s failed on attempt %d: %s", ph.ID, p.rec.Record().Attempts, lastPublic)))
}

// completed commits a phase whose gates passed and, unless a hook refused
// that commit (returned, for the next attempt), ends it: completed, or
// failed when its work could not be committed (a lock held past lockWait,
// a full disk: done but not in git, the next commit would sweep the work
// into another phase and a clone would redo this one; a rerun resumes
// it), or interrupted when Ctrl-C cut the commit (a hung hook: the work
// stays in the tree for the rerun).
func (p *phaseRun) completed(ctx context.Context) (rejected *gitcommit.HookError, ended bool, err error) {
	c := p.commit(eventCompleted, "completed", commitOpts{})
	switch {
	case ctx.Err() != nil && c.err != nil:
		return nil, true, p.endPhase(state.StatusInterrupted, ErrInterrupted)
	case c.rejected != nil:
		return c.rejected, false, nil
	case c.err != nil:
		return nil, true, p.end(record.PhaseEnded{Status: string(state.StatusFailed), Uncommitted: c.err.Error()},
			fmt.Errorf("phase %s %w: its work could not be committed and stays in the tree (%w); fix that, then rerun to commit it",
				p.ph.ID, ErrPhaseFailed, c.err), false)
	}
	return nil, true, p.end(record.PhaseEnded{Status: string(state.StatusCompleted)}, nil, false)
}

// resume takes the phase up from the checkpoint of the earlier run that
// did not finish it, and returns the first prompt.
func (p *phaseRun) resume(head string, answer *state.Answer) string {
	st, prev, prevRun := &p.start, p.start.prev, p.start.prevRun
	if prev.BaseCommit != "" {
		st.base = prev.BaseCommit
	}
	st.progressRuns = append(st.progressRuns, prevRun.ID)
	// This run's figures start at 0; the earlier runs' stay theirs (status
	// --all would count them twice otherwise). A usage limit the earlier
	// run stopped at is waited out before the first session
	// (mayStartSession), not asked about again; a fallback model it
	// switched to stays.
	resumed := record.PhaseResumed{Phase: p.ph.ID, Run: prevRun.ID, Status: string(prev.Status), PriorTokens: prev.PhaseTokens(),
		PriorCostUSD: prev.PhaseCostUSD(), Limit: prev.Limit, Model: prev.Model}
	if !prev.WaitingUntil.IsZero() {
		resumed.WaitingUntil = &prev.WaitingUntil
	}
	// A handoff its last session wrote (a budget's wrap-up asks for one
	// before the stop) is what the resume starts from; an earlier
	// session's went into a restart's prompt already.
	if k := len(prev.Handoffs); k > 0 && filepath.Base(prev.Handoffs[k-1]) == fmt.Sprintf("handoff-%d.md", prev.Sessions) {
		p.carry.handoff = prev.Handoffs[k-1]
		resumed.Handoff = p.carry.handoff
	}
	p.rec.Emit(resumed)
	cp := p.checkpoint("resume", fmt.Sprintf("run %s stopped (%s) before phase %s was done", prevRun.ID, prev.Status, p.ph.ID), head)
	next := cp.Prompt(st.basePrompt)
	if prev.Status == state.StatusBlocked {
		next = p.answered(answer, next)
	}
	return next
}

// answerTo is the person's answer (debussy answer) to the question the
// phase asked in the blocked run it resumes, or nil.
func (p *phaseRun) answerTo() *state.Answer {
	a, err := p.files.store.ReadAnswer(p.start.prevRun.ID, p.ph.ID)
	if err != nil {
		p.rec.Emit(record.Warning{Phase: p.ph.ID, What: "read the answer to the blocked phase", Error: err.Error(), Err: err})
	}
	return a
}

// stillBlocked ends the phase, blocked in the run it would resume and not
// answered since, as blocked again without a session: the question
// stands, and a session would only meet it again. Nothing is committed
// (the blocked run's commit recorded the block); the answer still goes to
// that run, whose question it is (this record has no session, so the next
// run resumes from that one).
func (p *phaseRun) stillBlocked() error {
	prevRun, prev, id := p.start.prevRun, p.start.prev, p.ph.ID
	p.rec.Emit(record.StillBlocked{Phase: id, Run: prevRun.ID, Question: prev.Question})
	return p.end(record.PhaseEnded{Status: string(state.StatusBlocked), Question: prev.Question},
		outcome.WithPublic(fmt.Errorf("phase %s %w: its question (run %s) is not answered yet: %s", id, ErrBlocked, prevRun.ID, prev.Question),
			fmt.Sprintf("phase %s was blocked: its question is not answered yet", id)), false)
}

// answered puts the person's answer a (debussy answer) to the question the
// blocked phase asked first in the resumed prompt next, as a new attempt
// of the same phase. Without an answer (--resume-blocked) the phase
// resumes as any interrupted one, with a warning naming the command.
func (p *phaseRun) answered(a *state.Answer, next string) string {
	prevRun, prev := p.start.prevRun, p.start.prev
	if a == nil {
		p.rec.Emit(record.Unanswered{Phase: p.ph.ID, Run: prevRun.ID, Question: prev.Question})
		return next
	}
	q := a.Question
	if q == "" {
		q = prev.Question
	}
	p.start.priorAttempts = prev.Attempts
	p.rec.Emit(record.Answered{Phase: p.ph.ID, Run: prevRun.ID, Attempt: prev.Attempts + 1, Text: a.Text})
	return prompt.Answered(p.ph.ID, q, a.Text, next)
}

// applyHold makes the phase wait for the account's usage limit that git
// records before its first session (mayStartSession waits, or ends the run
// with exit 75 beyond usage_limit_wait).
func (p *phaseRun) applyHold() {
	h := p.start.hold
	if h == nil || !h.Resets.After(p.now()) || !h.Resets.After(p.rec.Record().WaitingUntil) {
		return
	}
	p.rec.Emit(record.UsageLimitHold{Phase: p.ph.ID, Limit: h.Limit, Resets: h.Resets, Commit: h.Commit, ByPhase: h.Phase})
}

// newPhase is phase ph of the run, to run in repo with rec, its side of
// the record; keep are its worktree's .worktreeinclude copies.
func (r *orun) newPhase(ph *plans.Phase, rec *recorder.Phase, repo *gitcommit.Repo, keep []string) *phaseRun {
	c := r.committer(gitCommitter{repo}, rec, "", ph.ID, true)
	c.user, c.keep = r.userFiles, keep
	if r.Push != "" {
		c.push = func() { r.job.Pushed(ph.ID, repo, c) }
	}
	p := &phaseRun{ph: ph, rec: rec, sessions: claudeSessions{}, launch: r.launch, commits: c, limits: r.limits,
		files: phaseFiles{store: r.Store, run: r.id}, now: r.now, cfg: r.cfg, extend: r.Extend,
		start: phaseStart{plan: r.Plan, planRel: r.planRel(), root: r.root(), dir: repo.Root(), env: repo.ChildEnv(r.Env), hold: r.job.Hold(),
			unblock: r.Unblock},
		carry: carried{events: checkpoint.NewRecorder(), window: int64(r.cfg.ContextWindow)}}
	var prevSpend *state.Economics
	if !r.Restart {
		p.start.prevRun, p.start.prev = r.resumeFrom(ph.ID, repo)
		if p.start.prev != nil {
			prevSpend = p.start.prev.Economics
		}
	}
	p.spend = r.spend.Phase(rec.Record(), prevSpend)
	return p
}

// resumeFrom is the earlier run's record of phase id to resume from: the
// last that ran a session and did not finish, unless git no longer has its
// work (a `git reset --hard` past it: its checkpoint, handoff and notes
// describe files that are gone).
func (r *orun) resumeFrom(id string, repo *gitcommit.Repo) (*state.Run, *state.PhaseRecord) {
	var prevRun *state.Run
	var prev *state.PhaseRecord
	r.rec.Read(func(l *state.Ledger, _ *state.Run) { prevRun, prev = l.LastUnfinished(r.planPath(), id) })
	if prev == nil || prevRun.ID == r.id {
		return nil, nil
	}
	if why := discarded(repo, prev); why != "" {
		r.rec.Emit(record.ResumeDiscarded{Phase: id, Run: prevRun.ID, Why: why})
		return nil, nil
	}
	if prev.Sessions == 0 {
		return nil, nil
	}
	return prevRun, prev
}
