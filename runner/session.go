package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrClaudeNotFound is wrapped by Start when the claude binary is missing or
// not executable.
var ErrClaudeNotFound = errors.New("claude CLI not found")

// ErrSessionClosed is returned by Send once the session is stopping or over.
var ErrSessionClosed = errors.New("claude session is closing")

const (
	defaultKillGrace = 3 * time.Second
	defaultStopGrace = 30 * time.Second
	// minGroupWait bounds how long Wait waits for killed group members to
	// disappear (they linger as zombies until their new parent reaps them).
	minGroupWait    = 5 * time.Second
	stderrTailBytes = 16 << 10
	eventBuffer     = 64
)

// Spec describes one claude session.
type Spec struct {
	Bin   string // claude binary, looked up on PATH; default "claude"
	Model string // --model, if set
	// PermissionMode "bypassPermissions" becomes --dangerously-skip-permissions
	// (which needs IS_SANDBOX=1 when running as root); any other non-empty
	// value becomes --permission-mode.
	PermissionMode string
	ExtraArgs      []string
	Dir            string // working directory of claude
	Prompt         string // first user message, written to stdin

	Env         []string          // base environment; nil means os.Environ(). CLAUDECODE is removed.
	SetEnv      map[string]string // added or overriding (DEBUSSY_RUN_ID, ...)
	PathPrepend string            // put first on PATH, so the agent can run `debussy done`

	LogPath string // every raw stdout line is appended here before parsing; dirs are created

	IdleTimeout    time.Duration // no stdout line for this long: kill; 0 disables
	SessionTimeout time.Duration // stop at a safe point, then kill; 0 disables
	// StopGrace is how long a stop (or Send) waits for tools in flight to
	// return their result before interrupting them anyway; default 30s.
	StopGrace time.Duration
	// KillGrace is the wait for a result after an interrupt, for the exit
	// after stdin is closed, and between SIGINT, SIGTERM and SIGKILL;
	// default 3s.
	KillGrace time.Duration

	// OnMark observes the stop timeline (see Mark). It is called from one
	// goroutine, in order, and must return quickly.
	OnMark func(name string, at time.Time, fields map[string]any)
	Logger *slog.Logger
}

// Session is one running claude process.
type Session struct {
	spec    Spec
	log     *slog.Logger
	cmd     *exec.Cmd
	pgid    int
	started time.Time

	stdin, stdout, stderr *os.File
	logFile               *os.File
	closeStdinOnce        sync.Once

	events     chan Event
	done       chan struct{}
	wake       chan struct{}
	writes     chan writeOp
	exitCh     chan exitInfo
	stdoutDone chan struct{}
	stderrDone chan struct{}
	groupGone  chan struct{}
	lastLine   atomic.Int64 // unix nanoseconds of the last stdout line

	sendMu      sync.Mutex // one Send at a time
	sessionMark string     // value of MarkEnv in the session's environment

	mu            sync.Mutex // guards the fields up to sv
	inbox         []Event
	inflight      []ToolUse
	stopRequested bool
	stopReason    string
	killRequested bool
	sendReq       *sendRequest
	reaping       bool // the leader is being reaped: its pid may be reused
	finished      bool
	stderrTail    []byte
	readErr       error

	ctx     context.Context
	sv      supervisor // owned by the supervise goroutine
	outcome Outcome    // set before done is closed
}

type sendRequest struct {
	msg   string
	reply chan error // buffered; exactly one reply
}

type writeOp struct {
	data  []byte
	reply chan error
	close bool
}

type exitInfo struct {
	at, groupKilledAt time.Time
	state             *os.ProcessState
	err               error
}

type quiesce int

const (
	quiet          quiesce = iota
	draining               // waiting for tools in flight
	awaitingResult         // interrupt sent, waiting for the turn's result
)

