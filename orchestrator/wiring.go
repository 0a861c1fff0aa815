package orchestrator

import (
	"context"
	"time"

	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/notify"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/state"
)

// The run's record and who is told of it: the recorder owns the ledger and
// hands each fact to events.jsonl, the log, the live view, the notifier,
// the tracer and, with --push, the record's pusher (cijob.RecordPusher). The
// phases and the run emit facts; nothing here decides anything.

// startRecord makes the run's recorder and its subscribers.
func (r *orun) startRecord(ctx context.Context, events *state.EventLog) {
	r.run = &state.Run{ID: r.id}
	r.notifier = notify.New(r.cfg.Notify, notify.Options{
		Logger: r.log,
		OnFailure: func(f notify.Failure) {
			r.rec.Emit(record.NotifyFailed{Kind: f.Kind, To: f.Target, Notification: f.Event, Error: f.Err.Error()})
		},
	})
	r.spans = r.Tracer.Spans(ctx, r.id, r.Plan.Name)
	subs := []recorder.Subscriber{
		recorder.EventsLog{Events: events, Log: r.log},
		recorder.NewLogger(r.log, r.id, r.root()),
	}
	if r.Progress != nil {
		subs = append(subs, recorder.SubscriberFunc(func(f recorder.Fact, _ *state.Run) {
			if p, ok := f.Event.(Progress); ok {
				r.Progress(p)
			}
		}))
	}
	if r.notifier != nil {
		subs = append(subs, told{tell: r.notifier.Facts(r.id, r.Plan.Name, r.ExitCode(&UsageLimitError{})).Tell})
	}
	subs = append(subs, told{tell: r.spans.Tell, close: r.spans.Close})
	if p := r.job.RecordPusher(); p != nil {
		subs = append(subs, p) // --push: the record beside the phase's branch
	}
	r.rec = recorder.New(recorder.Options{Store: r.Store, Ledger: r.ledger, Run: r.run, Now: r.now, Log: r.log,
		BeforeWrite: func(run *state.Run, now time.Time) {
			if r.spend != nil && (run.Economics != nil || hasEconomics(run)) {
				r.spend.RecordRun(run, now)
			}
		},
		Subscribers: subs})
	r.job.Rec = r.rec
}

func hasEconomics(run *state.Run) bool {
	for _, p := range run.Phases {
		if p.Economics != nil {
			return true
		}
	}
	return false
}

// told is a subscriber of a package that takes facts as they are told to
// it (notify's, telemetry's), with what it closes.
type told struct {
	tell  func(at time.Time, ev record.Event, run *state.Run)
	close func() error
}

func (t told) Fact(f recorder.Fact, run *state.Run) { t.tell(f.At, f.Event, run) }

func (t told) Close() error {
	if t.close == nil {
		return nil
	}
	return t.close()
}

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
