package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestLock(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), DirName))
	me := LockInfo{PID: os.Getpid(), RunID: "r1", Started: t0, Host: "h"}
	release, prev, err := s.Lock(me)
	if err != nil || prev != nil {
		t.Fatalf("first lock: %v, prev %v", err, prev)
	}
	if got, held, err := s.Holder(); err != nil || !held || got == nil || *got != me {
		t.Fatalf("Holder = %+v, %v, %v; want %+v held", got, held, err, me)
	}

	// The same process through a second open file description is refused,
	// naming the holder's pid and run.
	_, _, err = s.Lock(LockInfo{PID: os.Getpid(), RunID: "r2", Started: t0, Host: "h"})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) || !strings.Contains(err.Error(), "r1") {
		t.Fatalf("contention: %v", err)
	}

	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, held, err := s.Holder(); held || err != nil {
		t.Fatalf("held after release: %v, %v", held, err)
	}
	if data, err := os.ReadFile(s.lockPath()); err != nil || len(data) != 0 {
		t.Fatalf("released lock file = %q, %v; want it empty", data, err)
	}
	release, prev, err = s.Lock(LockInfo{PID: os.Getpid(), RunID: "r3", Host: "h"})
	if err != nil || prev != nil {
		t.Fatalf("lock after release: %v, prev %+v (a clean release leaves no previous holder)", err, prev)
	}
	defer release()
}

