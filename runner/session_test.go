package runner

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangGuard only turns a hung test into a failure; no test asserts timing.
const hangGuard = 2 * time.Minute

type harness struct {
	journal string
	logPath string
}

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeSpec runs this test binary as claude in the given scenario.
func fakeSpec(t *testing.T, scenario string, env map[string]string) (Spec, harness) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h := harness{
		journal: filepath.Join(dir, "journal"),
		logPath: filepath.Join(dir, ".debussy", "runs", "r1", "phase-1", "session-0.jsonl"),
	}
	set := map[string]string{
		"FAKE_CLAUDE":         scenario,
		"FAKE_CLAUDE_JOURNAL": h.journal,
		"GORACE":              "atexit_sleep_ms=0", // a -race fake would linger 1 s at exit
	}
	maps.Copy(set, env)
	return Spec{
		Bin:       exe,
		Dir:       dir,
		Prompt:    "do the thing",
		SetEnv:    set,
		LogPath:   h.logPath,
		StopGrace: 10 * time.Second,
		KillGrace: 10 * time.Second,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, h
}

func (h harness) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(h.journal)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// before reports whether journal line a occurs, and before b if b occurs.
func before(lines []string, a, b string) bool {
	ia, ib := slices.Index(lines, a), slices.Index(lines, b)
	return ia >= 0 && (ib < 0 || ia < ib)
}

func start(t *testing.T, ctx context.Context, spec Spec) *Session {
	t.Helper()
	s, err := Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func drain(t *testing.T, s *Session) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(hangGuard)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("events channel never closed")
		}
	}
}

func wait(t *testing.T, s *Session) Outcome {
	t.Helper()
	ch := make(chan Outcome, 1)
	go func() { ch <- s.Wait() }()
	select {
	case o := <-ch:
		return o
	case <-time.After(hangGuard):
		t.Fatal("Wait did not return")
	}
	return Outcome{}
}

func markNames(o Outcome) []string {
	var names []string
	for _, m := range o.Marks {
		names = append(names, m.Name)
	}
	return names
}

func findMark(o Outcome, name string) (Mark, bool) {
	for _, m := range o.Marks {
		if m.Name == name {
			return m, true
		}
	}
	return Mark{}, false
}

// inOrder reports whether want is a subsequence of got.
func inOrder(got, want []string) bool {
	k := 0
	for _, g := range got {
		if k < len(want) && g == want[k] {
			k++
		}
	}
	return k == len(want)
}

