package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked means another live debussy run holds .debussy/lock.
var ErrLocked = errors.New("another debussy run holds the lock")

// LockInfo is the content of .debussy/lock: who holds it, for people and
// for error messages. It decides nothing; the flock on the file does.
type LockInfo struct {
	PID     int       `json:"pid"`
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
}

// Lock takes .debussy/lock for one run and holds it until release is
// called or the process ends. It is a flock(2): the kernel drops it with the
// holder's last file descriptor, so a kill -9 or a crash cannot leave it
// held, and a reused pid cannot keep it (a pid file checked with kill(pid, 0)
// had both problems). A live holder gives an error wrapping ErrLocked that
// names its pid and run.
//
// If the file still names an earlier run, that run died holding the lock
// (release empties the file); its info is returned as prev so the caller can
// say which run it replaces. release is idempotent.
func (s *Store) Lock(info LockInfo) (release func() error, prev *LockInfo, err error) {
	if err := MkdirPrivate(s.Dir); err != nil {
		return nil, nil, fmt.Errorf("create state dir: %w", err)
	}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, nil, fmt.Errorf("encode lock: %w", err)
	}
	data = append(data, '\n')
	path := s.lockPath()
	// Go opens files close-on-exec: claude and its tools must not inherit
	// the descriptor, or a tool left running would hold the lock after
	// debussy died.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("open lock: %w", err)
	}
	if err := lockExclusive(f); err != nil {
		_ = f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, nil, lockedError(path)
		}
		return nil, nil, err
	}
	old, rerr := io.ReadAll(f)
	if rerr == nil && len(bytes.TrimSpace(old)) > 0 {
		prev = parseLock(old)
	}
	if err := writeLock(f, data); err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	// A .debussy/ an earlier version left readable by all is made private
	// now, under the lock. Best effort: a file debussy cannot chmod (owned
	// by another user) does not stop the run.
	_ = s.Tighten()
	release = sync.OnceValue(func() error {
		// Empty the file while still holding it, so content in an unheld
		// lock always means its writer died. The file itself stays: removing
		// it would let a run that opened it just before hold a lock on an
		// unlinked inode while the next run locks a new file.
		terr := f.Truncate(0)
		cerr := f.Close() // drops the flock
		if err := errors.Join(terr, cerr); err != nil {
			return fmt.Errorf("release lock: %w", err)
		}
		return nil
	})
	return release, prev, nil
}

// lockExclusive takes an exclusive flock on f without waiting for a run.
// Holder takes a shared lock for an instant to look; a run starting in that
// instant must not mistake it for another run, so a lock that only shared
// holders keep is retried until they let go. An exclusive holder that has
// not said who it is gets the same short grace: a run between its flock and
// its write, or one releasing the lock (the file is emptied first) while a
// process it forked still shares the descriptor until its exec closes it —
// seen once in the orchestrator's tests, where parallel tests fork all the
// time, as "held by a process that has not said who it is".
func lockExclusive(f *os.File) error {
	fd := int(f.Fd())
	for range 1000 {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) != nil {
			// An exclusive holder: a run, if it says so.
			if data, _ := os.ReadFile(f.Name()); parseLock(data) != nil {
				return ErrLocked
			}
		} else {
			_ = unix.Flock(fd, unix.LOCK_UN)
		}
		time.Sleep(time.Millisecond)
	}
	return ErrLocked
}

// writeLock replaces f's content with data and makes it durable.
func writeLock(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	return nil
}

// lockedError says who holds the lock at path, as far as its info tells.
func lockedError(path string) error {
	data, _ := os.ReadFile(path)
	held := parseLock(data)
	if held == nil {
		// Between a holder's flock and its write, or written by hand.
		return fmt.Errorf("%w: %s is held by a process that has not said who it is (%q); if a run is starting, wait for it",
			ErrLocked, path, bytes.TrimSpace(data))
	}
	where := ""
	if held.Host != "" {
		where = " on " + held.Host
	}
	return fmt.Errorf("%w: pid %d%s, run %s, started %s (wait for it, or stop it with Ctrl-C or kill %d)",
		ErrLocked, held.PID, where, held.RunID, held.Started.Format(time.RFC3339), held.PID)
}

// parseLock returns the info in data, or nil when data holds none.
func parseLock(data []byte) *LockInfo {
	var info LockInfo
	if json.Unmarshal(data, &info) != nil || info.PID <= 0 {
		return nil
	}
	return &info
}

// Holder reports whether a process holds the lock now, and who it says it
// is (nil when its info is unreadable). It holds a shared lock for an
// instant to look, which Lock tolerates.
func (s *Store) Holder() (info *LockInfo, held bool, err error) {
	f, err := os.Open(s.lockPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("open lock: %w", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	for {
		err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		_ = unix.Flock(fd, unix.LOCK_UN)
		return nil, false, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		data, _ := io.ReadAll(f)
		return parseLock(data), true, nil
	default:
		return nil, false, fmt.Errorf("check lock %s: %w", f.Name(), err)
	}
}

// Stale reports whether run is recorded as running although no process
// holds the lock for it: its debussy was killed or crashed. A run holding
// the lock can treat every other running entry as stale.
func (s *Store) Stale(run *Run) (bool, error) {
	if run.Status != StatusRunning {
		return false, nil
	}
	holder, held, err := s.Holder()
	if err != nil {
		return false, err
	}
	// A holder whose info is unreadable is a run starting right now; only
	// a readable other run id proves this one dead.
	return !held || holder != nil && holder.RunID != run.ID, nil
}
