package policy

import (
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
)

// What follows a session, in the order of precedence.
func TestAfter(t *testing.T) {
	completed := Ended{Completed: true}
	stopped := Ended{Stopped: true}
	tooLong := Ended{Failure: failure.Failure{Class: failure.PromptTooLong, Reason: "the context filled up (prompt too long)"}}
	limit := Ended{Failure: failure.Failure{Class: failure.UsageLimit, Reason: "You've hit your 5-hour limit"}}
	unreachable := Ended{Failure: failure.Failure{Class: failure.Unreachable, Reason: "no API", Fix: "check"}, Describe: "api error"}
	with := func(e Ended, f func(*Ended)) Ended { f(&e); return e }
	tests := []struct {
		name string
		end  Ended
		want StepKind
		why  string
	}{
		{"completed", completed, StepFinish, ""},
		{"Ctrl-C beats done", with(stopped, func(e *Ended) { e.Interrupted, e.Done, e.Signalled = true, true, true }), StepInterrupted, ""},
		{"done beats a threshold's stop", with(stopped, func(e *Ended) { e.Trigger, e.Reason, e.Done = estimator.TriggerContext, "ctx", true }), StepFinish, ""},
		{"a signal on disk beats a budget's stop", with(stopped, func(e *Ended) { e.Trigger, e.Signalled = TriggerBudget, true }), StepFinish, ""},
		{"budget", with(stopped, func(e *Ended) { e.Trigger = TriggerBudget }), StepExhausted, ""},
		{"threshold", with(stopped, func(e *Ended) { e.Trigger, e.Reason = estimator.TriggerContext, "context 81 %" }), StepRestart, "context 81 %"},
		{"ended its turn while being stopped", with(completed, func(e *Ended) { e.Trigger, e.Reason = estimator.TriggerContext, "r" }), StepRestart, "r"},
		{"adaptive", with(stopped, func(e *Ended) { e.Trigger, e.Reason = TriggerAdaptive, "adaptive" }), StepRestart, "adaptive"},
		{"the agent's handoff restarts", with(stopped, func(e *Ended) { e.Trigger, e.Reason = TriggerAgentHandoff, AgentHandoffReason }), StepRestart, AgentHandoffReason},
		{"done beats the agent's handoff", with(stopped, func(e *Ended) { e.Trigger, e.Done = TriggerAgentHandoff, true }), StepFinish, ""},
		{"Ctrl-C beats the agent's handoff", with(stopped, func(e *Ended) { e.Trigger, e.Interrupted = TriggerAgentHandoff, true }), StepInterrupted, ""},
		{"prompt too long", tooLong, StepRestart, "the context filled up (prompt too long)"},
		{"crash", Ended{Describe: "crashed (exit code 3)"}, StepRetry, "crashed (exit code 3)"},
		{"usage limit", limit, StepUsageLimit, "You've hit your 5-hour limit"},
		{"done beats a usage limit", with(limit, func(e *Ended) { e.Done = true }), StepFinish, ""},
		{"not logged in", Ended{Refused: "Not logged in", Failure: failure.Failure{Class: failure.Auth}}, StepFailFast, "Not logged in"},
		{"unreachable before any answer", unreachable, StepFailFast, "no API: check"},
		{"unreachable after answers", with(unreachable, func(e *Ended) { e.Reached = true }), StepRetry, "api error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := After(tt.end)
			if got.Kind != tt.want || (tt.why != "" && got.Why != tt.why) {
				t.Fatalf("After = %+v, want kind %d why %q", got, tt.want, tt.why)
			}
		})
	}
}
