package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// MarkEnv is the environment variable every session's processes inherit,
// with a value unique to the session. The CLI's Bash tool starts each
// command in a new session (setsid), so `sleep 300 &` leaves claude's process
// group; the mark is how the runner finds such escapees after claude exits.
const MarkEnv = "DEBUSSY_SESSION_MARK"

func newMark() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// KillByEnv sends SIGKILL to every process (other than this one) whose
// initial environment holds the exact entry "KEY=value", and returns how many
// it signalled. It reads /proc; where there is none it does nothing.
//
// One look at /proc is a snapshot: a child forked after it, before its
// parent was killed (a tool claude started just then), would escape and go
// on writing in the work tree. So it looks again until a look finds no live
// marked process (bounded, for a process that will not die).
func KillByEnv(entry string) int {
	killed := map[int]bool{}
	for range 50 {
		found := killSweep([]byte(entry), killed)
		if found == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // let the killed die before the next look
	}
	return len(killed)
}

// killSweep kills every marked process in one look at /proc, adds them to
// killed, and returns how many it found alive.
func killSweep(want []byte, killed map[int]bool) int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		if killIfMarked(pid, want, readEnviron) {
			killed[pid] = true
			n++
		}
	}
	return n
}

// killIfMarked kills pid if its environment (read by environ) holds want.
// The process handle is opened before the environment is read: on Linux
// ≥ 5.4 os.FindProcess holds a pidfd, which keeps naming the process that
// was looked at. If that process exits and its pid is reused in between, the
// signal goes to the dead handle and fails, instead of killing a stranger
// whose pid happens to match (kill(pid) would). Older kernels have no
// handle and fall back to the pid, with that race.
func killIfMarked(pid int, want []byte, environ func(pid int) ([]byte, error)) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release() //nolint:errcheck // closes the pidfd; nothing to do if it fails
	env, err := environ(pid)
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, want) {
			return p.Signal(syscall.SIGKILL) == nil
		}
	}
	return false
}

func readEnviron(pid int) ([]byte, error) {
	return os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
}
