package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Real-CLI tests of the runner: the real claude binary, our fake API, tools
// running for real in a temp git repo.

type e2e struct {
	t    *testing.T
	dir  string
	srv  *fakeapi.Server
	spec runner.Spec
	// leaveHooks leaves the hook calls react does not answer to the
	// runner's timeout; by default the session answers them with {}.
	leaveHooks bool
}

func newE2E(t *testing.T, script fakeapi.Script) *e2e {
	t.Helper()
	bin := claudetest.Bin(t)
	srv, err := fakeapi.Start(script)
	if err != nil {
		t.Fatalf("start fake api: %v", err)
	}
	t.Cleanup(srv.Close)
	dir := claudetest.GitRepo(t)
	return &e2e{t: t, dir: dir, srv: srv, spec: runner.Spec{
		Bin:            bin,
		Model:          "claude-sonnet-4-5",
		PermissionMode: "bypassPermissions",
		Dir:            dir,
		Env:            claudetest.Env(t, srv.URL()),
		LogPath:        filepath.Join(t.TempDir(), "session-0.jsonl"),
		// Generous guards: these tests must not hang, and must not flake on a
		// loaded 2-core machine either.
		IdleTimeout:    time.Minute,
		SessionTimeout: 2 * time.Minute,
		StopGrace:      30 * time.Second,
		KillGrace:      time.Second,
		Logger:         slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}}
}

type session struct {
	s      *runner.Session
	mu     sync.Mutex
	events []runner.Event
	closed chan struct{}
}

// start runs the session and drains its events; react sees each event as it
// arrives (in the draining goroutine: do not block in it).
func (e *e2e) start(prompt string, react func(*runner.Session, runner.Event)) *session {
	e.t.Helper()
	e.spec.Prompt = prompt
	s, err := runner.Start(context.Background(), e.spec)
	if err != nil {
		e.t.Fatalf("runner.Start: %v", err)
	}
	ss := &session{s: s, closed: make(chan struct{})}
	go func() {
		defer close(ss.closed)
		for ev := range s.Events() {
			ss.mu.Lock()
			ss.events = append(ss.events, ev)
			ss.mu.Unlock()
			if react != nil {
				react(s, ev)
			}
			if ev.Kind == runner.KindHook && !e.leaveHooks {
				ev.Hook.Answer(runner.HookAnswer{}) // a no-op if react answered
			}
		}
	}()
	return ss
}

func (ss *session) wait(t *testing.T) ([]runner.Event, runner.Outcome) {
	t.Helper()
	out := ss.s.Wait()
	<-ss.closed
	t.Logf("outcome %s (%s) exit %d err %v marks %v", out.Kind, out.Reason, out.ExitCode, out.Err, markNames(out.Marks))
	if out.Stderr != "" {
		t.Logf("stderr: %s", out.Stderr)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.events, out
}

func markNames(ms []runner.Mark) string {
	var names []string
	for _, m := range ms {
		names = append(names, string(m.Name))
	}
	return strings.Join(names, ",")
}

func assistants(evs []runner.Event) []*runner.Assistant {
	var out []*runner.Assistant
	for _, ev := range evs {
		if ev.Kind == runner.KindAssistant {
			out = append(out, ev.Assistant)
		}
	}
	return out
}

func toolResult(evs []runner.Event, id string) (runner.ToolResult, int, bool) {
	for i, ev := range evs {
		for _, tr := range ev.ToolResults {
			if tr.ToolUseID == id {
				return tr, i, true
			}
		}
	}
	return runner.ToolResult{}, -1, false
}

func firstToolUse(ev runner.Event, name string) (runner.ToolUse, bool) {
	if ev.Kind != runner.KindAssistant || !ev.Assistant.MainThread() {
		return runner.ToolUse{}, false
	}
	for _, tu := range ev.Assistant.ToolUses {
		if tu.Name == name {
			return tu, true
		}
	}
	return runner.ToolUse{}, false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("read %s: %v", filepath.Base(path), err)
	}
	return string(b)
}

