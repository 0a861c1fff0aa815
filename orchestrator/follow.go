package orchestrator

import (
	"sync"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// seen is one stream event with the estimator's snapshot after it.
type seen struct {
	ev   runner.Event
	snap estimator.Snapshot
	live *Progress // the Meters' figures at the event, for the live view
}

// backlog is an unbounded queue from the session's reader to the phase's
// loop: the reader must never wait, or a hook answer would wait with it
// (the loop waits for the run's lock while another phase commits).
type backlog struct {
	mu     sync.Mutex
	items  []seen
	closed bool
	ready  chan struct{} // holds one token while items or closed are new
}

func newBacklog() *backlog { return &backlog{ready: make(chan struct{}, 1)} }

func (b *backlog) push(s seen) {
	b.mu.Lock()
	b.items = append(b.items, s)
	b.mu.Unlock()
	b.signal()
}

func (b *backlog) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
}

func (b *backlog) signal() {
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

// take returns what is queued, and whether the reader is done.
func (b *backlog) take() ([]seen, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.items
	b.items = nil
	return out, b.closed
}

// follow runs the session to its end. A reader goroutine takes the
// runner's events in order, folds each into the estimator and the policy
// and answers hook calls at once (driver.see); the phase's loop then
// handles each event under the run's lock: the checkpoint's recorder, the
// log, the budgets, and the policy's effects. It returns the last
// snapshot.
func (r *orun) follow(d *driver, sess *runner.Session) estimator.Snapshot {
	q := newBacklog()
	go func() {
		for ev := range sess.Events() {
			it := seen{ev: ev, snap: d.see(ev)}
			if r.Progress != nil {
				it.live = &Progress{}
				r.liveEconomics(d.p, it.live)
			}
			q.push(it)
		}
		q.close()
	}()
	p, n := d.p, d.n
	cf := newCLIFacts(p.ph.ID, n, d.specModel, d.known)
	lastBand := -1
	var snap estimator.Snapshot
	for {
		var grace, econ bool
		graceC, econC := d.graceC(), d.econC()
		// The wait lets concurrent phases run meanwhile (parallel.go).
		r.unlocked(func() {
			select {
			case <-q.ready:
			case <-graceC:
				grace = true
			case <-econC:
				econ = true
			}
		})
		switch {
		case grace:
			d.graceExpired()
			continue
		case econ:
			// No event for a while (a long tool): the duration budgets
			// are checked all the same, and a stop waits for that tool's
			// PostToolUse or interrupts it after stop_grace.
			d.locked(d.checkEconomics)
			d.apply()
			d.armEconTimer()
			r.progress(p, n, snap, false)
			continue
		}
		items, closed := q.take()
		for _, it := range items {
			ev := it.ev
			snap = it.snap
			r.observeCLIFacts(cf, ev, snap)
			p.events.Observe(ev)
			r.logEvent(p.ph.ID, n, ev, snap, p.repo.Root())
			// A window still pending is the model table's guess: its
			// percent ("150 % of 200K" for a 1M model) is not shown.
			if snap.Tokens > 0 && snap.Window > 0 && !snap.WindowPending {
				if band := int(snap.Percent / 10); band != lastBand {
					lastBand = band
					r.log.Info("context", "phase", p.ph.ID, "percent", int(snap.Percent), "window", estimator.FormatTokens(snap.Window),
						"estimated", snap.Estimated, "tokens", snap.Tokens, "tool_calls", snap.ToolCalls, "zone", string(d.zone()))
				}
			}
			if ev.Kind == runner.KindInit || ev.Kind == runner.KindContextUsage {
				r.warnCompactionPoint(p, snap)
			}
			d.apply()
			r.progressAt(p, n, snap, false, it.live)
		}
		if closed {
			return snap
		}
	}
}
