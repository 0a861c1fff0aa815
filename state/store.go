// Package state keeps debussy's records under .debussy/ at the repository
// root: the run ledger (state.json, one writer: the orchestrator), the run
// lock, per-run signals from `debussy done`, progress lines from
// `debussy progress`, and the orchestrator's own event log.
package state

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/atomicfile"
	"github.com/debussy-dev/debussy/secrets"
)

// DirName is the state directory's name inside the repository root.
const DirName = ".debussy"

// Store is one .debussy directory. Its methods create directories as they
// need them, except the *Dir path helpers.
type Store struct{ Dir string }

// New returns the store rooted at dir (normally <repo>/.debussy).
func New(dir string) *Store { return &Store{Dir: dir} }

func (s *Store) ledgerPath() string { return filepath.Join(s.Dir, "state.json") }
func (s *Store) lockPath() string   { return filepath.Join(s.Dir, "lock") }

// RunDir is .debussy/runs/<run>. It creates nothing.
func (s *Store) RunDir(runID string) string {
	return filepath.Join(s.Dir, "runs", safeName(runID))
}

// PhaseDir is .debussy/runs/<run>/phase-<id>, where session logs and
// checkpoints go. It creates nothing.
func (s *Store) PhaseDir(runID, phaseID string) string {
	return filepath.Join(s.RunDir(runID), "phase-"+safeName(phaseID))
}

// HandoffPath is where the agent's handoff of the phase's session n goes:
// .debussy/runs/<run>/phase-<id>/handoff-<n>.md, the path the session's
// policy names (session.Facts). It creates nothing.
func (s *Store) HandoffPath(runID, phaseID string, n int) string {
	return filepath.Join(s.PhaseDir(runID, phaseID), fmt.Sprintf("handoff-%d.md", n))
}

func (s *Store) signalPath(runID, phaseID string) string {
	return filepath.Join(s.RunDir(runID), "signals", safeName(phaseID)+".json")
}

func (s *Store) progressPath(runID string) string {
	return filepath.Join(s.RunDir(runID), "progress.jsonl")
}

// EventsPath is .debussy/runs/<run>/events.jsonl, for ReadLog.
func (s *Store) EventsPath(runID string) string {
	return filepath.Join(s.RunDir(runID), "events.jsonl")
}

// safeName turns an id into one path element. Plan phase ids are normally
// "1" or "2.1", but they come from user files: escape anything that could
// leave the directory (/, .., NUL), reversibly so two ids never collide.
func safeName(id string) string {
	if id == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || (c == '.' && i > 0)
		if ok {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// NewRunID returns an id that sorts by start time (UTC, minute precision)
// with four random hex digits against collisions: "20261121-2230-4f2c".
func NewRunID(now time.Time, rnd io.Reader) string {
	var r [2]byte
	if _, err := io.ReadFull(rnd, r[:]); err != nil {
		// Still unique enough within a minute; a run id is not a secret.
		ns := now.Nanosecond()
		r[0], r[1] = byte(ns>>8), byte(ns)
	}
	return now.UTC().Format("20060102-1504") + "-" + hex.EncodeToString(r[:])
}

// writeFileAtomic replaces path with data so that readers see the old or
// the new content, never a mix, even across a crash: temp file in the same
// directory, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	return atomicfile.Write(path, data, FileMode)
}

func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	// Every state file passes the redactor: they are read into prompts and
	// summaries, and copied into CI artifacts.
	return writeFileAtomic(path, append(secrets.Default().JSON(data), '\n'))
}

// SignalPath is where `debussy done` leaves the phase's signal (a session
// stats it to answer the agent's command).
func (s *Store) SignalPath(runID, phaseID string) string { return s.signalPath(runID, phaseID) }

// HandoffSignalPath is where `debussy handoff` leaves the phase's signal.
func (s *Store) HandoffSignalPath(runID, phaseID string) string {
	return s.handoffSignalPath(runID, phaseID)
}