func TestRunnerMultiBlockResponse(t *testing.T) {
	claudetest.CLISensitive(t, "the stream of a multi-block response")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "phase one",
		Turns: []fakeapi.Turn{
			{
				Usage: fakeapi.Usage{Input: 3000, CacheRead: 20000, CacheCreation: 500, Output: 40},
				Blocks: []fakeapi.Block{
					fakeapi.Text("I will write a file."),
					fakeapi.Write("a.txt", "hello\n"),
					fakeapi.Bash("cat a.txt > b.txt"),
				},
			},
			{Usage: fakeapi.Usage{Input: 4000, CacheRead: 23500, Output: 12}, Blocks: []fakeapi.Block{fakeapi.Text("PHASE COMPLETE")}},
		},
	}}})
	evs, out := e.start("phase one: write a.txt", nil).wait(t)

	if out.Kind != runner.OutcomeCompleted || out.Result == nil || out.Result.Text != "PHASE COMPLETE" {
		t.Fatalf("outcome %s %q result %+v", out.Kind, out.Reason, out.Result)
	}
	as := assistants(evs)
	if len(as) != 4 {
		t.Fatalf("%d assistant events, want 3 lines of one response + 1", len(as))
	}
	first := as[0]
	for i, a := range as[:3] {
		if a.MessageID != first.MessageID || a.Usage != first.Usage {
			t.Errorf("line %d: id %s usage %+v; want one response %s", i, a.MessageID, a.Usage, first.MessageID)
		}
	}
	if got := first.Usage.Context(); got != 23500 {
		t.Errorf("context = %d, want 3000+20000+500", got)
	}
	if first.Text != "I will write a file." || len(as[1].ToolUses) != 1 || len(as[2].ToolUses) != 1 {
		t.Fatalf("blocks: %q %+v %+v", first.Text, as[1].ToolUses, as[2].ToolUses)
	}
	if w := as[1].ToolUses[0]; w.Name != "Write" || w.FilePath != filepath.Join(e.dir, "a.txt") {
		t.Errorf("Write = %+v", w)
	}
	if b := as[2].ToolUses[0]; b.Name != "Bash" || b.Command != "cat a.txt > b.txt" {
		t.Errorf("Bash = %+v", b)
	}
	if as[3].MessageID == first.MessageID {
		t.Errorf("second response reuses message id")
	}
	for _, tu := range []runner.ToolUse{as[1].ToolUses[0], as[2].ToolUses[0]} {
		if tr, _, ok := toolResult(evs, tu.ID); !ok || tr.IsError {
			t.Errorf("tool %s result %+v found=%v", tu.Name, tr, ok)
		}
	}
	if got := readFile(t, filepath.Join(e.dir, "b.txt")); got != "hello\n" {
		t.Errorf("b.txt = %q", got)
	}
	if mu := out.Result.ModelUsage["claude-sonnet-4-5"]; mu.ContextWindow != 200000 {
		t.Errorf("modelUsage = %+v", out.Result.ModelUsage)
	}

	// The session log holds every raw line: the answer to the hook
	// registration first, then (after the answer to get_context_usage,
	// which the CLI may send before or after it) init.
	log, err := os.ReadFile(e.spec.LogPath)
	if err != nil {
		t.Fatalf("session log: %v", err)
	}
	lines := bytes.Split(bytes.TrimSpace(log), []byte("\n"))
	initAt := slices.IndexFunc(lines, func(l []byte) bool { return bytes.Contains(l, []byte(`"subtype":"init"`)) })
	// Only the events read from a line have one in the log: the runner's own
	// (a get_context_usage left unanswered for 15 s on a loaded machine)
	// have no raw line, Size 0.
	fromLines := slices.DeleteFunc(slices.Clone(evs), func(ev runner.Event) bool { return ev.Size == 0 })
	if len(lines) != len(fromLines) || !bytes.Contains(lines[0], []byte(`"request_id":"init_1"`)) || initAt < 1 || initAt > 2 {
		t.Errorf("session log: %d lines for %d events from lines; first %.80s", len(lines), len(fromLines), lines[0])
	}
}

