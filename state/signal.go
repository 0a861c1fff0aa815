package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/secrets"
)

// Signal is what `debussy done` records for a phase.
type Signal struct {
	Phase  string `json:"phase"`
	Status Status `json:"status"` // completed, blocked or failed
	Reason string `json:"reason,omitempty"`
	// Session is the phase's session that ran the command (the ledger's
	// count as it ran), so a session never takes another's signal for
	// its own; 0 when unknown.
	Session int       `json:"session,omitempty"`
	At      time.Time `json:"at"`
}

// WriteSignal records the agent's verdict for sig.Phase atomically, so the
// orchestrator never reads half a signal. A later signal replaces an earlier.
func (s *Store) WriteSignal(runID string, sig Signal) error {
	if sig.Phase == "" {
		return errors.New("write signal: no phase")
	}
	switch sig.Status {
	case StatusCompleted, StatusBlocked, StatusFailed:
	default:
		return fmt.Errorf("write signal: status %q is not completed, blocked or failed", sig.Status)
	}
	if err := writeJSONAtomic(s.signalPath(runID, sig.Phase), sig); err != nil {
		return fmt.Errorf("write signal: %w", err)
	}
	return nil
}

// ReadSignal returns the phase's signal, or nil, nil when there is none.
func (s *Store) ReadSignal(runID, phaseID string) (*Signal, error) {
	return readSignalFile[Signal](s.signalPath(runID, phaseID), "signal")
}

// readSignalFile reads a signal file written by writeJSONAtomic; nil, nil
// when there is none. what names it in errors.
func readSignalFile[T any](path, what string) (*T, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	var sig T
	if err := json.Unmarshal(data, &sig); err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return &sig, nil
}

// ClearSignal removes the phase's signal, e.g. before a remediation attempt.
func (s *Store) ClearSignal(runID, phaseID string) error {
	err := os.Remove(s.signalPath(runID, phaseID))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear signal: %w", err)
	}
	return nil
}

// Progress is one line of `debussy progress`.
type Progress struct {
	Phase   string    `json:"phase"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// AppendProgress adds one line to the run's progress.jsonl. The line goes
// out in a single O_APPEND write, so concurrent writers never interleave.
func (s *Store) AppendProgress(runID string, p Progress) error {
	line, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	if err := appendLine(s.progressPath(runID), secrets.Default().JSON(line)); err != nil {
		return fmt.Errorf("append progress: %w", err)
	}
	return nil
}

func appendLine(path string, line []byte) error {
	f, err := OpenAppend(path)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	return errors.Join(werr, f.Close())
}

// ReadProgress returns the run's progress lines for phaseID ("" for all),
// oldest first. Unparseable lines (a writer killed mid-line) are skipped:
// progress is informational.
func (s *Store) ReadProgress(runID, phaseID string) ([]Progress, error) {
	f, err := os.Open(s.progressPath(runID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read progress: %w", err)
	}
	defer f.Close()
	var out []Progress
	err = eachLine(f, func(line []byte) error {
		var p Progress
		if json.Unmarshal(line, &p) != nil {
			return nil
		}
		if phaseID == "" || p.Phase == phaseID {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read progress: %w", err)
	}
	return out, nil
}

// eachLine calls fn for every non-blank line, of any length.
func eachLine(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if ferr := fn(t); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// HandoffSignal is what `debussy handoff` records: the agent wrote its
// handoff for Session at a task boundary and asks for a fresh session.
type HandoffSignal struct {
	Phase   string    `json:"phase"`
	Session int       `json:"session"`
	Path    string    `json:"path"` // the handoff the next session starts from
	At      time.Time `json:"at"`
}

// handoffSignalPath is in a directory of its own: no phase id's done
// signal can share its name.
func (s *Store) handoffSignalPath(runID, phaseID string) string {
	return filepath.Join(s.RunDir(runID), "signals", "handoff", safeName(phaseID)+".json")
}

// WriteHandoff records the agent's handoff for session sig.Session: text
// (redacted) goes to the session's handoff path, then the signal, each
// written atomically, so the orchestrator never reads half of either. It
// returns the handoff's path.
func (s *Store) WriteHandoff(runID string, sig HandoffSignal, text string) (string, error) {
	if sig.Phase == "" || sig.Session < 1 {
		return "", fmt.Errorf("write handoff: no phase or session (%q, %d)", sig.Phase, sig.Session)
	}
	sig.Path = s.HandoffPath(runID, sig.Phase, sig.Session)
	if err := writeFileAtomic(sig.Path, []byte(secrets.Redact(text))); err != nil {
		return "", fmt.Errorf("write handoff: %w", err)
	}
	if err := writeJSONAtomic(s.handoffSignalPath(runID, sig.Phase), sig); err != nil {
		return "", fmt.Errorf("write handoff signal: %w", err)
	}
	return sig.Path, nil
}

// ReadHandoffSignal returns the phase's latest handoff signal, or nil, nil
// when there is none.
func (s *Store) ReadHandoffSignal(runID, phaseID string) (*HandoffSignal, error) {
	return readSignalFile[HandoffSignal](s.handoffSignalPath(runID, phaseID), "handoff signal")
}
