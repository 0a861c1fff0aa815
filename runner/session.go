package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/debussy-dev/debussy/internal/procgroup"
)

// ErrClaudeNotFound is wrapped by Start when the claude binary is missing or
// not executable.
var ErrClaudeNotFound = errors.New("claude CLI not found")

// ErrClaudeNotProgram is wrapped by LookPath and Start when the claude
// binary is a file the system cannot run ("exec format error").
var ErrClaudeNotProgram = errors.New("claude_bin is not a program")

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
	// Settings are passed as one inline --settings: in a bounded run the
	// user's own (from extra_args) with the sandbox block over them;
	// command.go sets idleCompaction: false over all of it.
	Settings map[string]any
	// AllowedTools are permission rules passed as --allowedTools (one flag
	// each, so a rule may hold a space: "Bash(npm test:*)").
	AllowedTools []string
	Dir          string // working directory of claude
	Prompt       string // first user message, written to stdin
	// Wrapper runs claude inside another program: its argv goes first,
	// then claude's absolute path and arguments (the sandbox's bubblewrap,
	// up to its "--"). The wrapper leads the process group.
	Wrapper []string

	Env         []string          // base environment; nil means os.Environ(). CLAUDECODE is removed.
	SetEnv      map[string]string // added or overriding (DEBUSSY_RUN_ID, ...)
	PathPrepend string            // put first on PATH, so the agent can run `debussy done`
	// ShellEnvFile is where to write the CLAUDE_ENV_FILE script that puts
	// PathPrepend first on PATH again in the agent's shell (shellenv.go);
	// "" leaves CLAUDE_ENV_FILE alone.
	ShellEnvFile string

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
	// CancelGrace bounds a stop caused by cancelling Start's context: if
	// claude has not exited this long after the cancel, its group is
	// killed (OutcomeKilled). 0 leaves the stop bounded only by StopGrace
	// and KillGrace.
	CancelGrace time.Duration

	// HookTimeout is how long a hook call waits for the consumer's Answer
	// before the runner sends the default answer; default 10s.
	HookTimeout time.Duration
	// AllowCompact lets the CLI compact the conversation itself; by default
	// the runner's PreCompact answer blocks it, so a restart is the one way
	// a full context is handled.
	AllowCompact bool
	// KnownContext is an earlier session's get_context_usage answer: the
	// runner does not ask again unless init names another CLI version or
	// model (see KnownContext).
	KnownContext *KnownContext
	// FirstContact: no session of the run has had an answer from the API
	// yet. A connection that cannot open (refused, a name that does not
	// resolve, TLS) then ends the session after the CLI's third retry,
	// seconds in, as a setup failure (failure.Unreachable), instead of
	// after its tenth, minutes in.
	FirstContact bool
	// DisableHooks registers no hook callbacks: no KindHook events, and
	// stops take the interrupt path. It exists to measure the hooks' cost.
	DisableHooks bool

	// OnMark observes the stop timeline (see Mark). It is called from one
	// goroutine, in order, and must return quickly.
	OnMark func(Mark)
	Logger *slog.Logger
}

// Session is one running claude process.
type Session struct {
	spec        Spec
	log         *slog.Logger
	proc        *procgroup.Process
	sessionMark string // value of MarkEnv in the session's environment

	stdin, stdout, stderr *os.File
	logFile               *os.File
	closeStdinOnce        sync.Once

	events    chan Event
	done      chan struct{}
	wake      chan struct{}
	writes    chan writeOp
	stopWatch func() bool // ends the watch on Start's context

	sendMu sync.Mutex // one Send at a time

	mu         sync.Mutex // guards the fields up to the supervisor's
	inbox      []input
	inflight   []ToolUse // the machine's, published after each step
	stopAsked  bool
	killAsked  bool
	finished   bool
	stderrTail []byte
	readErr    error
	waitErr    error

	// Owned by the supervise goroutine.
	m         *machine
	ctxAsk    contextAsker
	marks     []Mark
	outbox    []Event
	sendReply chan error // the Send the machine is handling
	over      bool
	outcome   Outcome // set before done is closed
}

type writeOp struct {
	data  []byte
	reply chan error
	close bool
}

