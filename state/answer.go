package state

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/secrets"
)

// Answer is what `debussy answer` records for a blocked phase: the
// person's answer to the agent's question, read by the next run that
// resumes the phase.
type Answer struct {
	Phase    string    `json:"phase"`
	Question string    `json:"question,omitempty"` // the agent's reason, as the blocked run recorded it
	Text     string    `json:"text"`
	At       time.Time `json:"at"`
}

// answerPath is beside the blocked run's signals: the answer belongs to
// that run's question.
func (s *Store) answerPath(runID, phaseID string) string {
	return filepath.Join(s.RunDir(runID), "answers", safeName(phaseID)+".json")
}

// WriteAnswer records a for the blocked phase of run runID atomically,
// its text redacted (it goes into a prompt). It replaces an earlier
// answer: `debussy answer` passes both texts, the earlier first.
func (s *Store) WriteAnswer(runID string, a Answer) error {
	if a.Phase == "" || a.Text == "" {
		return errors.New("write answer: no phase or no text")
	}
	a.Text, a.Question = secrets.Redact(a.Text), secrets.Redact(a.Question)
	if err := writeJSONAtomic(s.answerPath(runID, a.Phase), a); err != nil {
		return fmt.Errorf("write answer: %w", err)
	}
	return nil
}

// ReadAnswer returns the answer recorded for phaseID of run runID, or
// nil, nil when there is none.
func (s *Store) ReadAnswer(runID, phaseID string) (*Answer, error) {
	return readSignalFile[Answer](s.answerPath(runID, phaseID), "answer")
}

// LastRecord returns the newest record of phaseID in any run that did
// something with it (not pending or skipped), or nils.
func (l *Ledger) LastRecord(phaseID string) (*Run, *PhaseRecord) {
	for _, r := range l.NewestFirst() {
		if p := r.Phase(phaseID); p != nil && p.Status != StatusPending && p.Status != StatusSkipped {
			return r, p
		}
	}
	return nil, nil
}

// Blocked returns the blocked phases of the newest run that did something
// with its phases, with that run.
func (l *Ledger) Blocked() (*Run, []*PhaseRecord) {
	for _, r := range l.NewestFirst() {
		var blocked []*PhaseRecord
		active := false
		for _, p := range r.Phases {
			if p.Status != StatusPending && p.Status != StatusSkipped {
				active = true
			}
			if p.Status == StatusBlocked {
				blocked = append(blocked, p)
			}
		}
		if active {
			return r, blocked
		}
	}
	return nil, nil
}
