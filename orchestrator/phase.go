package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/prompt"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
)

// phaseRun is the state of one phase across its attempts and sessions.
type phaseRun struct {
	// r is the run: its configuration, the recorder (recorder.go) and the
	// services phases share, each read-only while phases run or locking
	// itself (parallel.go says which).
	r  *orun
	ph *plans.Phase
	// planRel is the plan as the Debussy-Plan trailer names it.
	planRel string
	rec     *state.PhaseRecord
	repo    *gitcommit.Repo // where the phase works: the user's tree, or its worktree (parallel.go)
	// dir is repo's root, where its sessions and gates run; env the
	// environment they inherit (repo.ChildEnv: no GIT_DIR sending the
	// agent's git elsewhere).
	dir string
	env []string
	// sessions runs its sessions and committer commits its work and
	// writes its checkpoints (seams.go).
	sessions  Sessions
	committer Committer
	// keep are the paths its commits leave out whatever their content: its
	// worktree's .worktreeinclude copies (worktreefiles.go).
	keep []string
	base string // commit the phase started from: "files changed" are against it
	// basePrompt is the phase prompt every session's prompt ends with.
	basePrompt  string
	claudeBox   *boxedClaude         // how its sessions start in a bounded run (sandbox.go)
	events      *checkpoint.Recorder // what the agent did, for checkpoints
	window      int64                // learned from the CLI's result, for the next session
	restarts    int                  // context restarts in the current attempt
	transient   int                  // retries after sessions that failed on their own
	checkpoints int
	lastTrigger time.Time // when the last restart was triggered, for turnaround
	// rejected is the user's hook that refused debussy's last commit; the
	// next prompt carries its output so the agent can fix what it reports.
	rejected *gitcommit.HookError
	// uncommitted is why the last commit failed for another reason than a
	// hook (a lock held past lockWait, a full disk); nil once one lands.
	uncommitted error
	// progressRuns are the runs whose `debussy progress` lines belong to
	// this phase (earlier interrupted runs when resuming).
	progressRuns []string
	// prevSpend is what an earlier run of this phase spent (a resume): its
	// budget counts it.
	prevSpend *state.Economics
	// spend is the phase's account in this run (spendOf).
	spend *spend.Phase
	// From the session that just ended, for the next checkpoint: the
	// agent's handoff file or why there is none; avoid lists the repeated
	// calls of every doom loop in this phase.
	handoff, noHandoff string
	avoid              []string
	// refused are the tool calls debussy itself refused in this phase's
	// sessions of this run, by tool_use id (session.Result.Refused): the
	// checkpoint lists them as debussy's refusals, not the agent's
	// failures. Its tool calls are this run's too (events).
	refused       map[string]string
	pointsChecked bool // warnCompactionPoint ran
	// undelivered are notes the last session's policy decided but never
	// delivered (its stop came first): the next session hears them first.
	undelivered []string
	// recorded is set once a commit recorded the phase's end in git
	// (ledger.go); reason is why it did not complete, for that commit.
	recorded bool
	reason   string
	// usageLimit is the Debussy-Usage-Limit trailer of the commit made at a
	// usage limit (usagelimit.go); "" otherwise.
	usageLimit string
	// trace is the context of the phase's span; sessionTrace that of its
	// current session's (telemetry.go).
	trace, sessionTrace    context.Context
	phaseSpan, sessionSpan telemetry.Span
	contextPeak            int64 // the current session's highest context
	// priorAttempts are the attempts of the blocked run this one resumes
	// with the person's answer: the answer starts the next attempt.
	priorAttempts int
	// running is the current session's tool in flight, for the live view.
	running *session.Running
}

// newPhaseRun is phase ph of run r, to run in repo. rec is the phase's own
// record, which only the goroutine running it changes (recorder.go).
func newPhaseRun(r *orun, ph *plans.Phase, rec *state.PhaseRecord, repo *gitcommit.Repo, keep []string) *phaseRun {
	return &phaseRun{r: r, ph: ph, planRel: r.planRel(), rec: rec, repo: repo, keep: keep, events: checkpoint.NewRecorder(), window: int64(r.cfg.ContextWindow),
		dir: repo.Root(), env: repo.ChildEnv(r.Env), sessions: claudeSessions{}, committer: gitCommitter{repo}}
}