// RequestStop during a slow tool: the tool finishes (its file exists), then
// the runner answers its PostToolUse with continue:false; the ending is
// "stopped" with nothing cut.
func TestRunnerStopWaitsForTool(t *testing.T) {
	claudetest.CLISensitive(t, "the PostToolUse answer during a slow tool")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "slow",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Bash(pause("2") + "; echo x > f")}},
			// Still "thinking" when the interrupt comes; the interrupt ends the delay.
			{Delay: fakeapi.Duration(30 * time.Second), Blocks: []fakeapi.Block{fakeapi.Text("too late")}},
		},
	}}})
	var bashID string
	var stopOnce sync.Once
	evs, out := e.start("slow work", func(s *runner.Session, ev runner.Event) {
		if tu, ok := firstToolUse(ev, "Bash"); ok {
			stopOnce.Do(func() {
				bashID = tu.ID
				s.RequestStop("context 80%")
			})
		}
	}).wait(t)

	if got := readFile(t, filepath.Join(e.dir, "f")); got != "x\n" {
		t.Errorf("f = %q: the stop cut the tool", got)
	}
	if out.Kind != runner.OutcomeStopped || out.Reason != "context 80%" {
		t.Errorf("outcome %s %q, want stopped \"context 80%%\"", out.Kind, out.Reason)
	}
	if len(out.InFlightAtStop) != 0 {
		t.Errorf("in flight at stop: %+v, want none (the tool was drained)", out.InFlightAtStop)
	}
	tr, at, ok := toolResult(evs, bashID)
	if !ok || tr.IsError {
		t.Fatalf("bash result %+v found=%v", tr, ok)
	}
	resultAt := -1
	for i, ev := range evs {
		if ev.Kind == runner.KindResult {
			resultAt = i
		}
	}
	if resultAt < at {
		t.Errorf("result at event %d, tool result at %d", resultAt, at)
	}
	// The hook stop ends the turn before the CLI's next request.
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d API requests, want 1: none after the stop", n)
	}
	if out.Result == nil || out.Result.TerminalReason != "hook_stopped" {
		t.Errorf("result %+v, want terminal_reason hook_stopped", out.Result)
	}
}

// Send while a tool runs past StopGrace: the runner interrupts (the tool is
// rejected, its side effect never happens), then the follow-up runs in the
// same session.
func TestRunnerSendMidTool(t *testing.T) {
	claudetest.CLISensitive(t, "an interrupt while a tool runs")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "long job",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Bash(pause("30") + " && echo late > late.txt")}},
			{Blocks: []fakeapi.Block{fakeapi.Write("HANDOFF.md", "# handoff\n")}},
			{Blocks: []fakeapi.Block{fakeapi.Text("Handoff written.")}},
		},
	}}})
	// Send lets a tool in flight finish for up to StopGrace first; the tool
	// takes 30 s, so a short grace makes the interrupt reject it. The
	// interrupted turn's result then comes within KillGrace: 1 s was too
	// short for a CLI on a loaded 2-core machine.
	e.spec.StopGrace = time.Second
	e.spec.KillGrace = 15 * time.Second
	sendErr := make(chan error, 1)
	var bashID string
	var once sync.Once
	evs, out := e.start("long job", func(s *runner.Session, ev runner.Event) {
		if tu, ok := firstToolUse(ev, "Bash"); ok {
			once.Do(func() {
				bashID = tu.ID
				// Send waits for the interrupted turn's result, which arrives
				// through this very event loop: call it elsewhere.
				go func() { sendErr <- s.Send("Context is nearly full: write HANDOFF.md now.") }()
			})
		}
	}).wait(t)

	if err := <-sendErr; err != nil {
		t.Fatalf("Send: %v", err)
	}
	if tr, _, ok := toolResult(evs, bashID); !ok || !tr.IsError {
		t.Errorf("bash result %+v found=%v, want rejected", tr, ok)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "late.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("late.txt exists (%v): the interrupted tool ran on", err)
	}
	if got := readFile(t, filepath.Join(e.dir, "HANDOFF.md")); got != "# handoff\n" {
		t.Errorf("HANDOFF.md = %q", got)
	}
	var results []*runner.Result
	for _, ev := range evs {
		if ev.Kind == runner.KindResult {
			results = append(results, ev.Result)
		}
	}
	if len(results) != 2 || !results[0].IsError || results[1].IsError || results[1].Text != "Handoff written." {
		t.Errorf("results: %+v", results)
	}
	if out.Kind != runner.OutcomeCompleted {
		t.Errorf("outcome %s %q, want completed", out.Kind, out.Reason)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 || reqs[1].Session != 0 || !strings.Contains(reqs[1].LastUser, "write HANDOFF.md now") {
		t.Errorf("requests: %d; second LastUser %q", len(reqs), reqs[min(1, len(reqs)-1)].LastUser)
	}
}

func TestRunnerPromptTooLong(t *testing.T) {
	claudetest.CLISensitive(t, "\"Prompt is too long\" in the stream")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "huge", Turns: []fakeapi.Turn{{Status: 400}},
	}}})
	_, out := e.start("huge context", nil).wait(t)
	if out.Kind != runner.OutcomeAPIError || out.Result == nil || out.Result.APIErrorStatus != 400 || !out.Result.IsError {
		t.Errorf("outcome %s %q result %+v", out.Kind, out.Reason, out.Result)
	}
}