func kinds(evs []Event) []Kind {
	var ks []Kind
	for _, ev := range evs {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func lastResult(evs []Event) *Result {
	for k := len(evs) - 1; k >= 0; k-- {
		if evs[k].Kind == KindResult {
			return evs[k].Result
		}
	}
	return nil
}

func TestSessionReplaysFixtures(t *testing.T) {
	tests := []struct {
		name      string
		fixture   string
		exit      int
		want      OutcomeKind
		reason    string
		window    int64
		assistant int
	}{
		{name: "success", fixture: "success-simple.jsonl", want: OutcomeCompleted, window: 1_000_000, assistant: 2},
		{name: "sonnet 200k", fixture: "success-sonnet-200k.jsonl", want: OutcomeCompleted, window: 200_000, assistant: 3},
		{name: "prompt too long", fixture: "prompt-too-long.jsonl", exit: 1, want: OutcomeAPIError,
			reason: "Prompt is too long (API status 400)", window: 200_000, assistant: 2},
		{name: "sigint mid tool", fixture: "multiblock-then-sigint.jsonl", want: OutcomeAPIError,
			reason: "aborted_tools", window: 1_000_000, assistant: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, h := fakeSpec(t, "replay", map[string]string{
				"FAKE_CLAUDE_FIXTURE": fixturePath(t, tt.fixture),
				"FAKE_CLAUDE_EXIT":    strconv.Itoa(tt.exit),
			})
			s := start(t, t.Context(), spec)
			evs := drain(t, s)
			out := wait(t, s)

			if out.Kind != tt.want || !strings.Contains(out.Reason, tt.reason) {
				t.Errorf("outcome = %s %q, want %s containing %q", out.Kind, out.Reason, tt.want, tt.reason)
			}
			if out.ExitCode != tt.exit {
				t.Errorf("exit code = %d, want %d (stderr %q)", out.ExitCode, tt.exit, out.Stderr)
			}
			if out.Err != nil {
				t.Errorf("Err = %v", out.Err)
			}
			if out.Result == nil || out.Result.ModelUsage[lastModel(out.Result)].ContextWindow != tt.window {
				t.Errorf("last result %+v, want context window %d", out.Result, tt.window)
			}
			if n := countKind(evs, KindAssistant); n != tt.assistant {
				t.Errorf("assistant events = %d, want %d", n, tt.assistant)
			}
			// The session log is the raw stream, byte for byte.
			logged, err := os.ReadFile(h.logPath)
			if err != nil {
				t.Fatal(err)
			}
			fixture, _ := os.ReadFile(fixturePath(t, tt.fixture))
			if strings.TrimSpace(string(logged)) != strings.TrimSpace(string(fixture)) {
				t.Errorf("session log differs from the stream")
			}
			if len(evs) != len(strings.Split(strings.TrimSpace(string(fixture)), "\n")) {
				t.Errorf("got %d events for %s", len(evs), tt.fixture)
			}
			if !inOrder(markNames(out), []string{"stdin_closed", "exited", "group_killed"}) {
				t.Errorf("marks = %v", markNames(out))
			}
		})
	}
}

func lastModel(r *Result) string {
	for m := range r.ModelUsage {
		return m
	}
	return ""
}

func countKind(evs []Event, k Kind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func TestSessionMultiblockSharesMessageID(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "replay", map[string]string{"FAKE_CLAUDE_FIXTURE": fixturePath(t, "multiblock-then-sigint.jsonl")})
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	wait(t, s)
	var ids []string
	var tools []string
	for _, ev := range evs {
		if ev.Kind == KindAssistant {
			ids = append(ids, ev.Assistant.MessageID)
			for _, tu := range ev.Assistant.ToolUses {
				tools = append(tools, tu.Name)
			}
		}
	}
	want := []string{"msg_fake_0_0_1795299173771", "msg_fake_0_0_1795299173771", "msg_fake_0_0_1795299173771", "msg_fake_0_1_1795299173855"}
	if !slices.Equal(ids, want) {
		t.Errorf("message ids = %v, want %v", ids, want)
	}
	if !slices.Equal(tools, []string{"Write", "Bash", "Bash"}) {
		t.Errorf("tools = %v", tools)
	}
}

func drainWith(t *testing.T, s *Session, onEvent func(Event)) []Event {
	t.Helper()
	var evs []Event
	timeout := time.After(hangGuard)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
			onEvent(ev)
		case <-timeout:
			t.Fatal("events channel never closed")
		}
	}
}

func hasToolUse(ev Event, id string) bool {
	if ev.Kind != KindAssistant {
		return false
	}
	return slices.ContainsFunc(ev.Assistant.ToolUses, func(tu ToolUse) bool { return tu.ID == id })
}

