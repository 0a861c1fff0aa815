package gitcommit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A kill -9 of debussy while it holds one of git's locks (index.lock in
// the middle of a commit) leaves the lock behind, and every later commit,
// debussy's or git's, fails on it. git cannot tell its own dead locks from
// live ones either; debussy can tell its own: next to each lock it holds it
// keeps an owner record (pid, lock path, host) in <common dir>/debussy-locks/,
// a directory git never reads. The record is written after the lock is
// taken and removed before it is released, so while a record exists its
// lock is debussy's; ReclaimLocks removes those whose process is gone.
const lockOwnersDir = "debussy-locks"

// ownerPath is where the owner record of lockPath (the "….lock" file) goes.
func (r *Repo) ownerPath(lockPath string) string {
	sum := sha256.Sum256([]byte(lockPath))
	return filepath.Join(r.commonDir, lockOwnersDir, hex.EncodeToString(sum[:8]))
}

// recordOwner writes l's owner record. A record that cannot be written
// costs only the automatic cleanup after a crash: the commit goes on.
func (r *Repo) recordOwner(l *lockFile) {
	path := r.ownerPath(l.path + ".lock")
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, fmt.Appendf(nil, "%d\n%s\n%s\n", os.Getpid(), l.path+".lock", hostname()), 0o644)
	}
	if err != nil {
		r.log.Warn("record the owner of a git lock", "lock", l.path+".lock", "err", err)
		return
	}
	l.owner = path
}

// dropOwner removes l's owner record; called before the lock is released.
func (l *lockFile) dropOwner() {
	if l.owner != "" {
		_ = os.Remove(l.owner)
		l.owner = ""
	}
}

// ReclaimLocks removes the git locks a debussy process on this host that no
// longer runs left behind (see lockOwnersDir), with their owner records,
// and returns the locks' paths. Locks of live processes or of other hosts,
// and every lock without a record (git's own, the user's), are left alone.
func (r *Repo) ReclaimLocks() ([]string, error) {
	dir := filepath.Join(r.commonDir, lockOwnersDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reclaim git locks: %w", err)
	}
	var removed []string
	for _, e := range entries {
		record := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(record)
		if err != nil {
			return removed, fmt.Errorf("reclaim git locks: %w", err)
		}
		fields := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(fields) != 3 || !strings.HasSuffix(fields[1], ".lock") {
			_ = os.Remove(record) // not a record debussy wrote whole
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		lock := fields[1]
		// Another host's (or container's) pids are not this one's to judge.
		if err != nil || fields[2] != hostname() || processAlive(pid) {
			continue
		}
		if err := os.Remove(lock); err == nil {
			removed = append(removed, lock)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("reclaim git lock %s: %w", lock, err)
		}
		_ = os.Remove(record)
	}
	return removed, nil
}

// hostname names this machine in owner records ("" when it has none),
// read once: every lock writes it.
var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// processAlive reports whether pid runs (or exists under another user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
