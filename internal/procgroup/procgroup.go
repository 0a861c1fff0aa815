// Package procgroup runs a command as the leader of its own process group,
// so that everything it starts can be signalled and killed with it.
//
// The rules it keeps (after ralphex pkg/executor/procgroup_unix.go and
// restic's rclone backend):
//   - the command gets its own group (Setpgid) and signals go to the group,
//     never only the leader: Cmd.WaitDelay alone kills only the leader;
//   - when the leader exits, the group is killed while the leader is still an
//     unreaped zombie (Linux), so the group id cannot have been reused, and
//     once more after reaping it;
//   - Wait is idempotent and safe from several goroutines; Signal is a no-op
//     once the leader is reaped, so a late Kill cannot hit a stranger that
//     reused the pid.
//
// Output: with an io.Writer as Cmd.Stdout, exec.Cmd.Wait returns only after
// the copy hit EOF, which the group kill at exit brings about (a process
// that left the group is cut off by Cmd.WaitDelay). Callers that need to
// read the output themselves pass an *os.File from os.Pipe: Wait never
// waits for such readers, and the caller decides when to stop reading.
package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a started command leading its own process group.
type Process struct {
	cmd  *exec.Cmd
	pgid int

	mu     sync.Mutex
	reaped bool // the leader is reaped (or being reaped): its pid may be reused

	waitOnce sync.Once
	done     chan struct{}
	exit     Exit
}

// Exit is how the leader ended.
type Exit struct {
	At            time.Time        // when the leader was seen to exit
	GroupKilledAt time.Time        // when the rest of the group was sent SIGKILL
	State         *os.ProcessState // nil if the leader could not be waited for
	// Err is cmd.Wait's error: *exec.ExitError for a non-zero exit or a
	// signal, exec.ErrWaitDelay when WaitDelay cut off the output.
	Err error
}

// Start starts cmd in a new process group led by cmd.
func Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Process{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}, nil
}

// Pid is the leader's process id, which is also the group id.
func (p *Process) Pid() int { return p.pgid }

// Signal sends sig to the whole group. Once the leader is reaped it does
// nothing and returns nil: the group is already killed by then, and its id
// could name another group.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	return syscall.Kill(-p.pgid, sig)
}

// Kill sends SIGKILL to the whole group.
func (p *Process) Kill() error { return p.Signal(syscall.SIGKILL) }

// Wait waits for the leader to exit, kills the rest of its group, reaps the
// leader and kills the group once more (members forked meanwhile). Every
// call returns the same Exit.
func (p *Process) Wait() Exit {
	p.waitOnce.Do(func() {
		defer close(p.done)
		// Signal the group while the leader is an unreaped zombie: its pid,
		// and so the group id, cannot be reused by then.
		early := waitExited(p.pgid) == nil
		p.exit.At = time.Now()
		if early {
			p.killFinal()
			p.exit.GroupKilledAt = time.Now()
		}
		p.exit.Err = p.cmd.Wait()
		p.exit.State = p.cmd.ProcessState
		if !early {
			// Reaped first (no waitid here): accept the small reuse window.
			p.exit.At = time.Now()
			p.killFinal()
			p.exit.GroupKilledAt = time.Now()
		}
		// A member forked between the kill and the reap.
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	})
	<-p.done
	return p.exit
}

func (p *Process) killFinal() {
	p.mu.Lock()
	p.reaped = true
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.mu.Unlock()
}

// Sweep, after Wait, keeps killing the group, and whatever escapees finds
// (processes that left the group, e.g. with setsid), until both are gone or
// until passes. Killed members stay in the group as zombies until their new
// parent reaps them, so "gone" can take a moment. It reports whether the
// group emptied in time. escapees may be nil; it returns how many processes
// it signalled.
func (p *Process) Sweep(until time.Time, escapees func() int) bool {
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		escaped := 0
		if escapees != nil {
			escaped = escapees()
		}
		if err := syscall.Kill(-p.pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) && escaped == 0 {
			return true
		}
		if time.Now().After(until) {
			return false
		}
		time.Sleep(delay)
	}
}

// Run starts cmd in its own group and waits for it. When ctx ends first,
// the whole group is killed and Run still waits for the leader, so nothing
// it started outlives the call; the ctx's error is returned then. A start
// that fails is the error with a zero Exit.
func Run(ctx context.Context, cmd *exec.Cmd) (Exit, error) {
	if err := ctx.Err(); err != nil {
		return Exit{}, err
	}
	p, err := Start(cmd)
	if err != nil {
		return Exit{}, err
	}
	done := make(chan Exit, 1)
	go func() { done <- p.Wait() }()
	select {
	case ex := <-done:
		return ex, nil
	case <-ctx.Done():
		_ = p.Kill()
		return <-done, ctx.Err()
	}
}