func TestSessionStopWaitsForToolInFlight(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "tool", map[string]string{"FAKE_CLAUDE_TOOL_MS": "400"})
	s := start(t, t.Context(), spec)
	var inflightAtRequest []ToolUse
	drainWith(t, s, func(ev Event) {
		if hasToolUse(ev, "toolu_A") {
			inflightAtRequest = s.InFlight()
			s.RequestStop("context at 81%")
			s.RequestStop("second call is ignored")
		}
	})
	out := wait(t, s)

	if len(inflightAtRequest) != 1 || inflightAtRequest[0].ID != "toolu_A" || inflightAtRequest[0].Command != "go test ./..." {
		t.Errorf("InFlight at request = %+v", inflightAtRequest)
	}
	if out.Kind != OutcomeStopped || out.Reason != "context at 81%" {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	if len(out.InFlightAtStop) != 0 {
		t.Errorf("InFlightAtStop = %+v, want none: the tool had finished", out.InFlightAtStop)
	}
	j := h.lines(t)
	if !before(j, "emit tool_result toolu_A", "recv interrupt req_1 during-tool model") || slices.Contains(j, "recv interrupt req_1 during-tool toolu_A") {
		t.Errorf("the interrupt must come after the tool's result; journal = %q", j)
	}
	want := []string{"stop_requested", "tool_drained", "interrupt_sent", "interrupt_acked", "result_received", "stdin_closed", "exited", "group_killed"}
	if !inOrder(markNames(out), want) {
		t.Errorf("marks = %v, want in order %v", markNames(out), want)
	}
	if m, _ := findMark(out, "tool_drained"); m.Fields["timed_out"] != false {
		t.Errorf("tool_drained = %+v", m)
	}
	if out.ExitCode != 0 {
		t.Errorf("exit code %d, stderr %q", out.ExitCode, out.Stderr)
	}
}

func TestSessionStopGraceExpires(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "tool", map[string]string{"FAKE_CLAUDE_TOOL_MS": "0"}) // runs until interrupted
	spec.StopGrace = 200 * time.Millisecond
	s := start(t, t.Context(), spec)
	drainWith(t, s, func(ev Event) {
		if hasToolUse(ev, "toolu_A") {
			s.RequestStop("tool calls")
		}
	})
	out := wait(t, s)
	if out.Kind != OutcomeStopped {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	if len(out.InFlightAtStop) != 1 || out.InFlightAtStop[0].ID != "toolu_A" {
		t.Errorf("InFlightAtStop = %+v", out.InFlightAtStop)
	}
	if m, _ := findMark(out, "tool_drained"); m.Fields["timed_out"] != true {
		t.Errorf("tool_drained = %+v", m)
	}
	if !slices.Contains(h.lines(t), "recv interrupt req_1 during-tool toolu_A") {
		t.Errorf("journal = %q", h.lines(t))
	}
}

// The recorded interrupt-then-followup stream, driven by Send: the runner
// must produce the recorded stdin (prompt, interrupt, follow-up).
func TestSessionSendInterruptsThenFollowsUp(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "replay", map[string]string{"FAKE_CLAUDE_FIXTURE": fixturePath(t, "interrupt-then-followup.jsonl")})
	spec.StopGrace = 200 * time.Millisecond // the second tool sleeps 20 s
	s := start(t, t.Context(), spec)
	const followUp = "URGENT: context nearly full. Write HANDOFF.md now."
	sendErr := errors.New("not sent")
	evs := drainWith(t, s, func(ev Event) {
		if hasToolUse(ev, "toolu_msg_fake_0_1_1795299260495_0") {
			sendErr = s.Send(followUp)
		}
	})
	out := wait(t, s)
	if sendErr != nil {
		t.Fatalf("Send: %v", sendErr)
	}
	if out.Kind != OutcomeCompleted || out.Result == nil || out.Result.Text != "Handoff written." {
		t.Errorf("outcome = %s %q, result %+v", out.Kind, out.Reason, out.Result)
	}
	want := []string{"recv user do the thing", "recv interrupt req_1 expected", "recv user " + followUp, "recv eof"}
	if j := h.lines(t); !inOrder(j, want) {
		t.Errorf("journal = %q, want in order %q", j, want)
	}
	if n := countKind(evs, KindResult); n != 2 {
		t.Errorf("results = %d", n)
	}
	if !inOrder(markNames(out), []string{"tool_drained", "interrupt_sent", "interrupt_acked", "result_received", "follow_up_sent", "stdin_closed"}) {
		t.Errorf("marks = %v", markNames(out))
	}
}

func TestSessionEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "ignore-sigint", nil)
	spec.KillGrace = 150 * time.Millisecond
	s := start(t, t.Context(), spec)
	drainWith(t, s, func(ev Event) {
		if ev.Kind == KindInit {
			s.RequestStop("test")
		}
	})
	out := wait(t, s)
	want := []string{"stop_requested", "interrupt_sent", "stdin_closed", "sigint", "sigterm", "sigkill", "exited", "group_killed"}
	if !inOrder(markNames(out), want) {
		t.Errorf("marks = %v, want in order %v", markNames(out), want)
	}
	if out.Kind != OutcomeStopped || out.ExitCode != -1 || !strings.Contains(fmtMark(out, "exited"), "killed") {
		t.Errorf("outcome = %s exit %d, exited %s", out.Kind, out.ExitCode, fmtMark(out, "exited"))
	}
}

func fmtMark(o Outcome, name string) string {
	m, _ := findMark(o, name)
	s, _ := m.Fields["status"].(string)
	return s
}

func TestSessionLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "orphan", nil)
	s := start(t, t.Context(), spec)
	pgid := s.PID()
	drain(t, s)
	out := wait(t, s) // would hang if the orphan's stdout kept the pipe open
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	var orphan int
	for _, l := range h.lines(t) {
		if p, ok := strings.CutPrefix(l, "orphan "); ok {
			orphan, _ = strconv.Atoi(p)
		}
	}
	if orphan == 0 {
		t.Fatal("fake did not start its background process")
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(-%d, 0) = %v, want ESRCH: the group outlived Wait", pgid, err)
	}
	if err := syscall.Kill(orphan, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("background sleep %d still exists: %v", orphan, err)
	}
}

func TestSessionIdleTimeout(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "replay", map[string]string{
		"FAKE_CLAUDE_FIXTURE":  fixturePath(t, "api-retry-overloaded-killed.jsonl"),
		"FAKE_CLAUDE_DELAY_MS": "50", // api_retry lines keep the session alive
	})
	spec.IdleTimeout = time.Second
	spec.KillGrace = 200 * time.Millisecond
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	out := wait(t, s)
	if out.Kind != OutcomeIdleTimeout {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	if n := countKind(evs, KindSystem); n != 9 {
		t.Errorf("api_retry events = %d, want all 9 before the timeout", n)
	}
	if !inOrder(markNames(out), []string{"idle_timeout", "stdin_closed", "sigint", "exited"}) {
		t.Errorf("marks = %v", markNames(out))
	}
}

func TestSessionTimeoutStopsThenKills(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "hang", nil)
	spec.SessionTimeout = 200 * time.Millisecond
	spec.KillGrace = 200 * time.Millisecond
	s := start(t, t.Context(), spec)
	drain(t, s)
	out := wait(t, s)
	if out.Kind != OutcomeSessionTimeout || !strings.Contains(out.Reason, "200ms") {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	if !inOrder(markNames(out), []string{"stop_requested", "interrupt_sent", "stdin_closed", "sigint", "exited"}) {
		t.Errorf("marks = %v", markNames(out))
	}
}

func TestSessionContextCancel(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "tool", map[string]string{"FAKE_CLAUDE_TOOL_MS": "0"})
	spec.StopGrace = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := start(t, ctx, spec)
	drainWith(t, s, func(ev Event) {
		if hasToolUse(ev, "toolu_A") {
			cancel()
		}
	})
	out := wait(t, s)
	if out.Kind != OutcomeCancelled {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	if !slices.Contains(h.lines(t), "recv interrupt req_1 during-tool toolu_A") {
		t.Errorf("journal = %q", h.lines(t))
	}
}

