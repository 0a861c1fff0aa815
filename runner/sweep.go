package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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
func KillByEnv(entry string) int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	want := []byte(entry)
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					n++
				}
				break
			}
		}
	}
	return n
}
