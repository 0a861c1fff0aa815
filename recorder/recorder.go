// Package recorder owns a run's record. Phases and the run emit typed
// facts (package record) once; the recorder's goroutine applies each to
// the ledger, which is the facts' projection (Apply), and hands it, in
// order, to its subscribers: events.jsonl, the log, the live view, the
// notifier, the tracer, the pusher. Nobody else writes the ledger, logs a
// fact, traces, notifies or saves one.
//
// Emit never waits: a phase never waits on another phase's record, a file
// write or a subscriber. The ledger is written in batches — once for all
// the facts that came together, a volatile fact's change within
// FlushEvery — and only the run's own record is encoded again
// (state.LedgerFile). Sync waits until what was emitted before it is on
// disk: before the branch moves to a commit, before a session starts, at
// a phase's end.
package recorder

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// ErrLedger is a ledger that could not be written: a rerun resumes from
// the ledger, so the run stops rather than go on without it.
var ErrLedger = errors.New("ledger not saved")

// Fact is one event and when it happened.
type Fact struct {
	At    time.Time
	Event record.Event
}

// Subscriber is handed every fact, in order, on the recorder's goroutine,
// with the run's record as the fact left it (read it there, do not keep
// it). It must not block: slow work goes to a goroutine of its own.
type Subscriber interface {
	Fact(f Fact, run *state.Run)
}

// Closer is a subscriber with something to finish when the run's record
// closes (a file to close, a push to make, spans to end).
type Closer interface{ Close() error }

// SubscriberFunc is a function as a Subscriber.
type SubscriberFunc func(f Fact, run *state.Run)

func (s SubscriberFunc) Fact(f Fact, run *state.Run) { s(f, run) }

// FlushEvery bounds how long a change that only volatile facts made (the
// live figures) waits for the ledger's next write; FlushSoon how long a
// fact's: the facts that come meanwhile (a session's end is several) are
// written with it. A Sync writes at once.
var (
	FlushEvery = 500 * time.Millisecond
	FlushSoon  = 50 * time.Millisecond
)

// Options are a recorder's inputs.
type Options struct {
	Store  *state.Store
	Ledger *state.Ledger // loaded; the recorder's from Start on
	// Run is this run's record: its ID set; the rest comes from the facts.
	// It joins the ledger with RunStarted, and nothing is written before.
	Run *state.Run
	Now func() time.Time
	Log *slog.Logger // the recorder's own troubles
	// BeforeWrite brings what is not a fact up to date before each write:
	// the run's economics from the spend account (nil: nothing).
	BeforeWrite func(run *state.Run, now time.Time)
	Subscribers []Subscriber
}

// Recorder is a run's record; see the package comment.
type Recorder struct {
	now func() time.Time
	log *slog.Logger

	mu      sync.Mutex
	queue   []item
	closed  bool
	running bool       // the goroutine runs (Start)
	inline  sync.Mutex // before Start: one item processed at a time
	wake    chan struct{}
	done    chan struct{}
	err     error // the first write error, sticky; under mu

	// The goroutine's alone.
	store       *state.Store
	file        *state.LedgerFile
	ledger      *state.Ledger
	run         *state.Run
	started     bool
	dirty       bool
	due         time.Time           // when the pending write is due (zero: none)
	others      map[*state.Run]bool // other runs a fact changed, to encode again
	beforeWrite func(*state.Run, time.Time)
	subs        []Subscriber
}

type item struct {
	fact  Fact
	sync  chan error
	read  func(l *state.Ledger, run *state.Run)
	close bool
}

// New is a run's recorder. Until Start it works on its caller's
// goroutine, the run's only one then: each fact is applied and handed on
// as it is emitted, Read and Sync act at once, so the run may read the
// ledger it loaded directly while it starts.
func New(o Options) *Recorder {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Ledger == nil {
		o.Ledger = &state.Ledger{Version: state.LedgerVersion}
	}
	if o.Run == nil {
		o.Run = &state.Run{}
	}
	r := &Recorder{now: o.Now, log: o.Log, wake: make(chan struct{}, 1), done: make(chan struct{}),
		store: o.Store, ledger: o.Ledger, run: o.Run, others: map[*state.Run]bool{}, beforeWrite: o.BeforeWrite,
		subs: o.Subscribers}
	if o.Store != nil {
		r.file = o.Store.NewLedgerFile()
	}
	return r
}

// Start hands the record to the recorder's goroutine: from now on the
// ledger and the run's record are read through Read only, and Emit
// never waits.
func (r *Recorder) Start() {
	r.mu.Lock()
	gone := r.running || r.closed // then the goroutine owns dirty
	r.mu.Unlock()
	if gone {
		return
	}
	r.inline.Lock()
	if r.dirty && r.started {
		r.save() // what came since the last Sync
	}
	r.inline.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running || r.closed {
		return
	}
	r.running = true
	go r.loop()
}

// Start is New and Start: a recorder on its own goroutine at once.
func Start(o Options) *Recorder {
	r := New(o)
	r.Start()
	return r
}

// Emit records ev as happening now. It never waits.
func (r *Recorder) Emit(ev record.Event) { r.EmitAt(r.now(), ev) }

// EmitAt records ev as happening at at.
func (r *Recorder) EmitAt(at time.Time, ev record.Event) { r.push(item{fact: Fact{At: at, Event: ev}}) }