func TestSessionKill(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "ignore-sigint", nil)
	s := start(t, t.Context(), spec)
	drainWith(t, s, func(ev Event) {
		if ev.Kind == KindInit {
			s.Kill()
		}
	})
	out := wait(t, s)
	if out.Kind != OutcomeKilled || out.ExitCode != -1 {
		t.Errorf("outcome = %s exit %d", out.Kind, out.ExitCode)
	}
	if err := s.Send("too late"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Send after the end = %v, want ErrSessionClosed", err)
	}
	s.RequestStop("after the end") // must not block or panic
	s.Kill()
	if again := s.Wait(); again.Kind != out.Kind || len(again.Marks) != len(out.Marks) {
		t.Errorf("second Wait = %+v", again)
	}
}

func TestSessionCrashWithoutResult(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "crash", nil)
	s := start(t, t.Context(), spec)
	drain(t, s)
	out := wait(t, s)
	if out.Kind != OutcomeCrashed || out.ExitCode != 3 || !strings.Contains(out.Reason, "exited with code 3") {
		t.Errorf("outcome = %s exit %d %q", out.Kind, out.ExitCode, out.Reason)
	}
	if !strings.Contains(out.Stderr, "fatal: boom") {
		t.Errorf("stderr = %q", out.Stderr)
	}
}

func TestSessionHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB line")
	}
	t.Parallel()
	spec, h := fakeSpec(t, "bigline", map[string]string{"FAKE_CLAUDE_BIG_MB": "100"})
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	out := wait(t, s)
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	var tu *ToolUse
	for _, ev := range evs {
		if ev.Kind == KindAssistant && len(ev.Assistant.ToolUses) == 1 {
			tu = &ev.Assistant.ToolUses[0]
			if ev.Size < 100<<20 {
				t.Errorf("event size = %d", ev.Size)
			}
		}
	}
	if tu == nil || tu.FilePath != "/home/dev/project/big.txt" || tu.Input != nil || tu.InputSize < 100<<20 {
		t.Fatalf("tool use = %+v", tu)
	}
	st, err := os.Stat(h.logPath)
	if err != nil || st.Size() < 100<<20 {
		t.Errorf("session log: %v, %d bytes", err, st.Size())
	}
}

func TestSessionSkipsNonJSONLines(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "garbage", nil)
	s := start(t, t.Context(), spec)
	evs := drain(t, s)
	out := wait(t, s)
	if got := kinds(evs); !slices.Equal(got, []Kind{KindInit, KindResult}) {
		t.Errorf("kinds = %v", got)
	}
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome = %s %q", out.Kind, out.Reason)
	}
	logged, _ := os.ReadFile(h.logPath)
	if !strings.Contains(string(logged), "this is not json\n") || !strings.Contains(string(logged), `"text":"cut her`+"\n") {
		t.Errorf("the session log must keep skipped lines:\n%s", logged)
	}
}

// Nobody reads Events until claude has finished: the runner must keep
// draining stdout or claude would block on a full pipe and Wait would hang.
func TestSessionDrainsPipeWithoutConsumer(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "flood", map[string]string{"FAKE_CLAUDE_LINES": "2000"}) // ~20 MB
	s := start(t, t.Context(), spec)
	out := wait(t, s)
	evs := drain(t, s)
	if out.Kind != OutcomeCompleted || len(evs) != 2002 {
		t.Errorf("outcome = %s, %d events", out.Kind, len(evs))
	}
}

func TestSessionArgsEnvDir(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "env", map[string]string{
		"FAKE_CLAUDE_FIXTURE": fixturePath(t, "success-simple.jsonl"),
		"DEBUSSY_RUN_ID":      "r1",
	})
	spec.Model = "claude-sonnet-4-5"
	spec.PermissionMode = "bypassPermissions"
	spec.ExtraArgs = []string{"--max-turns", "5"}
	spec.Env = []string{"PATH=/usr/bin:/bin", "CLAUDECODE=1", "KEEP=1", "DEBUSSY_RUN_ID=stale"}
	spec.PathPrepend = "/opt/debussy/bin"
	s := start(t, t.Context(), spec)
	drain(t, s)
	wait(t, s)
	j := h.lines(t)
	for _, want := range []string{
		"args -p --input-format stream-json --output-format stream-json --verbose --model claude-sonnet-4-5 --dangerously-skip-permissions --max-turns 5",
		"cwd " + spec.Dir,
		"env PATH=/opt/debussy/bin:/usr/bin:/bin",
		"env KEEP=1",
		"env DEBUSSY_RUN_ID=r1",
	} {
		if !slices.Contains(j, want) {
			t.Errorf("journal lacks %q:\n%s", want, strings.Join(j, "\n"))
		}
	}
	for _, l := range j {
		if strings.HasPrefix(l, "env CLAUDECODE") || l == "env DEBUSSY_RUN_ID=stale" {
			t.Errorf("journal has %q", l)
		}
	}
}

