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
	"time"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/outcome"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/report"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
)

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
	r.job = r.newJob()
	r.startRecord(ctx, events)
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
	settings := policy.Recorded(r.cfg)
	r.rec.EmitAt(start, record.RunStarted{Plan: r.planPath(), Phases: len(order), ContextThreshold: r.cfg.ContextThreshold,
		ContextWindow: r.cfg.ContextWindow, ContextMaxTokens: new(r.cfg.ContextMaxTokens), Settings: &settings,
		Name: r.Plan.Name, PID: os.Getpid(), Order: planned})
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
		sandbox: r.Sandbox, traceEnv: r.spans.ChildEnv, log: r.log}

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
	if r.OutText {
		report.Summary(r.Out, r.run)
	} else {
		report.PublicSummary(r.Out, r.run)
	}
	if r.StepSummary != "" {
		if werr := report.AppendStepSummary(r.StepSummary, r.Plan.Name, r.run); werr != nil {
			r.log.Warn("write GITHUB_STEP_SUMMARY", "err", werr)
		}
	}
	if err != nil {
		return err
	}
	return serr
}
