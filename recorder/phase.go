package recorder

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

// Phase is one phase's side of the record: its own copy of the phase's
// record, which its owner (the goroutine running the phase) reads and
// which changes only by the facts it emits — the recorder applies the
// same facts to the ledger's copy, so the two agree without a lock.
type Phase struct {
	r   *Recorder
	rec *state.PhaseRecord
}

// Phase is the handle of phase id, with a private copy of its record as
// the ledger has it now (an empty one if the run has none).
func (r *Recorder) Phase(id string) *Phase {
	var c *state.PhaseRecord
	r.Read(func(_ *state.Ledger, run *state.Run) {
		if p := run.Phase(id); p != nil {
			c = clone(p)
		}
	})
	if c == nil {
		c = &state.PhaseRecord{ID: id}
	}
	return &Phase{r: r, rec: c}
}

// NewPhase is a handle of rec, a record its owner already holds (tests,
// or a phase the ledger does not list).
func (r *Recorder) NewPhase(rec *state.PhaseRecord) *Phase { return &Phase{r: r, rec: rec} }

// Record is the phase's record as its facts left it: read it, never
// change it.
func (p *Phase) Record() *state.PhaseRecord { return p.rec }

// ID is the phase's id.
func (p *Phase) ID() string { return p.rec.ID }

// Emit applies ev to the phase's copy and records it.
func (p *Phase) Emit(ev record.Event) {
	f := Fact{At: p.r.now(), Event: ev}
	if PhaseOf(ev) == p.rec.ID {
		ApplyPhase(p.rec, f)
	}
	p.r.push(item{fact: f})
}

// Sync is the recorder's Sync.
func (p *Phase) Sync() error { return p.r.Sync() }

// Now is the recorder's clock.
func (p *Phase) Now() func() time.Time { return p.r.now }

// clone deep-copies a phase record through its JSON form: the form the
// ledger saves, so a copy keeps every field that is recorded.
func clone(rec *state.PhaseRecord) *state.PhaseRecord {
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
