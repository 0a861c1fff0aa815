// Package orchestrator is debussy's loop: phases in dependency order →
// attempts (remediation after a failed gate or a missing done signal) →
// sessions (restarts when the context fills, retries when a session fails
// for reasons of its own).
package orchestrator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/sandbox"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
)

// Errors that decide exit codes (mapped in commands).
var (
	ErrInterrupted = errors.New("interrupted")
	ErrDirty       = errors.New("uncommitted changes to tracked files")
	ErrSetup       = errors.New("cannot start")
	// ErrPhaseFailed and ErrBlocked read as verbs in messages:
	// "phase 2 failed on attempt 3: …".
	ErrPhaseFailed = errors.New("failed")
	ErrBlocked     = errors.New("was blocked")
	// ErrLedger stops a run whose ledger cannot be written: a rerun
	// resumes from the ledger, so going on without it would lose work.
	ErrLedger = errors.New("ledger not saved")
)

// Options are a run's inputs, all resolved by the caller.
type Options struct {
	Config config.Config
	Plan   *plans.Plan
	Repo   *gitcommit.Repo
	Store  *state.Store
	Logger *slog.Logger
	Out    io.Writer // the final summary table
	// OutText lets the summary name each phase's full error (gate output,
	// the agent's words): where Out is a terminal or --log-text says so.
	OutText bool
	SelfDir string // debussy's own directory, put first on the agent's PATH
	// Self is debussy's own executable: only a command running that very
	// file gets debussy's allowance under any permission mode; "" gives
	// none.
	Self        string
	PhaseID     string // --phase: start here
	Only        string // --only: run exactly this phase (ledger.go)
	Restart     bool   // --restart: ignore the ledger
	FailFast    bool   // --fail-fast: a failed phase of a --parallel run stops the running others (afterfailure.go)
	Base        string // --base: BaseDeps merges the --only phase's dependencies' branches from the remote first; "" nothing (remote.go)
	Push        string // --push REMOTE: push the phase's branch after every commit debussy makes for it; "" pushes nothing (remote.go)
	Hard        <-chan struct{}
	Env         []string // the environment claude inherits
	StepSummary string   // GITHUB_STEP_SUMMARY path, if set
	Now         func() time.Time
	// Backoff is the wait before retry n (1-based) of a failed session; nil
	// means retry_backoff doubling up to 1 min.
	Backoff func(n int) time.Duration
	// InterruptGrace bounds how long a Ctrl-C waits for the running tool
	// before the session is killed; 0 means 10 s.
	InterruptGrace time.Duration
	// ExitCode maps the run's error to the exit code the user sees, which
	// the ledger records. commands passes its mapping so exit codes are
	// decided in one place; nil records 0 for success and 1 otherwise.
	ExitCode func(error) int
	// Progress, when set, is called from the session loop after every
	// stream event (and once when the session ends): the live view.
	Progress func(Progress)
	// Extend, when set, asks the user whether to extend a budget that ran
	// out (a terminal, never CI): true raises it by its configured amount
	// and the phase goes on. At most budget.max_extensions times per
	// budget; nil never extends. It may block (a person answering) and is
	// called while other phases go on, from one phase at a time or several.
	Extend func(context.Context, ExtendRequest) bool
	// Tracer exports the run's spans (telemetry.go); nil exports none.
	Tracer *telemetry.Tracer
	// Sandbox bounds every phase's sessions and gates (sandbox.go); nil
	// runs them unbounded.
	Sandbox *sandbox.Boundary

	// Unblock (--resume-blocked) resumes a blocked phase nobody has
	// answered; without it such a phase stays blocked and starts no session.
	Unblock bool
}

// Run executes the plan. It returns nil when every phase completed; what
// happened is in the ledger (debussy status) and the summary on Out.
func Run(ctx context.Context, opts Options) error {
	r, err := newRun(opts)
	if err != nil {
		return err
	}
	defer r.close()
	ctx, r.runSpan = r.Tracer.Start(ctx, "debussy.run", attribute.String("debussy.run", r.id),
		attribute.String("debussy.plan", r.Plan.Name))
	r.ctx = ctx
	err = r.execute(ctx)
	err = r.rem().finalPush(err)
	ferr := r.finish(err)
	endRunTrace(r.runSpan, r.run)
	// Before close: a failed delivery is an event.
	if !r.notifier.Flush() {
		r.log.Warn("notifications still unsent when the run ended were abandoned")
	}
	if ferr != nil && err == nil {
		return ferr
	}
	return err
}