// run runs the phase: its attempts, until it ends.
func (p *phaseRun) run(ctx context.Context) error {
	r, ph, rec := p.r, p.ph, p.rec
	ctx = p.startPhaseTrace(ctx)
	defer p.endPhaseTrace()
	p.basePrompt = prompt.Phase(r.Plan, ph, phaseFile(r.root(), ph))
	if err := p.prepareSandbox(); err != nil {
		return err
	}
	head, err := p.committer.Head()
	if err != nil {
		return fmt.Errorf("%w: read HEAD: %w", ErrSetup, err)
	}
	p.base = head
	next := p.basePrompt

	// Resume: a phase an earlier run started but did not finish continues
	// from a checkpoint, never from a blank prompt.
	if !r.Restart {
		prevRun, prev := r.recorder.lastUnfinished(r.planPath(), ph.ID)
		if prev != nil && prevRun.ID != r.id {
			if why := discarded(p.repo, prev); why != "" {
				r.log.Warn("not resuming from an earlier run: its work was discarded from git; the phase starts fresh", "phase", ph.ID, "run", prevRun.ID, "why", public.Own(why))
				r.recorder.event(record.ResumeDiscarded{Phase: ph.ID, Run: prevRun.ID, Why: why})
				prev = nil
			}
		}
		var answer *state.Answer
		if prev != nil && prevRun.ID != r.id && prev.Sessions > 0 && prev.Status == state.StatusBlocked {
			// Its question waits for a person: no session is spent on it
			// until they answer, unless --resume-blocked says so.
			if answer = p.answerTo(prevRun); answer == nil && !r.Unblock {
				return p.stillBlocked(prevRun, prev)
			}
		}
		if prev != nil && prevRun.ID != r.id && prev.Sessions > 0 {
			if prev.BaseCommit != "" {
				p.base = prev.BaseCommit
			}
			p.progressRuns = append(p.progressRuns, prevRun.ID)
			// This run's figures start at 0; the earlier runs' stay theirs
			// (status --all would count them twice otherwise).
			rec.PriorTokens, rec.PriorCostUSD = prev.PhaseTokens(), prev.PhaseCostUSD()
			// A usage limit the earlier run stopped at is waited out before
			// the first session (mayStartSession), not asked about again;
			// a fallback model it switched to stays.
			rec.WaitingUntil, rec.Limit, rec.Model = prev.WaitingUntil, prev.Limit, prev.Model
			p.prevSpend = prev.Economics
			// A handoff its last session wrote (a budget's wrap-up asks for
			// one before the stop) is what the resume starts from; an
			// earlier session's went into a restart's prompt already.
			if k := len(prev.Handoffs); k > 0 && filepath.Base(prev.Handoffs[k-1]) == fmt.Sprintf("handoff-%d.md", prev.Sessions) {
				p.handoff = prev.Handoffs[k-1]
			}
			cp, err := p.checkpoint("resume", fmt.Sprintf("run %s stopped (%s) before phase %s was done", prevRun.ID, prev.Status, ph.ID), head)
			if err != nil {
				return err
			}
			next = cp.Prompt(p.basePrompt)
			if prev.Status == state.StatusBlocked {
				next = p.answered(prevRun, prev, answer, next)
			}
			r.log.Info("resuming the phase from a checkpoint", "phase", ph.ID, "run", prevRun.ID, "files_changed", len(cp.Files))
		}
	}
	p.progressRuns = append(p.progressRuns, r.id)
	p.applyHold()

	rec.Status = state.StatusRunning
	rec.BaseCommit = p.base
	rec.StartedAt = r.now()
	if err := r.recorder.savePhase(p.rec); err != nil {
		return err
	}
	r.recorder.event(record.PhaseStarted{Phase: ph.ID, Title: ph.Title, Base: p.base})
	r.log.Info("phase started", "phase", ph.ID, "title", ph.ShortTitle())

	// lastProblem is for the agent and the local record; lastPublic is
	// what the commit trailer and step summary may say (public.go).
	var lastProblem, lastPublic string
	for attempt := 1; ; attempt++ {
		rec.Attempts = p.priorAttempts + attempt
		p.restarts = 0
		// A signal that cannot be cleared or read ends the phase as failed
		// in the ledger too, not left "running".
		if err := r.Store.ClearSignal(r.id, ph.ID); err != nil {
			return p.endPhase(state.StatusFailed, err)
		}
		if err := p.runSessions(ctx, next); err != nil {
			return err
		}
		sig, err := r.Store.ReadSignal(r.id, ph.ID)
		if err != nil {
			return p.endPhase(state.StatusFailed, err)
		}
		var problem string
		hookProblem := false
		status := ""
		if sig != nil {
			status = string(sig.Status)
		}
		switch policy.AfterAttempt(status, r.cfg.RequireDoneSignal) {
		case policy.VerdictBlocked:
			rec.Question = secrets.Redact(oneLine(sig.Reason))
			err := p.endPhase(state.StatusBlocked, withPublic(fmt.Errorf("phase %s %w: the agent reported: %s", ph.ID, ErrBlocked, sig.Reason),
				fmt.Sprintf("phase %s was blocked: the agent reported: %s", ph.ID, agentReason(sig.Reason))))
			p.announceBlocked(rec.Question)
			return err
		case policy.VerdictAgentFailed:
			problem = fmt.Sprintf("In your last session you reported this phase failed: %s\nLook again: fix what can be fixed, or explain precisely with `debussy done --phase %s --status blocked --reason ...`.", sig.Reason, ph.ID)
			lastProblem = "the agent reported failure: " + sig.Reason
			lastPublic = "the agent reported failure: " + agentReason(sig.Reason)
		case policy.VerdictNoSignal:
			problem = fmt.Sprintf("Your last session ended without running `debussy done --phase %s`, so debussy cannot tell whether the phase is finished. Check the phase's tasks and gates, finish what is missing, then run `debussy done --phase %s`.", ph.ID, ph.ID)
			lastProblem = "the session ended without `debussy done`"
			lastPublic = lastProblem
		default:
			var res []gate.Result
			var ok bool
			root, env := p.dir, p.env
			res, ok = p.runGates(ctx, root, env)
			if ctx.Err() != nil {
				p.commit(eventInterrupted, "interrupted while running gates")
				return p.endPhase(state.StatusInterrupted, ErrInterrupted)
			}
			if ok {
				p.commit(eventCompleted, "completed")
				if ctx.Err() != nil && p.uncommitted != nil {
					// Ctrl-C cut the commit (a hung hook): the work stays in
					// the tree for the rerun, which resumes the phase.
					return p.endPhase(state.StatusInterrupted, ErrInterrupted)
				}
				if p.rejected == nil {
					return p.endPhase(state.StatusCompleted, nil)
				}
				// The user's hook refused the phase's final commit: the
				// phase is not done, like a failing gate.
				problem = prompt.HookEvidence(p.rejected)
				lastProblem = p.rejected.Hook + " hook rejected the commit"
				lastPublic = text.OneLine(p.rejected.Hook, 40) + " hook rejected the commit"
				hookProblem = true
				break
			}
			if last := res[len(res)-1]; last.Missing() != "" {
				return p.endPhase(state.StatusFailed, withPublic(missingError(ph.ID, last), fmt.Sprintf("phase %s failed: %s", ph.ID, gatePublic(res))))
			}
			problem = gate.Evidence(res)
			lastProblem = gate.Summary(res)
			lastPublic = gatePublic(res)
		}
		if !policy.Remediate(attempt, r.limits.MaxRetries) {
			break
		}
		r.log.Warn("phase not done: starting a remediation session", "phase", ph.ID, "problem", public.Words(lastPublic, lastProblem),
			"remediation", attempt, "max_retries", r.limits.MaxRetries)
		p.commit(eventRemediation, fmt.Sprintf("before remediation %d/%d", attempt, r.limits.MaxRetries))
		next = prompt.Remediation(ph, attempt, r.limits.MaxRetries, problem, p.basePrompt)
		if !hookProblem { // else the problem already is the hook's output
			next = p.withRejection(next)
		}
		r.recorder.event(record.Remediation{Phase: ph.ID, Attempt: attempt + 1, Problem: lastProblem})
	}
	return p.endPhase(state.StatusFailed, withPublic(fmt.Errorf("phase %s %w on attempt %d: %s", ph.ID, ErrPhaseFailed, rec.Attempts, lastProblem),
		fmt.Sprintf("phase %s failed on attempt %d: %s", ph.ID, rec.Attempts, lastPublic)))
}

