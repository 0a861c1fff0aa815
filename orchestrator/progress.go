package orchestrator

import (
	"time"

	"github.com/debussy-dev/debussy/estimator"
)

// Progress is a running phase's figures after one stream event, for a live
// view (Options.Progress). It is a copy: the receiver may keep it.
type Progress struct {
	Phase, Title string
	Session      int
	Snapshot     estimator.Snapshot // the session's estimate after the event
	Zone         string             // the session's zone: green, yellow or red
	// Tokens and CostUSD are the phase's totals from its ended sessions;
	// the running session's cost arrives with its result (Snapshot.CostUSD).
	Tokens   int64
	CostUSD  float64
	Restarts int
	Started  time.Time // the phase's start
	Ended    bool      // the session ended
}

// progress reports a session's snapshot to Options.Progress, if set.
func (r *orun) progress(p *phaseRun, session int, snap estimator.Snapshot, ended bool) {
	if r.Progress == nil {
		return
	}
	r.Progress(Progress{Phase: p.ph.ID, Title: p.ph.Title, Session: session, Snapshot: snap,
		Tokens: p.rec.Tokens, CostUSD: p.rec.CostUSD, Restarts: p.rec.Restarts, Started: p.rec.StartedAt, Ended: ended, Zone: p.rec.Zone})
}