// orun is one `debussy run` in progress.
type orun struct {
	Options
	cfg    config.Config
	limits policy.Limits // what policy.After decides on
	log    *slog.Logger
	id     string
	ledger *state.Ledger
	run    *state.Run
	// recorder owns ledger, run and the events log while phases run
	// (recorder.go).
	recorder *recorder
	release  func() error
	now      func() time.Time
	// answers are claude's get_context_usage answers, asked once per run
	// for each CLI version and model (session.Answers).
	answers session.Answers
	// recovered is set when a stale run was taken over; its leftover
	// work in the tree is committed rather than refused as dirty.
	recovered []*state.Run
	// ctx is the run's root context (execute's): git commands, hooks and
	// the pushes that follow commits take it (gitCtx, remote.go), so a
	// Ctrl-C cuts a hung one.
	ctx context.Context
	// userFiles are the untracked files present at the start: the
	// user's, left out of this run's commits (userfiles.go).
	userFiles gitcommit.Fingerprints
	// spend is the run's spend against its budgets, one account.
	spend *spend.Account
	// reached is set once a session of the run got an answer from the
	// API: from then on an unreachable API is a blip to retry, before it
	// a setup error (sessions.go).
	reached atomic.Bool
	// unpushed are the phases whose last push failed (remote.go).
	unpushed map[string]*phaseRun
	// hold is the account's usage limit git records, read at the start
	// (remote.go); nil when none is in force.
	hold *remote.Hold
	// preview is set for Check (--dry-run): nothing is fetched, so --base
	// deps's dependencies are not required to be done yet.
	preview bool
	// notifier sends the run's notifications (notify.go); nil sends none.
	notifier *notify.Dispatcher
	// runSpan is the run's root span (telemetry.go).
	runSpan telemetry.Span
}