func TestRunnerOverloadedRetry(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's retries on 529")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "busy", Turns: []fakeapi.Turn{{Status: 529, Repeat: 1, Blocks: []fakeapi.Block{fakeapi.Text("made it")}}},
	}}})
	evs, out := e.start("busy api", nil).wait(t)
	var retries []*runner.System
	for _, ev := range evs {
		if ev.Kind == runner.KindSystem && ev.Subtype == "api_retry" {
			retries = append(retries, ev.System)
		}
	}
	if len(retries) != 1 || retries[0].Attempt != 1 || retries[0].MaxRetries != 10 || retries[0].ErrorStatus != 529 {
		t.Errorf("api_retry events: %+v", retries)
	}
	if out.Kind != runner.OutcomeCompleted {
		t.Errorf("outcome %s %q", out.Kind, out.Reason)
	}
}

// A hung API request leaves the CLI silent; the idle watchdog kills the whole
// process group.
func TestRunnerIdleTimeout(t *testing.T) {
	claudetest.CLISensitive(t, "a silent CLI and its process group")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "hang", Turns: []fakeapi.Turn{{Hang: true}},
	}}})
	e.spec.IdleTimeout = 3 * time.Second
	e.spec.KillGrace = 500 * time.Millisecond
	ss := e.start("hang forever", nil)
	pid := ss.s.PID()
	_, out := ss.wait(t)
	if out.Kind != runner.OutcomeIdleTimeout {
		t.Errorf("outcome %s %q, want idle_timeout", out.Kind, out.Reason)
	}
	if alive(pid) {
		t.Errorf("claude (pid %d) still alive after Wait", pid)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d: %v, want ESRCH", pid, err)
	}
}

// A multi-MB Write is one multi-MB stdout line; it must parse.
func TestRunnerHugeWriteLine(t *testing.T) {
	claudetest.CLISensitive(t, "a multi-MB stream line")
	content := strings.Repeat("0123456789abcdef\n", 5<<20/17)
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "big file",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Write("big.txt", content)}},
			{Blocks: []fakeapi.Block{fakeapi.Text("wrote it")}},
		},
	}}})
	evs, out := e.start("write the big file", nil).wait(t)
	if out.Kind != runner.OutcomeCompleted {
		t.Fatalf("outcome %s %q", out.Kind, out.Reason)
	}
	var write *runner.Event
	for i, ev := range evs {
		if _, ok := firstToolUse(ev, "Write"); ok {
			write = &evs[i]
		}
	}
	if write == nil {
		t.Fatalf("no Write tool_use event among %d events", len(evs))
	}
	if tu, _ := firstToolUse(*write, "Write"); tu.FilePath != filepath.Join(e.dir, "big.txt") || write.Size < len(content) {
		t.Errorf("Write event: path %q line size %d, want a line over %d bytes", tu.FilePath, write.Size, len(content))
	}
	if got := readFile(t, filepath.Join(e.dir, "big.txt")); got != content {
		t.Errorf("big.txt has %d bytes, want %d", len(got), len(content))
	}
}

// The agent's Bash tool runs commands in a session of their own (measured:
// a new sid/pgid), so `sleep 300 &` escapes claude's process group and
// outlives claude unless the runner hunts it down. The sleep runs under sh
// -c: 2.1.330 refuses a command line that starts with `sleep N` ("Blocked:
// sleep 300 followed by: …").
func TestRunnerNoOrphanAfterWait(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's tool processes")
	e := newE2E(t, fakeapi.Script{Conversations: []fakeapi.Conversation{{
		Match: "background",
		Turns: []fakeapi.Turn{
			{Blocks: []fakeapi.Block{fakeapi.Bash("sh -c 'exec sleep 300' & echo $! > bg.pid; echo started")}},
			{Blocks: []fakeapi.Block{fakeapi.Text("started it")}},
		},
	}}})
	_, out := e.start("start a background job", nil).wait(t)
	pidText, err := os.ReadFile(filepath.Join(e.dir, "bg.pid"))
	if err != nil {
		t.Fatalf("bg.pid: %v (outcome %s)", err, out.Kind)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("bg.pid: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if out.Kind != runner.OutcomeCompleted {
		t.Errorf("outcome %s %q", out.Kind, out.Reason)
	}
	if alive(pid) {
		t.Errorf("background `sleep 300` (pid %d, %s) survived Wait", pid, procInfo(pid))
	}
}

// alive reports whether pid runs; a zombie (killed, not yet reaped by init)
// counts as dead.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) STATE ...: comm may hold spaces, so find the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func procInfo(pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "no /proc entry"
	}
	defer f.Close()
	var parts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && (k == "PPid" || k == "NSsid" || k == "NSpgid" || k == "State") {
			parts = append(parts, k+"="+strings.TrimSpace(v))
		}
	}
	return strings.Join(parts, " ")
}