// supervisor is the state of the goroutine that drives the session.
type supervisor struct {
	turnRunning    bool
	cause          OutcomeKind // why the runner is ending the session
	reason         string
	stopSeen       bool
	killSeen       bool
	sendPending    *sendRequest
	q              quiesce
	qStart         time.Time
	qDeadline      time.Time
	reqN           int
	interruptID    string
	stdinClosed    bool
	sigLevel       int
	escalateAt     time.Time
	exit           *exitInfo
	exited         bool
	stdoutEOF      bool
	stderrEOF      bool
	groupGone      bool
	finished       bool
	lastResult     *Result
	marks          []Mark
	inflightAtStop []ToolUse
	outbox         []Event
	// responseOpen: the last main-thread line was an assistant line, so
	// the response may still be streaming blocks (one line per block).
	responseOpen    bool
	lastAssistantAt time.Time
}

// responseSettle is how long a stop waits after an assistant line for
// more blocks of the same response. Usage arrives on a response's first
// line, before its tool_use lines: without this wait a stop triggered by
// that usage would cancel the tools the model just asked for.
const responseSettle = 2 * time.Second

// settling reports whether the current response may still add tool uses.
func (s *Session) settling(now time.Time) bool {
	return s.sv.responseOpen && now.Before(s.settleUntil())
}

func (s *Session) settleUntil() time.Time {
	return s.sv.lastAssistantAt.Add(min(responseSettle, s.spec.StopGrace))
}

// Start runs claude with spec and writes the prompt. The context works like
// RequestStop("cancelled"): the session stops at a safe point.
func Start(ctx context.Context, spec Spec) (*Session, error) {
	if spec.Prompt == "" {
		return nil, errors.New("start claude: empty prompt")
	}
	bin := spec.Bin
	path, err := LookPath(bin)
	if err != nil {
		return nil, err
	}
	if spec.Dir != "" {
		if _, err := os.Stat(spec.Dir); err != nil {
			return nil, fmt.Errorf("start claude: working directory: %w", err)
		}
	}
	if spec.KillGrace <= 0 {
		spec.KillGrace = defaultKillGrace
	}
	if spec.StopGrace <= 0 {
		spec.StopGrace = defaultStopGrace
	}
	logger := spec.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	var logFile *os.File
	if spec.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o755); err != nil {
			return nil, fmt.Errorf("start claude: create session log dir: %w", err)
		}
		logFile, err = os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start claude: open session log: %w", err)
		}
	}
	sessionMark := newMark()
	var toClose []*os.File
	fail := func(err error) (*Session, error) {
		for _, f := range toClose {
			f.Close()
		}
		if logFile != nil {
			logFile.Close()
		}
		return nil, err
	}
	// os.Pipe rather than cmd.StdoutPipe: our ends are pollable (deadlines,
	// Close unblocks a Read) and cmd.Wait does not wait for readers, so a
	// grandchild holding the pipe open cannot hang it.
	var ends [3][2]*os.File
	for k := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("start claude: create pipe: %w", err))
		}
		ends[k] = [2]*os.File{r, w}
		toClose = append(toClose, r, w)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{bin}, claudeArgs(spec)...),
		Dir:         spec.Dir,
		Env:         append(childEnv(spec), MarkEnv+"="+sessionMark),
		Stdin:       ends[0][0],
		Stdout:      ends[1][1],
		Stderr:      ends[2][1],
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return fail(notFound(bin, err))
		}
		return fail(fmt.Errorf("start claude: %w", err))
	}
	// The child has its copies; ours would keep the pipes open forever.
	ends[0][0].Close()
	ends[1][1].Close()
	ends[2][1].Close()

	s := &Session{
		sessionMark: sessionMark,
		spec:        spec,
		log:         logger.With("pid", cmd.Process.Pid),
		cmd:         cmd,
		pgid:        cmd.Process.Pid,
		started:     time.Now(),
		stdin:       ends[0][1],
		stdout:      ends[1][0],
		stderr:      ends[2][0],
		logFile:     logFile,
		events:      make(chan Event, eventBuffer),
		done:        make(chan struct{}),
		wake:        make(chan struct{}, 1),
		writes:      make(chan writeOp, 64),
		exitCh:      make(chan exitInfo, 1),
		stdoutDone:  make(chan struct{}),
		stderrDone:  make(chan struct{}),
		groupGone:   make(chan struct{}),
		ctx:         ctx,
	}
	s.lastLine.Store(s.started.UnixNano())
	s.log.Debug("claude started", "args", cmd.Args[1:], "dir", spec.Dir, "log", spec.LogPath)

	go s.readStdout()
	go s.readStderr()
	go s.waitLeader()
	go s.writeLoop()
	s.sv.turnRunning = true
	s.enqueueWrite(userMessage(spec.Prompt), nil)
	go s.supervise()
	return s, nil
}

