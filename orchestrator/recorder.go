package orchestrator

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
)

// recorder owns the run's shared record: the ledger (this run's record in
// it included), the events log, and the run's economics. Phases running at
// the same time (--parallel) never share a record with it, so no lock is
// held across anything slow:
//
//   - A phase owns its PhaseRecord outright: it gets a private copy when it
//     starts (phase), changes it on its own goroutine only, and hands the
//     recorder a deep copy to save (savePhase). The ledger holds only such
//     copies, which nobody changes once handed over: the recorder replaces
//     them, never edits them, so reading one needs no lock.
//   - The recorder's mutex guards the ledger's structure (the run's phase
//     slice, its economics, its own fields) and the write of the ledger
//     file: a critical section of a copy swap and a file write, never a
//     commit, a merge, a hook, a gate or a wait.
//   - The events log locks itself (state.EventLog).
//
// Before the first phase starts and after the last one ends, the run's
// goroutine alone runs, and may read ledger and run directly (orun.ledger,
// orun.run point at the same values); meanwhile it changes them only
// through update.
type recorder struct {
	mu     sync.Mutex
	store  *state.Store
	ledger *state.Ledger
	run    *state.Run
	events *state.EventLog
	spend  *spend.Account // the run's economics are recomputed from it on a phase's save
	now    func() time.Time
	log    *slog.Logger
}

// close closes the events log, at the run's end.
func (k *recorder) close() {
	if k != nil && k.events != nil {
		k.events.Close()
	}
}

// save writes the ledger as it is. Its error ends the run (see ErrLedger).
func (k *recorder) save() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.write()
}

// write saves the ledger; k.mu held.
func (k *recorder) write() error {
	if err := k.store.Save(k.ledger); err != nil {
		return fmt.Errorf("%w: %w", ErrLedger, err)
	}
	return nil
}

// savePhase puts a copy of the phase's record rec in the run's record
// (and the run's economics up to date with it) and saves the ledger. rec
// stays its owner's: later changes to it are saved by the next call.
func (k *recorder) savePhase(rec *state.PhaseRecord) error {
	c := cloneRecord(rec)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.put(c)
	if k.spend != nil && (c.Economics != nil || k.run.Economics != nil) {
		k.spend.RecordRun(k.run, k.now())
	}
	return k.write()
}

// put replaces the run's record of phase c.ID by c; k.mu held.
func (k *recorder) put(c *state.PhaseRecord) {
	for i, p := range k.run.Phases {
		if p.ID == c.ID {
			k.run.Phases[i] = c
			return
		}
	}
	k.run.Phases = append(k.run.Phases, c)
}

// phase is a private copy of the run's record of phase id, for the phase
// to own while it runs (nil if the run has no such phase).
func (k *recorder) phase(id string) *state.PhaseRecord {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p := k.run.Phase(id); p != nil {
		return cloneRecord(p)
	}
	return nil
}

// update changes the run's own record (not a phase's) under the lock,
// then saves the ledger.
func (k *recorder) update(f func(run *state.Run)) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k.run)
	return k.write()
}

// read lets f read the run's record as last saved; f must not keep it
// (the phases' records in it are not changed, the run's slice is).
func (k *recorder) read(f func(run *state.Run)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k.run)
}

// lastUnfinished is the ledger's last unfinished record of phase id of
// the plan (state.Ledger.LastUnfinished); both are read-only.
func (k *recorder) lastUnfinished(planPath, id string) (*state.Run, *state.PhaseRecord) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ledger.LastUnfinished(planPath, id)
}

// event appends to the run's events log, which redacts what it writes.
func (k *recorder) event(ev record.Event) {
	if k.events == nil {
		return
	}
	if err := k.events.Record(ev); err != nil {
		k.log.Warn("write events log", "err", err)
	}
}

// cloneRecord deep-copies a phase record through its JSON form: the form
// the ledger saves, so a copy keeps every field that is recorded, including
// ones added later.
func cloneRecord(rec *state.PhaseRecord) *state.PhaseRecord {
	js, err := json.Marshal(rec)
	if err != nil {
		panic(fmt.Sprintf("copy phase record: %v", err)) // plain data: cannot fail
	}
	var c state.PhaseRecord
	if err := json.Unmarshal(js, &c); err != nil {
		panic(fmt.Sprintf("copy phase record: %v", err))
	}
	return &c
}
