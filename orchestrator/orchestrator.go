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

	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/completion"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
)

// Options are a run's inputs, all resolved by the caller.
type Options struct {
	Config  config.Config
	Plan    *plans.Plan
	Repo    *gitcommit.Repo
	Store   *state.Store
	Logger  *slog.Logger
	Out     io.Writer // the final summary table
	SelfDir string    // debussy's own directory, put first on the agent's PATH
	// Self is debussy's own executable: only a command running that very
	// file gets debussy's allowance under any permission mode; "" gives
	// none.
	Self        string
	PhaseID     string // --phase: start here
	Only        string // --only: run exactly this phase (ledger.go)
	Restart     bool   // --restart: ignore the ledger
	FailFast    bool   // --fail-fast: a failed phase of a --parallel run stops the running others (afterfailure.go)
	Base        string // --base: BaseDeps merges the --only phase's dependencies' branches from the remote first; "" nothing (cijob)
	Push        string // --push REMOTE: push the phase's branch after every commit debussy makes for it; "" pushes nothing (cijob)
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
	// Tracer exports the run's spans (telemetry.Spans); nil exports none.
	Tracer *telemetry.Tracer
}

// Run executes the plan. It returns nil when every phase completed; what
// happened is in the ledger (debussy status) and the summary on Out.
func Run(ctx context.Context, opts Options) error {
	r, err := newRun(ctx, opts)
	if err != nil {
		return err
	}
	defer r.close()
	r.ctx = ctx
	err = r.execute(ctx)
	err = r.job.FinalPush(err)
	return r.finish(err)
}

// orun is one `debussy run` in progress: it decides which phases run and
// in which order, and starts them; what happens is the recorder's to
// record (rec).
type orun struct {
	Options
	cfg    config.Config
	limits policy.Limits // what policy.After decides on
	log    *slog.Logger
	id     string
	// ledger is the ledger as loaded: the run's goroutine reads it until
	// the recorder starts (rec.Start), the recorder's goroutine from then
	// on (rec.Read). run is this run's record, the recorder's too, read
	// here again once the recorder closed.
	ledger  *state.Ledger
	run     *state.Run
	rec     *recorder.Recorder
	started bool // the run started (record.RunStarted): its end is recorded
	release func() error
	now     func() time.Time
	// answers are claude's get_context_usage answers, asked once per run
	// for each CLI version and model (session.Answers).
	answers session.Answers
	// recovered are the runs found dead (recover.go): their leftover work
	// in the tree is committed rather than refused as dirty.
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
	// job is the run's work with the remote (--base deps, --push).
	job *cijob.Job
	// preview is set for Check (--dry-run): nothing is fetched, so --base
	// deps's dependencies are not required to be done yet.
	preview bool
	// notifier sends the run's notifications; spans are the run's traces
	// (both subscribers of the record: wiring.go).
	notifier *notify.Dispatcher
	spans    *telemetry.Spans
	// launch makes the config of every session of the run (session.go).
	launch *launcher
}