func TestStartClaudeNotFound(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "claude")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, bin string }{
		{"not on PATH", "claude-definitely-not-installed"},
		{"missing path", filepath.Join(dir, "nope", "claude")},
		{"not executable", plain},
		{"directory", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(t.Context(), Spec{Bin: tt.bin, Prompt: "x"})
			if !errors.Is(err, ErrClaudeNotFound) {
				t.Fatalf("err = %v, want ErrClaudeNotFound", err)
			}
			for _, hint := range []string{"--claude-bin", "DEBUSSY_CLAUDE_BIN"} {
				if !strings.Contains(err.Error(), hint) {
					t.Errorf("error %q does not mention %s", err, hint)
				}
			}
		})
	}
}

func TestClaudeArgs(t *testing.T) {
	base := "-p --input-format stream-json --output-format stream-json --verbose"
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{"defaults", Spec{}, base},
		{"model", Spec{Model: "claude-opus-4-8[1m]"}, base + " --model claude-opus-4-8[1m]"},
		{"bypass", Spec{PermissionMode: "bypassPermissions"}, base + " --dangerously-skip-permissions"},
		{"mode", Spec{PermissionMode: "acceptEdits"}, base + " --permission-mode acceptEdits"},
		{"extra", Spec{ExtraArgs: []string{"--append-system-prompt", "be brief"}}, base + " --append-system-prompt be brief"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(claudeArgs(tt.spec), " "); got != tt.want {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string
	}{
		{"drops CLAUDECODE", Spec{Env: []string{"A=1", "CLAUDECODE=1"}}, []string{"A=1"}},
		{"overrides", Spec{Env: []string{"A=1", "B=2"}, SetEnv: map[string]string{"B": "3", "C": "4"}}, []string{"A=1", "B=3", "C=4"}},
		{"path first", Spec{Env: []string{"PATH=/bin"}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d:/bin"}},
		{"no path", Spec{Env: []string{}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d"}},
		{"path from SetEnv", Spec{Env: []string{"PATH=/bin"}, SetEnv: map[string]string{"PATH": "/usr/bin"}, PathPrepend: "/opt/d"}, []string{"PATH=/opt/d:/usr/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childEnv(tt.spec); !slices.Equal(got, tt.want) {
				t.Errorf("env = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		result *Result
		want   OutcomeKind
		reason string
	}{
		{"no result", nil, OutcomeCrashed, "claude exited with code 1 without a result"},
		{"success", &Result{Subtype: "success"}, OutcomeCompleted, ""},
		{"prompt too long", &Result{Subtype: "success", IsError: true, APIErrorStatus: 400, Text: "Prompt is too long", TerminalReason: "prompt_too_long"},
			OutcomeAPIError, "Prompt is too long (API status 400), terminal reason prompt_too_long"},
		{"max turns", &Result{Subtype: "error_max_turns", IsError: true, NumTurns: 5}, OutcomeMaxTurns, "claude stopped at the turn limit after 5 turns"},
		{"aborted", &Result{Subtype: "error_during_execution", IsError: true}, OutcomeAPIError, "error_during_execution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, reason := classify(tt.result, "exited with code 1")
			if kind != tt.want || reason != tt.reason {
				t.Errorf("classify = %s %q, want %s %q", kind, reason, tt.want, tt.reason)
			}
		})
	}
}
