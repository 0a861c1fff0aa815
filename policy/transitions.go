package policy

import (
	"fmt"
	"slices"
	"strings"
)

// The states and the transition table, as data: docs/policy.md shows
// them as TransitionsMarkdown renders them (a test keeps the two equal),
// and transitions_test.go plays every row on a real Policy, so neither the
// doc nor the table can drift from the code.

// StateDoc is one state and what it means.
type StateDoc struct {
	State   State
	Meaning string
}

// States are the session's states, in the order a session meets them.
var States = []StateDoc{
	{Working, "below every threshold"},
	{Warned, fmt.Sprintf("told once that the context nears the threshold (T − %d %%), and that it may hand off itself at a task boundary", WarnBelow)},
	{HandoffRequested, "asked for its handoff: every other tool is refused with the request, which names the path"},
	{Stopping, "the next PostToolUse answers `continue: false` (the runner's interrupt is the fallback)"},
	{Done, "the agent ran `debussy done`: nothing restarts the session; a stop decided before it still ends the session, as done"},
}

// Transition is one row of the transition table.
type Transition struct {
	Name string // short, for tests; not shown
	// From are the states the input is taken in; nil is any state but
	// Except.
	From   []State
	Except []State
	Input  string
	// To is the state the input leads to; "" leaves the state as it was.
	To State
	// ToOr is another outcome under other settings, shown after To.
	ToOr    string
	Effects string // what is recorded and done, in words
	// Events are the events the policy records for the transition, in
	// order (others may come between). Effects names no other event but
	// the session's own.
	Events []string
	// Outside, when set, says why the input never reaches the policy (To
	// then shows "—"): no test of the policy can play it.
	Outside string
}

// Transitions is the table: every change of state a session makes, and
// the inputs that change none.
var Transitions = []Transition{
	{
		Name: "warning", From: []State{Working},
		Input: fmt.Sprintf("context ≥ T − %d %% (or as many points before C, when C is lower)", WarnBelow),
		To:    Warned, Effects: "note (once); `context_warning`",
		Events: []string{"context_warning"},
	},
	{
		Name: "threshold", From: []State{Working, Warned},
		Input: fmt.Sprintf("context ≥ T or ≥ C, the lower; a user-set `tool_call_threshold` (or %d calls without usage); "+
			"red zone with `zone_action: handoff`", FallbackToolCalls),
		To: HandoffRequested, ToOr: "stopping with `handoff: false`",
		Effects: "`trigger`, `handoff_requested`; the handoff's timer starts",
		Events:  []string{"trigger", "handoff_requested"},
	},
	{
		Name: "emergency", Except: []State{Stopping, Done},
		Input: fmt.Sprintf("context ≥ %d %% of a window known (or no longer awaited)", EmergencyPercent),
		To:    Stopping, Effects: "`emergency_stop`; no handoff counted",
		Events: []string{"emergency_stop", "stop_decided"},
	},
	{
		Name: "compaction", Except: []State{Stopping, Done},
		Input: "a compaction happened (`compact_boundary`) while not allowed",
		To:    Stopping, Effects: "`stop_decided`",
		Events: []string{"stop_decided"},
	},
	{
		Name: "handoff written", From: []State{HandoffRequested},
		Input: "PostToolUse with the handoff written (or `debussy handoff`)",
		To:    Stopping, Effects: "`handoff_written`",
		Events: []string{"handoff_written", "stop_decided"},
	},
	{
		Name: "agent handoff", From: []State{Working, Warned},
		Input: "PostToolUse of `debussy handoff` with its signal for this session on disk",
		To:    Stopping,
		Effects: "`handoff_written`, `agent_handoff`, `stop_decided` (trigger `agent_handoff`): a restart from the agent's handoff, " +
			"counted against max_restarts (with max_restarts 0 or spent, the phase fails)",
		Events: []string{"handoff_written", "agent_handoff", "stop_decided"},
	},
	{
		Name: "no handoff", From: []State{HandoffRequested},
		Input: "a refused call beyond `handoff_grace_calls`; `handoff_grace_time` passed; the agent ends its turn twice without it",
		To:    Stopping, Effects: "`emergency_stop`",
		Events: []string{"emergency_stop", "stop_decided"},
	},
	{
		Name: "doom loop", From: []State{Working, Warned, HandoffRequested},
		Input: "the 5th identical (call, result) within 20 calls that made no progress: each failed (`is_error`, judged from " +
			"the stream: a failed tool gets no PostToolUse) or nothing was written since the previous one",
		To: Stopping, Effects: "`nudge` (restart); the call goes under \"avoid\"",
		Events: []string{"nudge", "stop_decided"},
	},
	{
		Name: "budget", From: []State{Working, Warned, HandoffRequested},
		Input: "a budget reading at 100 % (strict) or an adaptive quarter's restart (`Budget`, `Quarter`)",
		To:    Stopping, Effects: "`budget_level` / `budget_quarter`, `stop_decided`",
		Events: []string{"stop_decided"},
	},
	{
		Name:  "done",
		Input: "PostToolUse of `debussy done` with the signal on disk; a Stop hook with the signal on disk (while stopping, the stop decided holds: the phase reads the signal after the session)",
		To:    Done, Effects: "`done_signal`",
		Events: []string{"done_signal"},
	},
	{
		Name: "ctrl-c", Input: "Ctrl-C",
		Effects: "the runner's stop (the context is cancelled); it beats everything",
		Outside: "the runner's: it cancels the session's context",
	},
	{
		Name: "restarts off", From: []State{Working, Warned}, Input: "max_restarts 0 and a threshold",
		Effects: "one warning in the log: nothing restarts",
	},
}

// FromStates are the states t's input is taken in.
func (t Transition) FromStates() []State {
	if t.From != nil {
		return t.From
	}
	var out []State
	for _, s := range States {
		if !slices.Contains(t.Except, s.State) {
			out = append(out, s.State)
		}
	}
	return out
}

// TransitionsMarkdown renders States and Transitions as docs/policy.md
// shows them: two sections, each a table.
func TransitionsMarkdown() string {
	var b strings.Builder
	b.WriteString("## States\n\n| state | meaning |\n|---|---|\n")
	for _, s := range States {
		row(&b, "`"+string(s.State)+"`", s.Meaning)
	}
	b.WriteString("\n## Transitions\n\n| from | input | to | effects |\n|---|---|---|---|\n")
	for _, t := range Transitions {
		row(&b, t.from(), t.Input, t.to(), t.Effects)
	}
	b.WriteString("\n" + AfterMarkdown())
	return b.String()
}

func (t Transition) from() string {
	switch {
	case t.From != nil:
		return joinStates(t.From)
	case t.Except != nil:
		return "any but " + joinStates(t.Except)
	}
	return "any"
}

func (t Transition) to() string {
	switch {
	case t.Outside != "":
		return "—"
	case t.To == "":
		return "unchanged"
	case t.ToOr != "":
		return string(t.To) + " (or " + t.ToOr + ")"
	}
	return string(t.To)
}

func joinStates(ss []State) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// row writes one table row; a "|" in a cell would end the cell.
func row(b *strings.Builder, cells ...string) {
	for _, c := range cells {
		b.WriteString("| " + strings.ReplaceAll(c, "|", `\|`) + " ")
	}
	b.WriteString("|\n")
}