// endPhase records the phase's outcome, in git too (a commit with the
// outcome's trailers, recordEnd); err is returned unchanged unless the
// ledger cannot be written.
func (p *phaseRun) endPhase(status state.Status, err error) error {
	r := p.r
	p.recordEnd(status, err)
	if status == state.StatusCompleted && p.uncommitted != nil {
		// Done but not in git: the next commit would sweep the work into
		// another phase, a clone would redo this one, and after the last
		// phase the work would stay uncommitted. A rerun resumes it.
		status = state.StatusFailed
		p.rec.Uncommitted = p.uncommitted.Error()
		err = fmt.Errorf("phase %s %w: its work could not be committed and stays in the tree (%w); fix that, then rerun to commit it",
			p.ph.ID, ErrPhaseFailed, p.uncommitted)
	}
	p.rec.Status = status
	p.rec.EndedAt = r.now()
	if err != nil {
		p.rec.LastError = err.Error()
		p.rec.Reason = publicReason(err)
	}
	if serr := r.recorder.savePhase(p.rec); serr != nil {
		if err != nil {
			r.log.Error("phase ended", "phase", p.ph.ID, "status", status, "err", err)
		}
		return serr
	}
	r.recorder.event(record.PhaseEnded{Phase: p.ph.ID, Status: string(status), Error: errString(err)})
	switch status {
	case state.StatusCompleted:
		r.log.Info("phase completed", "phase", p.ph.ID, "sessions", p.rec.Sessions, "restarts", p.rec.Restarts)
	case state.StatusInterrupted:
		if errors.Is(err, ErrUsageLimit) {
			r.log.Warn(err.Error(), "resets", p.rec.WaitingUntil.Format(time.RFC3339))
			break
		}
		r.log.Warn("phase interrupted: work committed, state saved — run the same command again to resume", "phase", p.ph.ID)
	default:
		r.log.Error("phase ended", "phase", p.ph.ID, "status", status, "err", err)
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func relTo(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
