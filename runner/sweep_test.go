package runner

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeper starts a long sleep with extra environment entries; the test
// kills and reaps it at the end whatever happened.
func sleeper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestKillByEnv(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	mark := "DEBUSSY_TEST_SWEEP=" + newMark()
	marked := sleeper(t, mark)
	other := sleeper(t, "DEBUSSY_TEST_SWEEP="+newMark())

	if n := KillByEnv(mark); n != 1 {
		t.Errorf("KillByEnv = %d, want 1", n)
	}
	err := marked.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("marked process ended with %v, want killed by SIGKILL", err)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a process with another mark was hit: %v", err)
	}
}

// The process looked at exits between the handle being opened and its
// environment being read, and its pid goes to a new process carrying the
// same mark: the kill must go nowhere rather than to the newcomer. Where the
// pid cannot be steered (ns_last_pid needs CAP_SYS_ADMIN), the newcomer is
// only simulated by the environment read.
func TestKillIfMarkedProcessReplaced(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.WithHandle(func(uintptr) {}); errors.Is(err, os.ErrNoHandle) {
		t.Skip("no process handles (pidfd) on this system; the sweep falls back to pids")
	}
	mark := "DEBUSSY_TEST_SWEEP=" + newMark()
	old := sleeper(t, mark)
	pid := old.Process.Pid
	var newcomer *exec.Cmd
	environ := func(p int) ([]byte, error) {
		_ = old.Process.Kill()
		_ = old.Wait()
		newcomer = reusePID(t, pid, mark)
		if newcomer == nil {
			return []byte("A=1\x00" + mark + "\x00"), nil
		}
		return readEnviron(p)
	}
	if killIfMarked(pid, []byte(mark), environ) {
		t.Error("killIfMarked reported a kill through the handle of a process that had exited")
	}
	if newcomer == nil {
		t.Log("pid not reused; checked against an exited process only")
		return
	}
	if err := newcomer.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process that reused pid %d was killed: %v", pid, err)
	}
}

// reusePID tries to start a marked sleep with exactly pid, by setting the
// kernel's last-allocated pid just below it. It returns nil when it cannot
// (no permission, or another process took the pid first).
func reusePID(t *testing.T, pid int, env ...string) *exec.Cmd {
	t.Helper()
	for range 5 {
		if os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0) != nil {
			return nil
		}
		cmd := sleeper(t, env...)
		if cmd.Process.Pid == pid {
			return cmd
		}
		_ = cmd.Process.Kill()
	}
	return nil
}

// A marked process that keeps forking (claude starting a tool as it is
// killed): the children forked after KillByEnv's first look at /proc are
// found by the next looks, and none is left alive.
func TestKillByEnvForkingParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	mark := "DEBUSSY_TEST_SWEEP=" + newMark()
	cmd := exec.Command("sh", "-c", "while :; do sleep 30 & done")
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		KillByEnv(mark)
		_ = cmd.Wait()
	})
	time.Sleep(200 * time.Millisecond) // some children running already

	if n := KillByEnv(mark); n < 2 {
		t.Errorf("KillByEnv = %d, want the parent and its children", n)
	}
	var alive []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			continue // gone, or a zombie
		}
		if env, err := readEnviron(pid); err == nil && slices.Contains(strings.Split(string(env), "\x00"), mark) {
			alive = append(alive, pid)
		}
	}
	if len(alive) > 0 {
		t.Errorf("marked processes still alive after KillByEnv: %v", alive)
	}
}