// LookPath finds the claude binary ("" means "claude" on PATH), so a
// missing one is reported before any work starts.
func LookPath(bin string) (string, error) {
	if bin == "" {
		bin = "claude"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", notFound(bin, err)
	}
	return path, nil
}

func notFound(bin string, err error) error {
	return fmt.Errorf("start claude: %w: %q (install Claude Code or point --claude-bin / DEBUSSY_CLAUDE_BIN at it): %w",
		ErrClaudeNotFound, bin, err)
}

func claudeArgs(spec Spec) []string {
	args := []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}
	if spec.Model != "" {
		args = append(args, "--model", spec.Model)
	}
	switch spec.PermissionMode {
	case "":
	case "bypassPermissions":
		args = append(args, "--dangerously-skip-permissions")
	default:
		args = append(args, "--permission-mode", spec.PermissionMode)
	}
	return append(args, spec.ExtraArgs...)
}

// childEnv removes CLAUDECODE (its nested-session guard makes claude exit
// when debussy itself runs inside Claude Code), applies SetEnv and puts
// PathPrepend first on PATH.
func childEnv(spec Spec) []string {
	base := spec.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+len(spec.SetEnv)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := spec.SetEnv[k]; k == "CLAUDECODE" || set {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(spec.SetEnv))
	for k := range spec.SetEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+spec.SetEnv[k])
	}
	if spec.PathPrepend != "" {
		at := -1
		for i, kv := range env {
			if strings.HasPrefix(kv, "PATH=") {
				at = i
			}
		}
		switch {
		case at < 0:
			env = append(env, "PATH="+spec.PathPrepend)
		case env[at] == "PATH=":
			env[at] = "PATH=" + spec.PathPrepend
		default:
			env[at] = "PATH=" + spec.PathPrepend + string(os.PathListSeparator) + env[at][len("PATH="):]
		}
	}
	return env
}