// Now is the recorder's clock, which stamps what is emitted.
func (r *Recorder) Now() time.Time { return r.now() }

// Sync waits until every fact emitted before it is applied and the ledger
// holding them is on disk. Its error (wrapping ErrLedger) is the first
// write that failed, now or since the last Sync: the run stops on it.
func (r *Recorder) Sync() error {
	c := make(chan error, 1)
	if !r.push(item{sync: c}) {
		return r.stickyErr()
	}
	return <-c
}

// Read runs f on the recorder's goroutine, after every fact emitted
// before it: it may read the ledger and the run's record, not keep them.
func (r *Recorder) Read(f func(l *state.Ledger, run *state.Run)) {
	c := make(chan struct{})
	if !r.push(item{read: func(l *state.Ledger, run *state.Run) { f(l, run); close(c) }}) {
		return
	}
	<-c
}

// Close applies what is left, writes the ledger (once the run started),
// closes the subscribers (in order) and stops the goroutine. Its error is
// the ledger's.
func (r *Recorder) Close() error {
	if r.push(item{close: true}) {
		<-r.done
	}
	return r.stickyErr()
}

func (r *Recorder) stickyErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// push queues it, or before Start processes it at once; false once closed.
func (r *Recorder) push(it item) bool {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	if it.close {
		r.closed = true
	}
	if !r.running {
		r.mu.Unlock()
		r.inline.Lock()
		defer r.inline.Unlock()
		var flush <-chan time.Time
		r.process([]item{it}, false, &flush)
		if it.close {
			close(r.done)
		}
		return true
	}
	r.queue = append(r.queue, it)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return true
}

func (r *Recorder) loop() {
	defer close(r.done)
	var flush <-chan time.Time
	for {
		timeout := false
		select {
		case <-r.wake:
		case <-flush:
			timeout = true
		}
		r.mu.Lock()
		items := r.queue
		r.queue = nil
		r.mu.Unlock()
		if r.process(items, timeout, &flush) {
			return
		}
	}
}

// process applies and hands on a batch of items, writes the ledger when
// the batch asks for it (or arms flush to), answers its Syncs and, for a
// Close, closes the subscribers; it reports whether it closed.
func (r *Recorder) process(items []item, timeout bool, flush *<-chan time.Time) (closing bool) {
	write, soon := timeout, false
	var syncs []chan error
	for _, it := range items {
		switch {
		case it.close:
			closing, write = true, true
		case it.sync != nil:
			syncs, write = append(syncs, it.sync), true
		case it.read != nil:
			it.read(r.ledger, r.run)
		default:
			if r.apply(it.fact) {
				if _, volatile := it.fact.Event.(record.Volatile); !volatile {
					soon = true
				}
			}
		}
	}
	// Before the run starts only a Sync writes (a killed run's leftover
	// commit is listed in its record before the branch moves): a run
	// refused at its start leaves the ledger as it found it. Before the
	// goroutine starts, the facts wait for a Sync or Start.
	switch {
	case !r.dirty:
	case write && r.started || len(syncs) > 0:
		r.save()
		*flush, r.due = nil, time.Time{}
	case r.started && r.running:
		// The write is due within FlushSoon of a fact, FlushEvery of a
		// volatile change: a stream of facts never puts it off.
		wait := FlushEvery
		if soon {
			wait = FlushSoon
		}
		if due := time.Now().Add(wait); r.due.IsZero() || due.Before(r.due) {
			r.due = due
			*flush = time.After(wait)
		}
	}
	err := r.stickyErr()
	for _, c := range syncs {
		c <- err
	}
	if closing {
		for _, s := range r.subs {
			if c, ok := s.(Closer); ok {
				if err := c.Close(); err != nil {
					r.log.Warn("close the run's record", "err", err)
				}
			}
		}
	}
	return closing
}

// apply projects one fact and hands it on; it reports whether the ledger
// changed.
func (r *Recorder) apply(f Fact) bool {
	if _, ok := f.Event.(record.RunStarted); ok {
		r.started = true
	}
	changed := Apply(r.ledger, r.run, f)
	switch ev := f.Event.(type) {
	case record.StaleRun:
		r.others[r.ledger.Run(ev.Run)] = true
	case record.CommitListed:
		if ev.Run != "" && ev.Run != r.run.ID {
			r.others[r.ledger.Run(ev.Run)] = true
		}
	case record.CommitUnlisted:
		if ev.Run != "" && ev.Run != r.run.ID {
			r.others[r.ledger.Run(ev.Run)] = true
		}
	}
	if changed {
		r.dirty = true
	}
	for _, s := range r.subs {
		s.Fact(f, r.run)
	}
	return changed
}

// save writes the ledger; a failure is kept for the next Sync.
func (r *Recorder) save() {
	r.dirty = false
	if r.file == nil {
		return
	}
	if r.beforeWrite != nil {
		r.beforeWrite(r.run, r.now())
	}
	changed := []*state.Run{r.run}
	for o := range r.others {
		if o != nil {
			changed = append(changed, o)
		}
	}
	clear(r.others)
	if err := r.file.Write(r.ledger, changed...); err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = fmt.Errorf("%w: %w", ErrLedger, err)
		}
		r.mu.Unlock()
	}
}
