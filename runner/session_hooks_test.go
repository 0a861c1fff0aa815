package runner

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Hook callbacks end to end against the fake CLI: the registration, the
// calls delivered as events in order, the answers written back.

func hookEvents(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == KindHook {
			out = append(out, string(ev.Hook.Event)+" "+ev.Hook.ToolUseID)
		}
	}
	return out
}

func TestSessionHooks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// react answers (or not) each event; s is the session.
		react       func(s *Session, ev Event)
		hookTimeout time.Duration
		wantKind    OutcomeKind
		wantReason  string
		wantJournal []string // in order
		notJournal  []string
		wantMarks   []string // in order
		notMarks    []string
	}{
		{
			name: "answers reach the CLI",
			react: func(_ *Session, ev Event) {
				if ev.Kind != KindHook {
					return
				}
				h := ev.Hook
				switch {
				case h.Event == HookPreToolUse && h.ToolUseID == "toolu_A":
					h.Answer(HookAnswer{Deny: "not now"})
				case h.Event == HookPostToolUse:
					h.Answer(HookAnswer{Note: "context at 71%"})
				case h.Event == HookStop && !h.StopHookActive:
					h.Answer(HookAnswer{Block: "run debussy done"})
				default:
					h.Answer(HookAnswer{})
				}
				h.Answer(HookAnswer{Deny: "a second answer is ignored"})
			},
			wantKind: OutcomeCompleted,
			wantJournal: []string{
				"recv initialize", "recv user do the thing",
				`answer PreToolUse {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not now"}}`,
				"tool toolu_A denied",
				"answer PreToolUse {}", "run toolu_B",
				`answer PostToolUse {"hookSpecificOutput":{"additionalContext":"context at 71%","hookEventName":"PostToolUse"}}`,
				`answer Stop {"decision":"block","reason":"run debussy done"}`,
				"answer Stop {}",
			},
			notJournal: []string{"run toolu_A"},
			notMarks:   []string{"hook_slow"},
		},
		{
			name: "a stop answers the next PostToolUse: the response's other tool still runs",
			react: func(s *Session, ev Event) {
				if hasToolUse(ev, "toolu_A") {
					s.RequestStop("context at 80%")
				}
				if ev.Kind == KindHook {
					ev.Hook.Answer(HookAnswer{})
				}
			},
			wantKind:   OutcomeStopped,
			wantReason: "context at 80%",
			wantJournal: []string{
				"run toolu_A", `answer PostToolUse {"continue":false,"stopReason":"context at 80%"}`,
				"run toolu_B", "hook stopped", "emit result", "recv eof",
			},
			notJournal: []string{"answer Stop {}"},
			wantMarks:  []string{"stop_requested", "hook_stop_sent", "result_received", "stdin_closed", "exited"},
			notMarks:   []string{"interrupt_sent", "sigint"},
		},
		{
			name: "a consumer's StopReason ends the session as stopped",
			react: func(_ *Session, ev Event) {
				if ev.Kind == KindHook && ev.Hook.Event == HookPostToolUse {
					ev.Hook.Answer(HookAnswer{StopReason: "handoff written"})
				} else if ev.Kind == KindHook {
					ev.Hook.Answer(HookAnswer{})
				}
			},
			wantKind:    OutcomeStopped,
			wantReason:  "handoff written",
			wantJournal: []string{`answer PostToolUse {"continue":false,"stopReason":"handoff written"}`, "run toolu_B", "hook stopped"},
			wantMarks:   []string{"stop_requested", "hook_stop_sent", "hook_stop_sent", "result_received"},
		},
		{
			name:        "a consumer that never answers gets the defaults after HookTimeout",
			react:       func(*Session, Event) {},
			hookTimeout: 50 * time.Millisecond,
			wantKind:    OutcomeCompleted,
			wantJournal: []string{"answer PreToolUse {}", "run toolu_A", "answer PostToolUse {}", "answer Stop {}"},
			wantMarks:   []string{"hook_slow", "hook_slow", "hook_slow", "hook_slow", "hook_slow"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec, h := fakeSpec(t, "hooks", nil)
			spec.HookTimeout = tt.hookTimeout
			s := start(t, t.Context(), spec)
			evs := drainWith(t, s, func(ev Event) { tt.react(s, ev) })
			out := wait(t, s)
			if out.Kind != tt.wantKind || out.Reason != tt.wantReason {
				t.Errorf("outcome %s %q, want %s %q", out.Kind, out.Reason, tt.wantKind, tt.wantReason)
			}
			j := h.lines(t)
			if !inOrder(j, tt.wantJournal) {
				t.Errorf("journal:\n%s\nwant in order:\n%s", strings.Join(j, "\n"), strings.Join(tt.wantJournal, "\n"))
			}
			for _, l := range tt.notJournal {
				if slices.Contains(j, l) {
					t.Errorf("journal has %q:\n%s", l, strings.Join(j, "\n"))
				}
			}
			if !inOrder(markNames(out), tt.wantMarks) {
				t.Errorf("marks %v, want in order %v", markNames(out), tt.wantMarks)
			}
			for _, m := range tt.notMarks {
				if slices.Contains(markNames(out), m) {
					t.Errorf("marks %v have %s", markNames(out), m)
				}
			}
			// Hook calls arrive in stream order: each PreToolUse after its tool_use.
			if got := hookEvents(evs); len(got) == 0 || got[0] != "PreToolUse toolu_A" {
				t.Errorf("hook events %v", got)
			}
			if out.ExitCode != 0 {
				t.Errorf("exit %d, stderr %q", out.ExitCode, out.Stderr)
			}
		})
	}
}

func TestSessionHookInitRefused(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "hooks", map[string]string{"FAKE_CLAUDE_INIT": "refuse"})
	s := start(t, t.Context(), spec)
	drainWith(t, s, func(ev Event) {
		if ev.Kind == KindHook {
			ev.Hook.Answer(HookAnswer{})
		}
	})
	out := wait(t, s)
	if out.Kind != OutcomeCompleted {
		t.Errorf("outcome %s %q", out.Kind, out.Reason)
	}
	if j := h.lines(t); !slices.Contains(j, "recv initialize") {
		t.Errorf("journal %q", j)
	}
}

func TestSessionDisableHooks(t *testing.T) {
	t.Parallel()
	spec, h := fakeSpec(t, "tool", map[string]string{"FAKE_CLAUDE_TOOL_MS": "10"})
	spec.DisableHooks = true
	s := start(t, t.Context(), spec)
	drain(t, s)
	if out := wait(t, s); out.Kind != OutcomeCompleted {
		t.Errorf("outcome %s %q", out.Kind, out.Reason)
	}
	for _, l := range h.lines(t) {
		if strings.Contains(l, "initialize") {
			t.Errorf("journal %q: hooks registered although disabled", l)
		}
	}
}