func newRun(opts Options) (*orun, error) {
	r := &orun{Options: opts, cfg: opts.Config, log: opts.Logger, now: opts.Now, ctx: context.Background(), unpushed: map[string]*phaseRun{}}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.Out == nil {
		r.Out = io.Discard
	}
	r.limits = policy.LimitsOf(r.cfg, r.Backoff)
	if r.InterruptGrace == 0 {
		r.InterruptGrace = 10 * time.Second
	}
	if r.ExitCode == nil {
		r.ExitCode = func(err error) int {
			if err == nil {
				return 0
			}
			return 1
		}
	}
	r.id = state.NewRunID(r.now(), rand.Reader)
	host, _ := os.Hostname()
	release, stale, err := r.Store.Lock(state.LockInfo{PID: os.Getpid(), RunID: r.id, Started: r.now(), Host: host})
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", r.Store.Dir, err)
	}
	r.release = release
	if r.ledger, err = r.Store.Load(); err != nil {
		r.release()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	if stale != nil {
		r.log.Warn("took over the lock of a run whose process is gone", "run", stale.RunID, "pid", stale.PID)
	}
	r.markStaleRuns()
	reclaimGitLocks(r.Repo, r.log)
	events, err := r.Store.OpenEvents(r.id, r.now)
	if err != nil {
		r.release()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	r.recorder = &recorder{store: r.Store, ledger: r.ledger, events: events, now: r.now, log: r.log}
	r.startNotify()
	// An earlier run's answers about the window (a day at most): a
	// session of the same CLI version and model asks nothing.
	for _, a := range r.Store.ContextAnswers(r.now()) {
		r.answers.Seed(a.SpecModel, a.Known, a.At)
	}
	return r, nil
}

// close keeps the run's answers about the window for the next runs, closes
// the events log and releases the lock.
func (r *orun) close() {
	var list []state.ContextAnswer
	r.answers.Each(func(m string, k event.KnownContext, at time.Time) {
		list = append(list, state.ContextAnswer{SpecModel: m, Known: k, At: at})
	})
	if len(list) > 0 {
		slices.SortFunc(list, func(a, b state.ContextAnswer) int { return strings.Compare(a.SpecModel, b.SpecModel) })
		if err := r.Store.SaveContextAnswers(list); err != nil {
			r.log.Debug("keep claude's answers about the window", "err", err)
		}
	}
	r.recorder.close()
	if r.release != nil {
		if err := r.release(); err != nil {
			r.log.Warn("release lock", "err", err)
		}
	}
}

func (r *orun) execute(ctx context.Context) error {
	r.ctx = ctx
	order, err := r.Plan.Order()
	if err != nil {
		return fmt.Errorf("%w: %w", plans.ErrInvalidPlan, err)
	}
	planPath := r.planPath()
	r.run = &state.Run{ID: r.id, Plan: planPath, Status: state.StatusRunning, StartedAt: r.now(), PID: os.Getpid()}
	r.spend = spend.New(r.cfg.Budget, r.run.StartedAt)
	r.recorder.run, r.recorder.spend = r.run, r.spend
	for _, ph := range order {
		r.run.Phases = append(r.run.Phases, &state.PhaseRecord{ID: ph.ID, Title: ph.ShortTitle(), Status: state.StatusPending,
			UncheckedGates: gate.Unchecked(ph)})
	}
	if r.rem().usesRemote() {
		// Before the phases are chosen: the merged branches bring the
		// dependencies' completions into HEAD's ledger.
		if err := r.rem().syncRemote(ctx); err != nil {
			return err
		}
	}
	r.rem().readHold(ctx)
	todo, err := r.selectPhases(order)
	if err != nil {
		return err
	}
	if err := requireCommit(r.Repo); err != nil {
		return err
	}
	if err := r.checkTree(); err != nil {
		return err
	}
	if err := r.recordUserFiles(); err != nil {
		return err
	}
	r.ledger.Runs = append(r.ledger.Runs, r.run)
	if err := r.recorder.save(); err != nil {
		return err
	}
	settings := policy.Recorded(r.cfg)
	r.recorder.event(record.RunStarted{Plan: planPath, Phases: len(order),
		ContextThreshold: r.cfg.ContextThreshold, ContextWindow: r.cfg.ContextWindow, ContextMaxTokens: new(r.cfg.ContextMaxTokens),
		Settings: &settings})
	r.log.Info("run started", "run", r.id, "plan", r.Plan.Name, "phases", len(order))

	if r.cfg.Parallel > 1 && r.rem().usesRemote() {
		// --base deps and --push work on one phase's branch in your work
		// tree: a CI job runs one phase.
		r.log.Info("--base/--push: phases run one by one in your work tree", "parallel", r.cfg.Parallel)
	} else if r.cfg.Parallel > 1 {
		return (&scheduler{r: r}).run(ctx, order, todo)
	}
	for _, ph := range order {
		if !todo[ph.ID] {
			continue
		}
		rec := r.recorder.phase(ph.ID) // the phase's own, saved by copy
		if err := ctx.Err(); err != nil {
			return ErrInterrupted
		}
		if err := newPhaseRun(r, ph, rec, r.Repo, nil).run(ctx); err != nil {
			return err
		}
	}
	return nil
}

// planPath is the plan's absolute path: the ledger matches runs by it.
func (r *orun) planPath() string {
	p := r.Plan.Path
	if abs, err := absPath(p); err == nil {
		return abs
	}
	return p
}

// selectPhases decides which phases this run executes and logs why the
// others are skipped.
func (r *orun) selectPhases(order []*plans.Phase) (map[string]bool, error) {
	todo := map[string]bool{}
	done := map[string]string{} // id → why it counts as completed
	res := r.resolver()
	for _, ph := range order {
		if a := res.Phase(ph.ID); a.Done {
			rec := r.run.Phase(ph.ID)
			done[ph.ID] = a.Why
			rec.Status = state.StatusSkipped
			if a.Source != completion.Table {
				rec.Commits = a.Commits
			}
			continue
		}
		todo[ph.ID] = true
	}
	if r.Only != "" {
		if err := r.selectOnly(order, todo, done); err != nil {
			return nil, err
		}
	}
	if r.PhaseID != "" {
		start := r.Plan.Phase(r.PhaseID)
		if start == nil {
			return nil, fmt.Errorf("%w: --phase %s: no such phase in %s; its phases are %s", ErrSetup, r.PhaseID, r.Plan.Path, phaseIDs(r.Plan))
		}
		// --phase runs that phase and what follows it in run order; its
		// dependencies (transitively) must already be complete.
		if missing := r.Plan.Unfinished(start, func(id string) bool { _, ok := done[id]; return ok }); len(missing) > 0 {
			noun := "phase"
			if len(missing) > 1 {
				noun = "phases"
			}
			return nil, fmt.Errorf("%w: --phase %s depends on unfinished %s %s; run them first or drop --phase",
				ErrSetup, r.PhaseID, noun, strings.Join(missing, ", "))
		}
		todo[start.ID] = true
		delete(done, start.ID)
		before := true
		for _, ph := range order {
			if ph.ID == start.ID {
				before = false
			}
			if before {
				delete(todo, ph.ID)
				if r.run.Phase(ph.ID).Status == state.StatusPending {
					r.run.Phase(ph.ID).Status = state.StatusSkipped
				}
			}
		}
	}
	for _, ph := range order {
		if why, ok := done[ph.ID]; ok {
			r.log.Info("phase skipped", "phase", ph.ID, "why", public.Own(why))
		}
	}
	return todo, nil
}

// checkTree refuses a tree with uncommitted changes to tracked files: debussy
// must not sweep the user's own edits into its commits. Leftovers of a run
// that died are that run's work and are committed instead.
func (r *orun) checkTree() error {
	if len(r.recovered) > 0 && r.cfg.AutoCommit {
		// A run that died (kill -9, crash) left its agent's work in the
		// tree, tracked or new: commit it as that run's, before anything else.
		last := r.recovered[len(r.recovered)-1]
		phase := runningPhase(last)
		msg := gitcommit.Message{
			Subject: fmt.Sprintf("debussy: phase %s — work left by interrupted run %s", phase, last.ID),
			Body:    "debussy stopped without committing (killed or crashed); this is what it left in the tree.",
			Run:     last.ID, Plan: PlanRel(r.Repo.Root(), last.Plan), Phase: phase, Event: string(eventInterrupted),
		}
		// The files that run found at its start are still the user's.
		user, _, err := r.Store.LoadUserFiles(last.ID)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		var commits *[]string // listed before the branch moves to it
		if p := last.Phase(phase); p != nil {
			commits = &p.Commits
		} else {
			commits = new([]string)
		}
		listed := len(*commits)
		c, err := r.commitWaiting(func() (gitcommit.Commit, error) {
			return r.Repo.CommitAll(r.gitCtx(), msg.String(), excludeUser(user, msg), listFirst(commits, r.recorder.save))
		})
		unlist(commits, listed, err, r.recorder.save)
		switch {
		case errors.Is(err, gitcommit.ErrNothingToCommit):
		case err != nil:
			return fmt.Errorf("%w: commit the interrupted run's work: %w", ErrSetup, err)
		default:
			r.log.Info("committed the work an interrupted run left", "commit", gitcommit.Short(c.Hash), "files", c.Files, "run", last.ID)
		}
	}
	dirty, err := r.Repo.DirtyTracked(r.gitCtx())
	if err != nil {
		return fmt.Errorf("%w: check the work tree: %w", ErrSetup, err)
	}
	dirty = withoutOwnIgnore(r.Repo, dirty)
	if len(dirty) == 0 || r.cfg.AllowDirty {
		return nil
	}
	return dirtyError(dirty)
}

func runningPhase(run *state.Run) string {
	for _, p := range run.Phases {
		if p.Status == state.StatusInterrupted || p.Status == state.StatusRunning {
			return p.ID
		}
	}
	return ""
}

// finish records the run's end in the ledger, prints the summary and
// writes the CI step summary. Its error is the ledger's.
func (r *orun) finish(err error) error {
	if r.run == nil || r.ledger.Run(r.id) == nil {
		return nil // refused before it started: nothing to record
	}
	r.run.EndedAt = r.now()
	switch {
	case err == nil:
		r.run.Status = state.StatusCompleted
	case errors.Is(err, ErrLedger):
		r.run.Status = state.StatusFailed
	case errors.Is(err, ErrInterrupted):
		r.run.Status = state.StatusInterrupted
	case errors.Is(err, ErrBlocked):
		r.run.Status = state.StatusBlocked
	default:
		r.run.Status = state.StatusFailed
	}
	// The ledger keeps the exit code the user saw.
	r.run.ExitCode = r.ExitCode(err)
	serr := r.recorder.save()
	if serr != nil && err != nil && !errors.Is(err, ErrLedger) {
		// The run's own error is returned; this one must still be seen.
		r.log.Error("ledger not saved", "err", serr)
	}
	r.recorder.event(record.RunEnded{Status: string(r.run.Status)})
	if r.OutText {
		report.Summary(r.Out, r.run)
	} else {
		report.PublicSummary(r.Out, r.run)
	}
	r.announceEnd(err)
	if r.StepSummary != "" {
		if werr := appendStepSummary(r.StepSummary, r.Plan.Name, r.run); werr != nil {
			r.log.Warn("write GITHUB_STEP_SUMMARY", "err", werr)
		}
	}
	return serr
}
