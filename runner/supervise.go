package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The session's goroutines: readers of stdout and stderr, the writer of
// stdin and the waiter for the process report to the supervisor through the
// inbox; the supervisor feeds the stop machine and carries out its actions.

func (s *Session) readStdout() {
	defer s.push(input{kind: inStdoutEOF})
	var tee io.Writer
	if s.logFile != nil {
		tee = s.logFile
	}
	lr := NewLineReader(s.stdout, tee).WithLogger(s.log)
	teeWarned := false
	for n := 1; ; n++ {
		line, err := lr.Next()
		if terr := lr.TeeErr(); terr != nil && !teeWarned {
			teeWarned = true
			s.log.Warn("session log write failed; still reading claude", "log", s.spec.LogPath, "err", terr)
			s.setReadErr(fmt.Errorf("write session log: %w", terr))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			in := input{kind: inLine, at: time.Now()}
			ev, perr := Parse(line)
			if perr != nil {
				s.log.Warn("skipping stdout line that is not stream-json",
					"line", n, "bytes", len(line), "err", perr, "start", preview(line))
			} else {
				ev.At = in.at
				if ev.Hook != nil {
					ev.Hook.Bind(s.hookAnswerer(ev.Hook.RequestID))
				}
				in.event = &ev
			}
			s.push(in) // a line that is not JSON still shows claude is alive
		}
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
			case errors.Is(err, os.ErrDeadlineExceeded):
				s.log.Warn("stopped reading stdout: still held open after claude exited")
			default:
				s.setReadErr(fmt.Errorf("read claude stdout: %w", err))
			}
			return
		}
	}
}

func preview(b []byte) string {
	if len(b) > 120 {
		b = b[:120]
	}
	return strings.ToValidUTF8(string(b), "?")
}

func (s *Session) setReadErr(err error) {
	s.mu.Lock()
	if s.readErr == nil {
		s.readErr = err
	}
	s.mu.Unlock()
}

func (s *Session) readStderr() {
	defer s.push(input{kind: inStderrEOF})
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stderr.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.stderrTail = append(s.stderrTail, buf[:n]...)
			if over := len(s.stderrTail) - stderrTailBytes; over > 0 {
				s.stderrTail = append(s.stderrTail[:0], s.stderrTail[over:]...)
			}
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// waitLeader waits for claude to exit (procgroup kills the rest of its
// group then), and then for every process of the session to be gone.
func (s *Session) waitLeader() {
	ex := s.proc.Wait()
	code, desc := exitStatus(ex.State)
	var exitErr *exec.ExitError
	if ex.Err != nil && !errors.As(ex.Err, &exitErr) {
		s.mu.Lock()
		s.waitErr = ex.Err
		s.mu.Unlock()
	}
	s.push(input{kind: inExit, exit: exitFacts{at: ex.At, groupKilledAt: ex.GroupKilledAt, code: code, status: desc}})

	// Processes that left the group (the Bash tool runs commands with
	// setsid) are found by the mark in their environment.
	until := time.Now().Add(max(s.spec.KillGrace, minGroupWait))
	escapees := func() int { return KillByEnv(MarkEnv + "=" + s.sessionMark) }
	if !s.proc.Sweep(until, escapees) {
		s.log.Warn("process group still has members after SIGKILL", "pgid", s.proc.Pid())
	}
	s.push(input{kind: inGroupGone})
}

func (s *Session) writeLoop() {
	for op := range s.writes {
		if op.close {
			s.closeStdin()
			continue
		}
		_, err := s.stdin.Write(op.data)
		if err != nil {
			err = fmt.Errorf("write claude stdin: %w", err)
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EPIPE) {
				s.log.Warn("write to claude failed", "err", err)
			}
		}
		if op.reply != nil {
			op.reply <- err
		}
	}
}

func (s *Session) closeStdin() {
	s.closeStdinOnce.Do(func() { s.stdin.Close() })
}

func (s *Session) enqueueWrite(data []byte, reply chan error) {
	select {
	case s.writes <- writeOp{data: data, reply: reply}:
	default:
		// Only possible if claude stopped reading stdin with dozens of
		// writes queued; the watchdogs end such a session.
		if reply != nil {
			reply <- errors.New("claude is not reading its stdin")
		}
	}
}