func newRun(ctx context.Context, opts Options) (*orun, error) {
	r := &orun{Options: opts, cfg: opts.Config, log: opts.Logger, now: opts.Now, ctx: context.Background()}
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
	events, err := r.Store.OpenEvents(r.id, r.now)
	if err != nil {
		r.release()
		return nil, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	r.startRecord(ctx, events)
	r.job = r.newJob()
	r.markStaleRuns()
	reclaimGitLocks(r.Repo, r.log)
	// An earlier run's answers about the window (a day at most): a
	// session of the same CLI version and model asks nothing.
	for _, a := range r.Store.ContextAnswers(r.now()) {
		r.answers.Seed(a.SpecModel, a.Known, a.At)
	}
	return r, nil
}

// close keeps the run's answers about the window for the next runs, closes
// the record and releases the lock.
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
	_ = r.rec.Close()
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
	start := r.now()
	r.spend = spend.New(r.cfg.Budget, start)
	if r.job.UsesRemote() {
		// Before the phases are chosen: the merged branches bring the
		// dependencies' completions into HEAD's ledger.
		if err := r.job.Sync(ctx); err != nil {
			return err
		}
	}
	r.job.ReadHold(ctx)
	sel, err := r.selectPhases(order)
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
	planned := make([]record.PlannedPhase, 0, len(order))
	for _, ph := range order {
		planned = append(planned, record.PlannedPhase{ID: ph.ID, Title: ph.ShortTitle(), Unchecked: gate.Unchecked(ph)})
	}
	r.rec.EmitAt(start, record.RunStarted{Plan: r.planPath(), Phases: len(order), ContextThreshold: r.cfg.ContextThreshold,
		ContextWindow: r.cfg.ContextWindow, Name: r.Plan.Name, PID: os.Getpid(), Order: planned})
	for _, ph := range order {
		if skip, ok := sel.skipped[ph.ID]; ok && !sel.todo[ph.ID] {
			r.rec.Emit(skip)
		}
	}
	r.started = true
	if err := r.rec.Sync(); err != nil {
		return err
	}
	r.rec.Start()
	r.launch = &launcher{cfg: r.cfg, plan: r.Plan.Path, store: r.Store, run: r.id, self: r.Self, selfDir: r.SelfDir,
		hard: r.Hard, grace: r.InterruptGrace, live: r.Progress != nil, answers: &r.answers, reached: &r.reached,
		traceEnv: r.spans.ChildEnv, log: r.log}

	if r.cfg.Parallel > 1 && r.job.UsesRemote() {
		// --base deps and --push work on one phase's branch in your work
		// tree: a CI job runs one phase.
		r.log.Info("--base/--push: phases run one by one in your work tree", "parallel", r.cfg.Parallel)
	} else if r.cfg.Parallel > 1 {
		return (&scheduler{r: r}).run(ctx, order, sel.todo)
	}
	for _, ph := range order {
		if !sel.todo[ph.ID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return ErrInterrupted
		}
		if err := r.newPhase(ph, r.rec.Phase(ph.ID), r.Repo, nil).run(ctx); err != nil {
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

// selection is which phases a run executes (todo) and which it skips,
// with why.
type selection struct {
	todo    map[string]bool
	skipped map[string]record.PhaseSkipped
}

// selectPhases decides which phases this run executes and logs why the
// others are skipped.
func (r *orun) selectPhases(order []*plans.Phase) (selection, error) {
	sel := selection{todo: map[string]bool{}, skipped: map[string]record.PhaseSkipped{}}
	done := map[string]string{} // id → why it counts as completed
	res := r.resolver()
	for _, ph := range order {
		if a := res.Phase(ph.ID); a.Done {
			done[ph.ID] = a.Why
			skip := record.PhaseSkipped{Phase: ph.ID, Why: a.Why}
			if a.Source != completion.Table {
				skip.Commits = a.Commits
			}
			sel.skipped[ph.ID] = skip
			continue
		}
		sel.todo[ph.ID] = true
	}
	if r.Only != "" {
		if err := r.selectOnly(order, sel.todo, done); err != nil {
			return sel, err
		}
	}
	if r.PhaseID != "" {
		start := r.Plan.Phase(r.PhaseID)
		if start == nil {
			return sel, fmt.Errorf("%w: --phase %s: no such phase in %s; its phases are %s", ErrSetup, r.PhaseID, r.Plan.Path, phaseIDs(r.Plan))
		}
		// --phase runs that phase and what follows it in run order; its
		// dependencies (transitively) must already be complete.
		if missing := r.Plan.Unfinished(start, func(id string) bool { _, ok := done[id]; return ok }); len(missing) > 0 {
			noun := "phase"
			if len(missing) > 1 {
				noun = "phases"
			}
			return sel, fmt.Errorf("%w: --phase %s depends on unfinished %s %s; run them first or drop --phase",
				ErrSetup, r.PhaseID, noun, strings.Join(missing, ", "))
		}
		sel.todo[start.ID] = true
		delete(done, start.ID)
		delete(sel.skipped, start.ID)
		for _, ph := range order {
			if ph.ID == start.ID {
				break
			}
			delete(sel.todo, ph.ID)
			if _, ok := sel.skipped[ph.ID]; !ok {
				sel.skipped[ph.ID] = record.PhaseSkipped{Phase: ph.ID} // before --phase: not done, not run
			}
		}
	}
	return sel, nil
}

// skippedIDs are the phases sel skips.
func (sel selection) skippedIDs() map[string]bool {
	out := map[string]bool{}
	for id := range sel.skipped {
		if !sel.todo[id] {
			out[id] = true
		}
	}
	return out
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
		// Listed in that run's record before the branch moves to it.
		c, err := r.committer(nil, r.rec, last.ID, phase, true).Write(func(opts ...gitcommit.CommitOption) (gitcommit.Commit, error) {
			return r.Repo.CommitAll(r.gitCtx(), msg.String(), append(opts, excludeUser(user, msg))...)
		})
		switch {
		case errors.Is(err, gitcommit.ErrNothingToCommit):
		case err != nil:
			return fmt.Errorf("%w: commit the interrupted run's work: %w", ErrSetup, err)
		default:
			r.rec.Emit(record.LeftoverCommit{Run: last.ID, Commit: c.Hash, Files: c.Files})
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

// finish records the run's end, closes its record, prints the summary and
// writes the CI step summary. It returns err, or the ledger's error when
// err is nil.
func (r *orun) finish(err error) error {
	if !r.started {
		return err // refused before it started: nothing to record
	}
	status := state.StatusFailed
	switch {
	case err == nil:
		status = state.StatusCompleted
	case errors.Is(err, ErrLedger):
	case errors.Is(err, ErrInterrupted):
		status = state.StatusInterrupted
	case errors.Is(err, ErrBlocked):
		status = state.StatusBlocked
	}
	// The ledger keeps the exit code the user saw.
	end := record.RunEnded{Status: string(status), ExitCode: r.ExitCode(err)}
	if err != nil {
		end.Reason, end.Error = outcome.PublicReason(err), err.Error()
	}
	r.rec.Emit(end)
	serr := r.rec.Sync()
	// Before the record closes: a failed delivery is one of its facts.
	if !r.notifier.Flush() {
		r.rec.Emit(record.Warning{What: "notifications still unsent when the run ended were abandoned"})
	}
	if cerr := r.rec.Close(); serr == nil {
		serr = cerr
	}
	if serr != nil && err != nil && !errors.Is(err, ErrLedger) {
		// The run's own error is returned; this one must still be seen.
		r.log.Error("ledger not saved", "err", serr)
	}
	// The recorder is closed: the run's record is this goroutine's again.
	report.Summary(r.Out, r.run)
	if r.StepSummary != "" {
		if werr := appendStepSummary(r.StepSummary, r.Plan.Name, r.run); werr != nil {
			r.log.Warn("write GITHUB_STEP_SUMMARY", "err", werr)
		}
	}
	if err != nil {
		return err
	}
	return serr
}

// BaseDeps is --base deps.
const BaseDeps = cijob.BaseDeps

// newJob is the run's work with the remote.
func (r *orun) newJob() *cijob.Job {
	return &cijob.Job{Repo: r.Repo, Plan: r.Plan, PlanRel: r.planRel(), Only: r.Only, Base: r.Base, Push: r.Push, Run: r.id,
		Now: r.now, Hard: r.Hard, Log: r.log, Rec: r.rec, Ctx: func() context.Context { return r.ctx }, GitCtx: r.gitCtx,
		Writer: func(phase string, list bool) cijob.Writer { return r.committer(nil, r.rec, "", phase, list) },
		Ready: func() error {
			if err := requireCommit(r.Repo); err != nil {
				return err
			}
			return r.checkTree()
		}, Preview: r.preview}
}