func userMessage(text string) []byte {
	var msg struct {
		Type    string `json:"type"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
	}
	msg.Type = "user"
	msg.Message.Role = "user"
	msg.Message.Content = text
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(msg) // cannot fail for strings; ends with "\n"
	return b.Bytes()
}

func interruptRequest(id string) []byte {
	return fmt.Appendf(nil, `{"type":"control_request","request_id":%q,"request":{"subtype":"interrupt"}}`+"\n", id)
}

// Events delivers the parsed stdout lines. It is closed after the last one;
// the consumer must drain it (events queue without bound meanwhile, so a
// slow consumer never stalls claude's stdout).
func (s *Session) Events() <-chan Event { return s.events }

// PID is claude's process id, also its process group id.
func (s *Session) PID() int { return s.pgid }

// InFlight returns the main-thread tool uses that have no tool_result yet.
func (s *Session) InFlight() []ToolUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inflight)
}

// RequestStop asks the session to end at the next safe point: tools in
// flight may finish (up to StopGrace), then the turn is interrupted, its
// result awaited, stdin closed, and the process group signalled if claude
// lingers. Only the first call counts; it never blocks.
func (s *Session) RequestStop(reason string) {
	s.mu.Lock()
	if !s.stopRequested {
		s.stopRequested, s.stopReason = true, reason
	}
	s.mu.Unlock()
	s.poke()
}

// Kill sends SIGKILL to the whole process group now.
func (s *Session) Kill() {
	s.mu.Lock()
	s.killRequested = true
	if !s.reaping {
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.poke()
}

// Send writes msg as a user message in the same session. If a turn is
// running it first waits for tools in flight (up to StopGrace), interrupts
// the turn and waits for its result. It returns once the message is written.
func (s *Session) Send(msg string) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	req := &sendRequest{msg: msg, reply: make(chan error, 1)}
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return fmt.Errorf("send message: %w", ErrSessionClosed)
	}
	s.sendReq = req
	s.mu.Unlock()
	s.poke()
	if err := <-req.reply; err != nil {
		return fmt.Errorf("send message: %w", err)
	}
	return nil
}

// Wait blocks until claude and every process of its group are gone and
// stdout is drained, and returns how the session ended. It does not need
// Events to be drained first.
func (s *Session) Wait() Outcome {
	<-s.done
	return s.outcome
}

func (s *Session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Session) readStdout() {
	defer close(s.stdoutDone)
	var tee io.Writer
	if s.logFile != nil {
		tee = s.logFile
	}
	lr := NewLineReader(s.stdout, tee)
	teeWarned := false
	for n := 1; ; n++ {
		line, err := lr.Next()
		if terr := lr.TeeErr(); terr != nil && !teeWarned {
			teeWarned = true
			s.log.Warn("session log write failed; still reading claude", "log", s.spec.LogPath, "err", terr)
			s.setReadErr(fmt.Errorf("write session log: %w", terr))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			now := time.Now()
			s.lastLine.Store(now.UnixNano())
			ev, perr := Parse(line)
			if perr != nil {
				s.log.Warn("skipping stdout line that is not stream-json",
					"line", n, "bytes", len(line), "err", perr, "start", preview(line))
			} else {
				ev.At = now
				s.mu.Lock()
				s.inbox = append(s.inbox, ev)
				s.mu.Unlock()
				s.poke()
			}
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
	defer close(s.stderrDone)
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

// waitLeader waits for claude to exit, kills what is left of its process
// group, reaps claude, and then waits for the group to be empty.
func (s *Session) waitLeader() {
	ex := exitInfo{}
	// Signal the group while the leader is an unreaped zombie: its pid, and
	// so the group id, cannot be reused by then.
	early := waitExited(s.pgid) == nil
	ex.at = time.Now()
	if early {
		s.killGroupFinal()
		ex.groupKilledAt = time.Now()
	}
	ex.err = s.cmd.Wait()
	ex.state = s.cmd.ProcessState
	if !early {
		ex.at = time.Now()
		s.killGroupFinal()
		ex.groupKilledAt = time.Now()
	}
	var exitErr *exec.ExitError
	if errors.As(ex.err, &exitErr) {
		ex.err = nil
	}
	s.exitCh <- ex

	// Killed members stay in the group as zombies until their new parent
	// reaps them; keep killing (late forks) until the group is empty.
	// Processes that left the group (the Bash tool runs commands with
	// setsid) are found by the mark in their environment.
	deadline := time.Now().Add(max(s.spec.KillGrace, minGroupWait))
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		escaped := KillByEnv(MarkEnv + "=" + s.sessionMark)
		if err := syscall.Kill(-s.pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) && escaped == 0 {
			break
		}
		if time.Now().After(deadline) {
			s.log.Warn("process group still has members after SIGKILL", "pgid", s.pgid)
			break
		}
		time.Sleep(delay)
	}
	close(s.groupGone)
}

func (s *Session) killGroupFinal() {
	s.mu.Lock()
	s.reaping = true
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	s.mu.Unlock()
}

// signalGroup signals claude's process group unless the leader is already
// being reaped.
func (s *Session) signalGroup(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reaping {
		return nil
	}
	return syscall.Kill(-s.pgid, sig)
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

// supervise runs the session: it applies stdout events, requests and timers
// to the state in s.sv, and delivers events to the consumer.
func (s *Session) supervise() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := s.ctx.Done()
	exitCh, stdoutDone, stderrDone, groupGone := s.exitCh, s.stdoutDone, s.stderrDone, s.groupGone
	for {
		now := time.Now()
		s.step(now)
		if !s.sv.finished && s.sv.exited && s.sv.stdoutEOF && s.sv.stderrEOF && s.sv.groupGone {
			s.finish()
		}
		if s.sv.finished && len(s.sv.outbox) == 0 {
			close(s.events)
			return
		}
		if next, ok := s.nextDeadline(); ok {
			timer.Reset(max(next.Sub(now), 0))
		} else {
			timer.Stop()
		}
		var out chan<- Event
		var head Event
		if len(s.sv.outbox) > 0 {
			out, head = s.events, s.sv.outbox[0]
		}
		select {
		case <-s.wake:
		case <-timer.C:
		case ex := <-exitCh:
			s.sv.exit, exitCh = &ex, nil
		case <-stdoutDone:
			s.sv.stdoutEOF, stdoutDone = true, nil
		case <-stderrDone:
			s.sv.stderrEOF, stderrDone = true, nil
		case <-groupGone:
			s.sv.groupGone, groupGone = true, nil
		case <-ctxDone:
			ctxDone = nil // seen by watchdogs through s.ctx.Err
		case out <- head:
			s.sv.outbox[0] = Event{}
			s.sv.outbox = s.sv.outbox[1:]
		}
	}
}

func (s *Session) step(now time.Time) {
	s.mu.Lock()
	inbox := s.inbox
	s.inbox = nil
	s.mu.Unlock()
	for _, ev := range inbox {
		s.observe(ev, now)
	}
	if s.sv.exit != nil && !s.sv.exited {
		s.onExit(now)
	}

	s.mu.Lock()
	kill := s.killRequested && !s.sv.killSeen
	send := s.sendReq
	s.sendReq = nil
	s.mu.Unlock()
	if kill {
		s.sv.killSeen = true
		s.onKill(now)
	}
	s.takeStop(now)
	if send != nil {
		s.onSend(send, now)
	}
	s.watchdogs(now)
	s.advance(now)
}

// takeStop starts a stop that RequestStop asked for, if it has not been seen.
func (s *Session) takeStop(now time.Time) {
	s.mu.Lock()
	stop, reason := s.stopRequested && !s.sv.stopSeen, s.stopReason
	s.mu.Unlock()
	if stop {
		s.sv.stopSeen = true
		s.beginStop(OutcomeStopped, reason, now)
	}
}

func (s *Session) observe(ev Event, now time.Time) {
	s.sv.outbox = append(s.sv.outbox, ev)
	switch ev.Kind {
	case KindAssistant:
		if ev.Assistant.MainThread() {
			s.sv.responseOpen, s.sv.lastAssistantAt = true, now
		}
		if ev.Assistant.MainThread() && len(ev.Assistant.ToolUses) > 0 {
			s.mu.Lock()
			s.inflight = append(s.inflight, ev.Assistant.ToolUses...)
			s.mu.Unlock()
		}
	case KindToolResult, KindUser:
		s.sv.responseOpen = false
		s.mu.Lock()
		for _, tr := range ev.ToolResults {
			s.inflight = slices.DeleteFunc(s.inflight, func(tu ToolUse) bool { return tu.ID == tr.ToolUseID })
		}
		s.mu.Unlock()
	case KindControlResponse:
		if ev.Control.RequestID != "" && ev.Control.RequestID == s.sv.interruptID {
			s.mark("interrupt_acked", now, map[string]any{
				"request_id": ev.Control.RequestID, "subtype": ev.Control.Subtype, "error": ev.Control.Error})
		}
	case KindResult:
		s.onResult(ev.Result, now)
	}
}

func (s *Session) onResult(r *Result, now time.Time) {
	s.sv.lastResult = r
	s.sv.responseOpen = false
	s.sv.turnRunning = false
	s.mu.Lock()
	s.inflight = nil
	s.mu.Unlock()
	awaited := s.sv.q != quiet
	s.sv.q = quiet
	if awaited || s.sv.cause != "" {
		s.mark("result_received", now, map[string]any{
			"subtype": r.Subtype, "is_error": r.IsError, "terminal_reason": r.TerminalReason})
	}
	if s.sv.cause == "" && s.sv.exit == nil && !s.sv.stdinClosed {
		// A stop or cancel that came with this result ends the session here,
		// rather than after a pending Send started another turn.
		s.takeStop(now)
		if s.sv.cause == "" && s.ctx.Err() != nil {
			s.beginStop(OutcomeCancelled, "cancelled", now)
		}
	}
	switch {
	case s.sv.cause != "":
		s.requestStdinClose(now)
	case s.sv.exit != nil || s.sv.stdinClosed:
	case s.sv.sendPending != nil:
		req := s.sv.sendPending
		s.sv.sendPending = nil
		s.writeUser(req.msg, req.reply, now)
	default:
		s.requestStdinClose(now)
	}
}

func (s *Session) writeUser(msg string, reply chan error, now time.Time) {
	s.sv.turnRunning = true
	s.enqueueWrite(userMessage(msg), reply)
	s.mark("follow_up_sent", now, map[string]any{"bytes": len(msg)})
}

func (s *Session) enqueueWrite(data []byte, reply chan error) {
	if s.sv.stdinClosed || s.sv.finished {
		if reply != nil {
			reply <- ErrSessionClosed
		}
		return
	}
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

// requestStdinClose closes stdin after the writes already queued, which
// tells claude to exit once its turn is over. If it has not exited after
// KillGrace the group is signalled.
func (s *Session) requestStdinClose(now time.Time) {
	if s.sv.stdinClosed {
		return
	}
	s.sv.stdinClosed = true
	s.failSend(ErrSessionClosed)
	if s.sv.finished {
		return
	}
	select {
	case s.writes <- writeOp{close: true}:
	default:
		s.closeStdin()
	}
	s.mark("stdin_closed", now, nil)
	if s.sv.exit == nil && s.sv.escalateAt.IsZero() {
		s.sv.escalateAt = now.Add(s.spec.KillGrace)
	}
}

func (s *Session) failSend(err error) {
	if s.sv.sendPending != nil {
		s.sv.sendPending.reply <- err
		s.sv.sendPending = nil
	}
}

// beginStop starts a safe-point stop; the first cause wins. A session that
// already closed stdin after its last result ends on its own and keeps the
// outcome of that result.
func (s *Session) beginStop(kind OutcomeKind, reason string, now time.Time) {
	if s.sv.cause != "" || s.sv.exit != nil || s.sv.stdinClosed {
		s.log.Debug("stop ignored: session already ending", "kind", kind, "reason", reason)
		return
	}
	s.sv.cause, s.sv.reason = kind, reason
	s.mark("stop_requested", now, map[string]any{
		"kind": string(kind), "reason": reason, "in_flight": len(s.InFlight())})
	s.failSend(ErrSessionClosed)
	if !s.sv.turnRunning {
		s.requestStdinClose(now)
		return
	}
	if s.sv.q == quiet {
		s.quiesce(now)
	}
}

// quiesce brings the running turn to an end at a safe point: first the
// tools in flight, then an interrupt.
func (s *Session) quiesce(now time.Time) {
	if len(s.InFlight()) > 0 || s.settling(now) {
		s.sv.q, s.sv.qStart, s.sv.qDeadline = draining, now, now.Add(s.spec.StopGrace)
		return
	}
	s.interrupt(now)
}

func (s *Session) interrupt(now time.Time) {
	s.sv.reqN++
	s.sv.interruptID = fmt.Sprintf("req_%d", s.sv.reqN)
	inflight := s.InFlight()
	if s.sv.cause != "" && s.sv.inflightAtStop == nil && len(inflight) > 0 {
		s.sv.inflightAtStop = inflight
	}
	s.enqueueWrite(interruptRequest(s.sv.interruptID), nil)
	s.mark("interrupt_sent", now, map[string]any{"request_id": s.sv.interruptID, "in_flight": len(inflight)})
	s.sv.q, s.sv.qDeadline = awaitingResult, now.Add(s.spec.KillGrace)
}

func (s *Session) onSend(req *sendRequest, now time.Time) {
	if s.sv.cause != "" || s.sv.exit != nil || s.sv.stdinClosed {
		req.reply <- ErrSessionClosed
		return
	}
	if !s.sv.turnRunning {
		s.writeUser(req.msg, req.reply, now)
		return
	}
	s.sv.sendPending = req
	if s.sv.q == quiet {
		s.quiesce(now)
	}
}

func (s *Session) onKill(now time.Time) {
	if s.sv.exit != nil {
		return
	}
	if s.sv.inflightAtStop == nil {
		s.sv.inflightAtStop = s.InFlight()
	}
	s.sv.cause, s.sv.reason = OutcomeKilled, "killed"
	s.mark("sigkill", now, map[string]any{"by": "kill"})
	s.sv.sigLevel, s.sv.escalateAt, s.sv.q = 3, time.Time{}, quiet
	s.sv.stdinClosed = true
	s.closeStdin()
	s.failSend(ErrSessionClosed)
}

func (s *Session) onExit(now time.Time) {
	ex := s.sv.exit
	s.sv.exited = true
	code, desc := exitStatus(ex.state)
	s.mark("exited", ex.at, map[string]any{"exit_code": code, "status": desc})
	s.mark("group_killed", ex.groupKilledAt, nil)
	s.sv.q = quiet
	s.closeStdin()
	s.failSend(ErrSessionClosed)
	// A process that left the group may still hold the pipes open; stop
	// reading once what is buffered has surely been read.
	deadline := now.Add(s.spec.KillGrace)
	_ = s.stdout.SetReadDeadline(deadline)
	_ = s.stderr.SetReadDeadline(deadline)
}

func (s *Session) watchdogs(now time.Time) {
	if s.sv.cause != "" || s.sv.exit != nil || s.sv.stdinClosed {
		return
	}
	if s.ctx.Err() != nil {
		s.beginStop(OutcomeCancelled, "cancelled", now)
		return
	}
	if d := s.spec.IdleTimeout; d > 0 {
		last := time.Unix(0, s.lastLine.Load())
		if now.Sub(last) >= d {
			s.sv.cause, s.sv.reason = OutcomeIdleTimeout, fmt.Sprintf("no output from claude for %s", d)
			s.mark("idle_timeout", now, map[string]any{"last_line": last})
			s.sv.inflightAtStop = s.InFlight()
			s.sv.q = quiet
			s.requestStdinClose(now)
			s.sv.escalateAt = now // no point waiting for a hung process
			return
		}
	}
	if d := s.spec.SessionTimeout; d > 0 && now.Sub(s.started) >= d {
		s.beginStop(OutcomeSessionTimeout, fmt.Sprintf("session ran longer than %s", d), now)
	}
}

// advance moves a stop or send in progress along and escalates signals.
func (s *Session) advance(now time.Time) {
	switch s.sv.q {
	case draining:
		inflight := s.InFlight()
		switch {
		case len(inflight) == 0 && s.settling(now) && now.Before(s.sv.qDeadline):
			// The response may still ask for a tool: let it, then drain it.
		case len(inflight) == 0:
			s.mark("tool_drained", now, map[string]any{"waited": now.Sub(s.sv.qStart), "timed_out": false})
			s.interrupt(now)
		case !now.Before(s.sv.qDeadline):
			ids := make([]string, len(inflight))
			for k, tu := range inflight {
				ids[k] = tu.ID
			}
			s.mark("tool_drained", now, map[string]any{"waited": now.Sub(s.sv.qStart), "timed_out": true, "in_flight": ids})
			s.interrupt(now)
		}
	case awaitingResult:
		if !now.Before(s.sv.qDeadline) {
			s.sv.q = quiet
			s.log.Warn("claude sent no result after an interrupt", "request_id", s.sv.interruptID, "waited", s.spec.KillGrace)
			if s.sv.cause != "" {
				s.requestStdinClose(now)
			} else {
				s.failSend(fmt.Errorf("no result within %s of the interrupt", s.spec.KillGrace))
			}
		}
	}
	if s.sv.exit != nil || s.sv.escalateAt.IsZero() || now.Before(s.sv.escalateAt) {
		return
	}
	s.closeStdin()
	if s.sv.cause != "" && s.sv.inflightAtStop == nil {
		s.sv.inflightAtStop = s.InFlight()
	}
	sig, name := syscall.SIGINT, "sigint"
	switch s.sv.sigLevel {
	case 1:
		sig, name = syscall.SIGTERM, "sigterm"
	case 2:
		sig, name = syscall.SIGKILL, "sigkill"
	}
	fields := map[string]any{"pgid": s.pgid}
	if err := s.signalGroup(sig); err != nil {
		fields["err"] = err.Error()
	}
	s.mark(name, now, fields)
	s.sv.sigLevel++
	s.sv.escalateAt = time.Time{}
	if s.sv.sigLevel < 3 {
		s.sv.escalateAt = now.Add(s.spec.KillGrace)
	}
}

func (s *Session) nextDeadline() (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if s.sv.q != quiet {
		consider(s.sv.qDeadline)
	}
	if s.sv.q == draining && s.sv.responseOpen {
		consider(s.settleUntil())
	}
	if s.sv.exit == nil {
		consider(s.sv.escalateAt)
		if s.sv.cause == "" && !s.sv.stdinClosed {
			if d := s.spec.IdleTimeout; d > 0 {
				consider(time.Unix(0, s.lastLine.Load()).Add(d))
			}
			if d := s.spec.SessionTimeout; d > 0 {
				consider(s.started.Add(d))
			}
		}
	}
	return next, !next.IsZero()
}

func (s *Session) mark(name string, at time.Time, fields map[string]any) {
	s.sv.marks = append(s.sv.marks, Mark{Name: name, At: at, Fields: fields})
	s.log.Debug("claude session", "mark", name, "fields", fields)
	if s.spec.OnMark != nil {
		s.spec.OnMark(name, at, fields)
	}
}

func (s *Session) finish() {
	s.sv.finished = true
	close(s.writes)
	s.stdout.Close()
	s.stderr.Close()

	s.mu.Lock()
	s.finished = true
	if s.sendReq != nil {
		s.sendReq.reply <- ErrSessionClosed
		s.sendReq = nil
	}
	tail := strings.ToValidUTF8(string(s.stderrTail), "?")
	runErr := s.readErr
	s.mu.Unlock()
	s.failSend(ErrSessionClosed)

	if s.logFile != nil {
		if err := s.logFile.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("close session log: %w", err)
		}
	}
	ex := s.sv.exit
	if ex.err != nil && runErr == nil {
		runErr = fmt.Errorf("wait for claude: %w", ex.err)
	}
	code, desc := exitStatus(ex.state)
	kind, reason := s.sv.cause, s.sv.reason
	if kind == "" {
		kind, reason = classify(s.sv.lastResult, desc)
	}
	marks := slices.Clone(s.sv.marks)
	sort.SliceStable(marks, func(a, b int) bool { return marks[a].At.Before(marks[b].At) })
	s.outcome = Outcome{
		Kind:           kind,
		Reason:         reason,
		Result:         s.sv.lastResult,
		ExitCode:       code,
		Stderr:         tail,
		Err:            runErr,
		Marks:          marks,
		InFlightAtStop: s.sv.inflightAtStop,
	}
	s.log.Debug("claude session ended", "kind", kind, "reason", reason, "exit_code", code)
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
