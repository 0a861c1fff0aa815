package runner

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	if m, _ := findMark(out, MarkToolDrained); m.Fields.TimedOut == nil || *m.Fields.TimedOut {
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
	if m, _ := findMark(out, MarkToolDrained); m.Fields.TimedOut == nil || !*m.Fields.TimedOut {
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
	if out.Kind != OutcomeStopped || out.ExitCode != -1 || !strings.Contains(fmtMark(out, MarkExited), "killed") {
		t.Errorf("outcome = %s exit %d, exited %s", out.Kind, out.ExitCode, fmtMark(out, MarkExited))
	}
}

func fmtMark(o Outcome, name MarkName) string {
	m, _ := findMark(o, name)
	if m.Fields.Status == nil {
		return ""
	}
	return *m.Fields.Status
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

// A cancel that the session does not honour within CancelGrace kills it:
// the fake answers no interrupt, and KillGrace alone would take 40 s.
func TestSessionCancelGraceKills(t *testing.T) {
	t.Parallel()
	spec, _ := fakeSpec(t, "ignore-sigint", nil)
	spec.CancelGrace = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := start(t, ctx, spec)
	drainWith(t, s, func(ev Event) {
		if ev.Kind == KindInit {
			cancel()
		}
	})
	out := wait(t, s)
	if out.Kind != OutcomeKilled || out.ExitCode != -1 {
		t.Errorf("outcome = %s %q exit %d", out.Kind, out.Reason, out.ExitCode)
	}
	if m, ok := findMark(out, MarkSigkill); !ok || m.Fields.By == nil || *m.Fields.By != "cancel_grace" {
		t.Errorf("sigkill mark = %+v; marks %v", m, markNames(out))
	}
	if !inOrder(markNames(out), []string{"stop_requested", "interrupt_sent", "sigkill", "exited"}) {
		t.Errorf("marks = %v", markNames(out))
	}
}