// supervise runs the session: it hands the inbox to the stop machine,
// carries out the machine's actions and delivers events to the consumer.
func (s *Session) supervise() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.mu.Lock()
		ins := s.inbox
		s.inbox = nil
		s.mu.Unlock()
		for _, in := range ins {
			if in.kind == inSend {
				s.sendReply = in.reply // Send is serialised: one at a time
			}
		}
		acts := s.m.step(now, ins...)
		s.mu.Lock()
		s.inflight = slices.Clone(s.m.inflight)
		s.mu.Unlock()
		for _, in := range ins {
			if in.kind == inLine && in.event != nil {
				s.outbox = append(s.outbox, *in.event)
			}
			if in.kind == inLine && !s.over && !s.m.ending() {
				ask, late := s.ctxAsk.observe(in.event, now)
				for _, id := range late {
					s.log.Debug("claude did not answer get_context_usage", "request_id", id)
					s.outbox = append(s.outbox, lateEvent(id, now)) // ends the consumers' wait for the window
				}
				if ask != nil {
					s.enqueueWrite(ask, nil)
				}
			}
		}
		for _, a := range acts {
			s.do(a)
		}
		if s.over && len(s.outbox) == 0 {
			close(s.events)
			return
		}
		if next, ok := s.m.next(); ok && !s.over {
			timer.Reset(max(next.Sub(now), 0))
		} else {
			timer.Stop()
		}
		var out chan<- Event
		var head Event
		if len(s.outbox) > 0 {
			out, head = s.events, s.outbox[0]
		}
		select {
		case <-s.wake:
		case <-timer.C:
		case out <- head:
			s.outbox[0] = Event{}
			s.outbox = s.outbox[1:]
		}
	}
}

// do carries out one action of the stop machine.
func (s *Session) do(a action) {
	switch a.kind {
	case actWrite:
		var reply chan error
		if a.forSend {
			reply, s.sendReply = s.sendReply, nil
		}
		s.enqueueWrite(a.data, reply)
	case actCloseStdin:
		select {
		case s.writes <- writeOp{close: true}: // after the writes already queued
		default:
			s.closeStdin()
		}
	case actCloseStdinNow:
		s.closeStdin()
	case actSignal:
		fields := a.fields
		fields.PGID = ref(s.proc.Pid())
		if err := s.proc.Signal(a.sig); err != nil {
			fields.Err = ref(err.Error())
		}
		s.mark(Mark{Name: a.mark, At: a.at, Fields: fields})
	case actReplySend:
		if s.sendReply != nil {
			s.sendReply <- a.err
			s.sendReply = nil
		}
	case actMark:
		s.mark(Mark{Name: a.mark, At: a.at, Fields: a.fields})
	case actReadDeadline:
		_ = s.stdout.SetReadDeadline(a.at)
		_ = s.stderr.SetReadDeadline(a.at)
	case actLog:
		s.log.Log(context.Background(), a.level, a.name, a.args...)
	case actFinish:
		s.finish(a.outcome)
	}
}

func (s *Session) mark(m Mark) {
	s.marks = append(s.marks, m)
	s.log.Debug("claude session", "mark", m.Name, "fields", m.Fields)
	if s.spec.OnMark != nil {
		s.spec.OnMark(m)
	}
}

// finish releases what the session holds and publishes its outcome.
func (s *Session) finish(o Outcome) {
	s.over = true
	s.stopWatch()
	close(s.writes)
	s.stdout.Close()
	s.stderr.Close()

	s.mu.Lock()
	s.finished = true
	late := s.inbox // a Send queued after the machine finished
	s.inbox = nil
	tail := strings.ToValidUTF8(string(s.stderrTail), "?")
	runErr := s.readErr
	waitErr := s.waitErr
	s.mu.Unlock()
	for _, in := range late {
		if in.kind == inSend {
			in.reply <- ErrSessionClosed
		}
	}

	if s.logFile != nil {
		if err := s.logFile.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("close session log: %w", err)
		}
	}
	if waitErr != nil && runErr == nil {
		runErr = fmt.Errorf("wait for claude: %w", waitErr)
	}
	marks := slices.Clone(s.marks)
	sort.SliceStable(marks, func(a, b int) bool { return marks[a].At.Before(marks[b].At) })
	o.Stderr, o.Err, o.Marks = tail, runErr, marks
	o = classified(o)
	s.outcome = o
	s.log.Debug("claude session ended", "kind", o.Kind, "reason", o.Reason, "exit_code", o.ExitCode)
	close(s.done)
}

func exitStatus(st *os.ProcessState) (int, string) {
	if st == nil {
		return -1, "ended"
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, fmt.Sprintf("was killed by %s", ws.Signal())
	}
	return st.ExitCode(), fmt.Sprintf("exited with code %d", st.ExitCode())
}