// A lock file that still names a run is what a holder that died leaves;
// the new holder takes it and learns who that was.
func TestLockLeftByDeadHolder(t *testing.T) {
	s := New(t.TempDir())
	dead := LockInfo{PID: 999999, RunID: "old", Started: t0, Host: "h"}
	if err := os.WriteFile(s.lockPath(), []byte(`{"pid":999999,"run_id":"old","started":"2026-11-21T22:30:05Z","host":"h"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	release, prev, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "new", Host: "h"})
	if err != nil {
		t.Fatalf("take over: %v", err)
	}
	defer release()
	if prev == nil || *prev != dead {
		t.Errorf("prev = %+v, want %+v", prev, dead)
	}
	if got, _, _ := s.Holder(); got == nil || got.RunID != "new" {
		t.Errorf("lock file names %+v after the takeover, want run new", got)
	}
}

func TestLockHeldWithoutInfo(t *testing.T) {
	tests := []struct{ name, content string }{
		{"empty file", ""},
		{"garbage", "pid?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t.TempDir())
			if err := os.WriteFile(s.lockPath(), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			hold(t, s.lockPath(), unix.LOCK_EX)
			_, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "me", Host: "here"})
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "has not said who it is") {
				t.Fatalf("err = %v, want ErrLocked saying the holder is unknown", err)
			}
			if data, _ := os.ReadFile(s.lockPath()); string(data) != tt.content {
				t.Error("lock file was changed")
			}
		})
	}
}

// A holder that has not said who it is and lets go soon (a run releasing
// the lock while a child it forked still shares the descriptor) does not
// stop the next run.
func TestLockWaitsForSilentHolderLettingGo(t *testing.T) {
	s := New(t.TempDir())
	if err := os.WriteFile(s.lockPath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(s.lockPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	let := make(chan struct{})
	go func() { <-let; f.Close() }()
	time.AfterFunc(20*time.Millisecond, func() { close(let) })
	release, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "me", Host: "here"})
	if err != nil {
		t.Fatalf("Lock after the silent holder let go: %v", err)
	}
	_ = release()
}

// hold flocks path through its own descriptor until the test ends.
func hold(t *testing.T, path string, how int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// Holder's brief shared lock must not make a starting run think another
// run holds the lock.
func TestLockToleratesHolderProbe(t *testing.T) {
	s := New(t.TempDir())
	if err := os.WriteFile(s.lockPath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hold(t, s.lockPath(), unix.LOCK_SH) // a probe caught mid-look
	// A "probe" that never lets go is, after the retries, a holder.
	if _, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "me", Host: "h"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock under a permanent shared holder: %v, want ErrLocked", err)
	}

	s = New(t.TempDir())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if _, _, err := s.Holder(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	for i := range 200 {
		release, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: fmt.Sprint("r", i), Host: "h"})
		if err != nil {
			t.Errorf("lock %d beside a probing status: %v", i, err)
			break
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// Several runs starting at once: exactly one gets the lock.
func TestLockConcurrent(t *testing.T) {
	s := New(t.TempDir())
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = s.Lock(LockInfo{PID: os.Getpid(), RunID: fmt.Sprint("r", i), Host: "h"})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrLocked):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d runs took the lock, want 1", won)
	}
}

const helperLockDir = "DEBUSSY_TEST_LOCK_DIR"

// TestHelperLockHolder is not a test: it is the child process of
// TestLockFreedWhenHolderKilled. It takes the lock, starts a long-lived
// child of its own (as claude would be), reports, and waits to be killed.
func TestHelperLockHolder(t *testing.T) {
	dir := os.Getenv(helperLockDir)
	if dir == "" {
		t.Skip("helper process for TestLockFreedWhenHolderKilled")
	}
	_, _, err := New(dir).Lock(LockInfo{PID: os.Getpid(), RunID: "child", Started: t0, Host: "h"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked", sleep.Process.Pid)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// kill -9 of the holder frees the lock, even while a process it started
// (claude, a tool) lives on; the ledger's running entry is then stale.
func TestLockFreedWhenHolderKilled(t *testing.T) {
	s := New(t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLockHolder$")
	cmd.Env = append(os.Environ(), helperLockDir+"="+s.Dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked ") {
		t.Fatalf("helper said %q, %v", line, err)
	}
	sleepPID, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "locked ")))
	if err != nil {
		t.Fatal(err)
	}
	sleeper, err := os.FindProcess(sleepPID)
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Kill() //nolint:errcheck // cleanup of the orphan; init reaps it

	child := &Run{ID: "child", Status: StatusRunning, PID: cmd.Process.Pid}
	if _, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "me", Host: "h"}); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock held by a live child: %v, want ErrLocked", err)
	}
	if stale, err := s.Stale(child); stale || err != nil {
		t.Fatalf("live child's run: stale %v, %v", stale, err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	if err := sleeper.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the holder's child should outlive it for this test: %v", err)
	}

	if stale, err := s.Stale(child); !stale || err != nil {
		t.Fatalf("killed child's run: stale %v, %v; want stale", stale, err)
	}
	release, prev, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "me", Host: "h"})
	if err != nil {
		t.Fatalf("lock after the holder was killed: %v", err)
	}
	defer release()
	if prev == nil || prev.RunID != "child" || prev.PID != cmd.Process.Pid {
		t.Errorf("prev = %+v, want the killed child's info", prev)
	}
	if stale, err := s.Stale(child); !stale || err != nil {
		t.Errorf("run recorded as running while another run holds the lock: stale %v, %v", stale, err)
	}
}

func TestStale(t *testing.T) {
	tests := []struct {
		name    string
		running bool
		content string // lock file; "" = none
		held    bool
		want    bool
	}{
		{"completed run", false, "", false, false},
		{"running, no lock file", true, "", false, true},
		{"running, lock not held", true, `{"pid":1,"run_id":"r"}`, false, true},
		{"running, held by it", true, `{"pid":1,"run_id":"r"}`, true, false},
		{"running, held by another run", true, `{"pid":1,"run_id":"other"}`, true, true},
		{"running, held by a run still writing its info", true, ``, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t.TempDir())
			if tt.content != "" || tt.held {
				if err := os.WriteFile(s.lockPath(), []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.held {
				hold(t, s.lockPath(), unix.LOCK_EX)
			}
			status := StatusCompleted
			if tt.running {
				status = StatusRunning
			}
			got, err := s.Stale(&Run{ID: "r", Status: status, StartedAt: time.Now()})
			if err != nil || got != tt.want {
				t.Errorf("Stale = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// Without DEBUSSY_RUN_ID, `debussy done` reports to the run holding the
// lock, not to the newest ledger entry marked running (which may be dead).
func TestFindActiveTrustsLock(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := New(filepath.Join(repo, DirName))
	l := &Ledger{Runs: []*Run{
		{ID: "live", Status: StatusRunning, StartedAt: t0},
		{ID: "killed", Status: StatusRunning, StartedAt: t0.Add(time.Hour)},
	}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }

	if _, err := FindActive(noEnv, repo); !errors.Is(err, ErrNoActiveRun) {
		t.Fatalf("no lock held: err = %v, want ErrNoActiveRun", err)
	}

	// A holder that has not written its info yet: the ledger decides.
	if err := os.WriteFile(store.lockPath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(store.lockPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if a, err := FindActive(noEnv, repo); err != nil || a.RunID != "killed" {
		t.Fatalf("held without info: %+v, %v; want the newest running entry", a, err)
	}
	f.Close()

	release, _, err := store.Lock(LockInfo{PID: os.Getpid(), RunID: "live", Started: t0})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if a, err := FindActive(noEnv, repo); err != nil || a.RunID != "live" {
		t.Fatalf("lock held by live: %+v, %v", a, err)
	}
}
