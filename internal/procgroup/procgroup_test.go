package procgroup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangGuard only turns a hang into a failure; no test asserts timing.
const hangGuard = 2 * time.Minute

func waitGuarded(t *testing.T, p *Process) Exit {
	t.Helper()
	ch := make(chan Exit, 1)
	go func() { ch <- p.Wait() }()
	select {
	case ex := <-ch:
		return ex
	case <-time.After(hangGuard):
		t.Fatal("Wait did not return")
	}
	return Exit{}
}

func TestWaitEndings(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		signal   syscall.Signal // sent to the group once started
		code     int
		signaled bool
	}{
		{name: "success", script: "exit 0"},
		{name: "exit code", script: "exit 3", code: 3},
		{name: "killed", script: "sleep 300", signal: syscall.SIGKILL, code: -1, signaled: true},
		{name: "terminated", script: "sleep 300", signal: syscall.SIGTERM, code: -1, signaled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(exec.Command("sh", "-c", tt.script))
			if err != nil {
				t.Fatal(err)
			}
			if pgid, err := syscall.Getpgid(p.Pid()); err == nil && pgid != p.Pid() {
				t.Errorf("pgid = %d, want the leader's pid %d", pgid, p.Pid())
			}
			if tt.signal != 0 {
				if err := p.Signal(tt.signal); err != nil {
					t.Fatal(err)
				}
			}
			ex := waitGuarded(t, p)
			if ex.State == nil || ex.State.ExitCode() != tt.code {
				t.Fatalf("exit %+v, want code %d", ex, tt.code)
			}
			var exitErr *exec.ExitError
			if (tt.code != 0) != errors.As(ex.Err, &exitErr) {
				t.Errorf("err = %v", ex.Err)
			}
			ws, _ := ex.State.Sys().(syscall.WaitStatus)
			if ws.Signaled() != tt.signaled {
				t.Errorf("signaled = %v, want %v", ws.Signaled(), tt.signaled)
			}
			if ex.At.IsZero() || ex.GroupKilledAt.Before(ex.At) {
				t.Errorf("times: exited %v, group killed %v", ex.At, ex.GroupKilledAt)
			}
		})
	}
}

// The leader's exit takes its group with it: a background job that holds
// the output pipe neither survives nor keeps Wait waiting.
func TestWaitKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > bg; echo ok")
	cmd.Dir = dir
	cmd.Stdout = &out // exec copies until EOF: the sleep holds the pipe
	p, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	ex := waitGuarded(t, p)
	if ex.Err != nil || out.String() != "ok\n" {
		t.Errorf("err %v, output %q", ex.Err, out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "bg"))
	if err != nil {
		t.Fatal(err)
	}
	bg, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !p.Sweep(time.Now().Add(hangGuard), nil) {
		t.Fatal("the group never emptied")
	}
	if err := syscall.Kill(bg, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("background job %d: kill(0) = %v, want ESRCH", bg, err)
	}
}

func TestWaitIsIdempotent(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "exit 7"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	exits := make([]Exit, 4)
	for k := range exits {
		wg.Go(func() { exits[k] = p.Wait() })
	}
	wg.Wait()
	for _, ex := range exits[1:] {
		if ex != exits[0] {
			t.Errorf("Wait answers differ: %+v vs %+v", ex, exits[0])
		}
	}
	// Once reaped, the group id may name a stranger: signals are dropped.
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("Signal after Wait = %v, want nil", err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill after Wait = %v, want nil", err)
	}
}

func TestSweepKillsEscapees(t *testing.T) {
	p, err := Start(exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	waitGuarded(t, p)
	left := 2 // escapees found on the first two passes, then none
	calls := 0
	gone := p.Sweep(time.Now().Add(hangGuard), func() int {
		calls++
		if left > 0 {
			left--
			return 1
		}
		return 0
	})
	if !gone || calls != 3 {
		t.Errorf("Sweep = %v after %d passes, want true after 3", gone, calls)
	}
}

func TestStartError(t *testing.T) {
	_, err := Start(exec.Command(filepath.Join(t.TempDir(), "missing")))
	if err == nil {
		t.Fatal("want an error for a missing binary")
	}
}

// Run: a cancelled context kills the whole group (the shell and its
// child) and returns once the leader is reaped; an ended context starts
// nothing.
func TestRunCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > bg; wait")
	cmd.Dir = dir
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "bg")); err == nil {
				time.Sleep(50 * time.Millisecond) // the pid is written whole
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ex, err := Run(ctx, cmd)
	if !errors.Is(err, context.Canceled) || ex.State == nil {
		t.Fatalf("Run = %+v, %v; want the reaped leader and context.Canceled", ex, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bg"))
	if err != nil {
		t.Fatal(err)
	}
	bg, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(hangGuard)
	for syscall.Kill(bg, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // killed, maybe not yet reaped by init
	}
	if err := syscall.Kill(bg, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the group's child %d outlived Run: kill(0) = %v", bg, err)
	}

	ex, err = Run(ctx, exec.Command("true"))
	if !errors.Is(err, context.Canceled) || ex.State != nil {
		t.Errorf("Run after the context ended = %+v, %v; want nothing started", ex, err)
	}
}