// Start runs claude with spec and writes the prompt.
//
// Cancelling ctx stops the session at a safe point, like RequestStop but
// with OutcomeCancelled, and kills it if it has not exited Spec.CancelGrace
// after the cancel. That is the one way an interruption reaches a session:
// the caller's root context is cancelled on Ctrl-C, so every caller gets
// the graceful stop without a watcher of its own; Kill is there for a
// caller that must end it now (a second Ctrl-C).
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
	if spec.HookTimeout <= 0 {
		spec.HookTimeout = defaultHookTimeout
	}
	logger := spec.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	if err := writeShellEnv(spec); err != nil {
		return nil, fmt.Errorf("start claude: %w", err)
	}
	var logFile *os.File
	if spec.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(spec.LogPath), 0o700); err != nil { // .debussy/ is private
			return nil, fmt.Errorf("start claude: create session log dir: %w", err)
		}
		// The raw stream is claude's own transcript, unredacted (tool
		// output, file contents): readable by the owner only.
		logFile, err = os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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
	argv := append([]string{bin}, claudeArgs(spec)...)
	if len(spec.Wrapper) > 0 {
		argv = append(append(slices.Clone(spec.Wrapper), path), argv[1:]...)
		path = spec.Wrapper[0]
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   argv,
		Dir:    spec.Dir,
		Env:    append(childEnv(spec), MarkEnv+"="+sessionMark),
		Stdin:  ends[0][0],
		Stdout: ends[1][1],
		Stderr: ends[2][1],
	}
	proc, err := procgroup.Start(cmd)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return fail(notFound(bin, err))
		}
		if errors.Is(err, syscall.ENOEXEC) {
			return fail(notProgram(bin, err))
		}
		return fail(fmt.Errorf("start claude: %w", err))
	}
	// The child has its copies; ours would keep the pipes open forever.
	ends[0][0].Close()
	ends[1][1].Close()
	ends[2][1].Close()

	started := time.Now()
	s := &Session{
		sessionMark: sessionMark,
		spec:        spec,
		log:         logger.With("pid", proc.Pid()),
		proc:        proc,
		stdin:       ends[0][1],
		stdout:      ends[1][0],
		stderr:      ends[2][0],
		logFile:     logFile,
		events:      make(chan Event, eventBuffer),
		done:        make(chan struct{}),
		wake:        make(chan struct{}, 1),
		writes:      make(chan writeOp, 64),
		m: newMachine(stopConfig{
			stopGrace:      spec.StopGrace,
			killGrace:      spec.KillGrace,
			idleTimeout:    spec.IdleTimeout,
			sessionTimeout: spec.SessionTimeout,
			cancelGrace:    spec.CancelGrace,
			started:        started,
			hooks:          !spec.DisableHooks,
			hookTimeout:    spec.HookTimeout,
			allowCompact:   spec.AllowCompact,
			unreachable:    unreachableWhere(spec),
		}),
	}
	s.log.Debug("claude started", "args", cmd.Args[1:], "dir", spec.Dir, "log", spec.LogPath)

	go s.readStdout()
	go s.readStderr()
	go s.waitLeader()
	go s.writeLoop()
	if !spec.DisableHooks {
		// Before the first message, or the first turn runs without them.
		s.enqueueWrite(initializeRequest(), nil)
	}
	// Also before the first message, unless an earlier session's answer is
	// known: the answer (the window, the CLI's own compaction point) comes
	// before the first response on 2.1.197, after it on 2.1.332 with a slow
	// API. Nothing waits for it; until it comes the window is pending.
	if ask := s.ctxAsk.start(started, spec.Model, spec.KnownContext); ask != nil {
		s.enqueueWrite(ask, nil)
	}
	s.enqueueWrite(userMessage(spec.Prompt), nil)
	s.stopWatch = context.AfterFunc(ctx, func() { s.push(input{kind: inCancel}) })
	go s.supervise()
	return s, nil
}

// Events delivers the parsed stdout lines. It is closed after the last one;
// the consumer must drain it (events queue without bound meanwhile, so a
// slow consumer never stalls claude's stdout).
func (s *Session) Events() <-chan Event { return s.events }

// PID is claude's process id, also its process group id.
func (s *Session) PID() int { return s.proc.Pid() }

// InFlight returns the main-thread tool uses that have no tool_result yet,
// as of the events delivered so far.
func (s *Session) InFlight() []ToolUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inflight)
}

// RequestStop asks the session to end at the next safe point: the next
// PostToolUse is answered with continue:false, so the CLI finishes the
// response's tools and ends the turn without another request (a turn
// without tools ends with its result). If the CLI has not taken the hook
// callbacks, or nothing comes within StopGrace, tools in flight may finish
// (up to StopGrace) and the turn is interrupted instead. Then its result is
// awaited, stdin closed, and the process group signalled if claude
// lingers. Every hook call after the stop is answered by the runner at
// once. Only the first call counts; it never blocks.
func (s *Session) RequestStop(reason string) {
	s.mu.Lock()
	first := !s.stopAsked
	s.stopAsked = true
	s.mu.Unlock()
	if first {
		s.push(input{kind: inStop, reason: reason})
	}
}

// Kill sends SIGKILL to the whole process group now.
func (s *Session) Kill() {
	// Signalled here rather than by the supervisor, so a kill never waits
	// behind a slow OnMark or event consumer.
	_ = s.proc.Kill()
	s.mu.Lock()
	first := !s.killAsked
	s.killAsked = true
	s.mu.Unlock()
	if first {
		s.push(input{kind: inKill})
	}
}

// Send writes msg as a user message in the same session. If a turn is
// running it first waits for tools in flight (up to StopGrace), interrupts
// the turn and waits for its result. It returns once the message is written.
func (s *Session) Send(msg string) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	reply := make(chan error, 1)
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return fmt.Errorf("send message: %w", ErrSessionClosed)
	}
	s.inbox = append(s.inbox, input{kind: inSend, msg: msg, reply: reply})
	s.mu.Unlock()
	s.poke()
	if err := <-reply; err != nil {
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

// push queues an input for the supervisor.
func (s *Session) push(in input) {
	s.mu.Lock()
	s.inbox = append(s.inbox, in)
	s.mu.Unlock()
	s.poke()
}

func (s *Session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
