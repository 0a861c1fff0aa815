package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrLocked means another live debussy run holds .debussy/lock.
var ErrLocked = errors.New("another debussy run holds the lock")

// LockInfo is the content of .debussy/lock.
type LockInfo struct {
	PID     int       `json:"pid"`
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
}

// Lock takes .debussy/lock for one run. If the lock is held by a process
// that no longer exists on this host, it is taken over and the dead holder's
// info is returned as stale, so the caller can mark that run interrupted.
// A live holder gives an error wrapping ErrLocked that names its pid and run.
// release removes the lock if it is still ours; calling it again is a no-op.
func (s *Store) Lock(info LockInfo) (release func() error, stale *LockInfo, err error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create state dir: %w", err)
	}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, nil, fmt.Errorf("encode lock: %w", err)
	}
	data = append(data, '\n')
	path := s.lockPath()

	ok, err := createExclusive(path, data)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		stale, err = s.takeOver(info, data)
		if err != nil {
			return nil, nil, err
		}
	}
	release = sync.OnceValue(func() error {
		// Remove only our own lock: never one a later run took over.
		cur, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("release lock: %w", err)
		}
		if !bytes.Equal(cur, data) {
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("release lock: %w", err)
		}
		return nil
	})
	return release, stale, nil
}

// createExclusive creates path with data unless it exists (ok=false).
func createExclusive(path string, data []byte) (ok bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create lock: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(path)
		return false, fmt.Errorf("write lock: %w", err)
	}
	return true, nil
}

// takeOver replaces a lock whose holder is dead. Two runs may find the same
// stale lock at once; a flock on a side file serialises the check-remove-
// create so that one of them wins and the other sees the winner's live lock.
// The kernel drops a flock when its holder dies, so the guard cannot go stale.
func (s *Store) takeOver(info LockInfo, data []byte) (*LockInfo, error) {
	path := s.lockPath()
	guard, err := os.OpenFile(path+".guard", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock guard: %w", err)
	}
	defer guard.Close()
	if err := syscall.Flock(int(guard.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock guard: %w", err)
	}
	defer syscall.Flock(int(guard.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it anyway

	held, err := readLock(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Released between our create and now: just take it.
		return nil, s.createOrLocked(path, data)
	}
	if err != nil {
		return nil, err
	}
	if !held.dead(info.Host) {
		where := ""
		if held.Host != "" && info.Host != "" && held.Host != info.Host {
			where = " on host " + held.Host
		}
		return nil, fmt.Errorf("%w: pid %d%s, run %s, started %s (if that process is not debussy, delete %s)",
			ErrLocked, held.PID, where, held.RunID, held.Started.Format(time.RFC3339), path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale lock: %w", err)
	}
	if err := s.createOrLocked(path, data); err != nil {
		return nil, err
	}
	return held, nil
}

func (s *Store) createOrLocked(path string, data []byte) error {
	ok, err := createExclusive(path, data)
	if err != nil {
		return err
	}
	if !ok {
		// Only a run that did not go through the guard could get here.
		return fmt.Errorf("%w: %s was created while taking it over", ErrLocked, path)
	}
	return nil
}

func readLock(path string) (*LockInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read lock: %w", err)
	}
	var held LockInfo
	if err := json.Unmarshal(data, &held); err != nil || held.PID <= 0 {
		// Possibly a run between creating and writing it; never guess.
		return nil, fmt.Errorf("%w: %s is unreadable (%q); if no debussy run is active, delete it",
			ErrLocked, path, bytes.TrimSpace(data))
	}
	return &held, nil
}

// dead reports whether the holder is gone. A lock from another host cannot
// be checked from here, so it counts as alive.
func (l *LockInfo) dead(host string) bool {
	if l.Host != "" && host != "" && l.Host != host {
		return false
	}
	return ProcessGone(l.PID)
}

// ProcessGone reports whether no process with pid exists on this machine.
func ProcessGone(pid int) bool {
	return pid <= 0 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Stale reports whether the run is recorded as running but its debussy
// process is gone (killed or crashed).
func (r *Run) Stale() bool {
	return r.Status == StatusRunning && ProcessGone(r.PID)
}
