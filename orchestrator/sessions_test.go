package orchestrator

import (
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
)

// What follows a session, in the order of precedence.
func TestAfterSession(t *testing.T) {
	completed := runner.Outcome{Kind: runner.OutcomeCompleted}
	stopped := runner.Outcome{Kind: runner.OutcomeStopped}
	crashed := runner.Outcome{Kind: runner.OutcomeCrashed, ExitCode: 3}
	tooLong := runner.Outcome{Kind: runner.OutcomeAPIError, Result: &runner.Result{IsError: true, Text: "Prompt is too long"},
		Failure: failure.Failure{Class: failure.PromptTooLong, Reason: "the context filled up (prompt too long)"}}
	limit := runner.Outcome{Kind: runner.OutcomeAPIError, Failure: failure.Failure{Class: failure.UsageLimit, Reason: "You've hit your 5-hour limit"}}
	unreachable := runner.Outcome{Kind: runner.OutcomeAPIError, Failure: failure.Failure{Class: failure.Unreachable, Reason: "no API", Fix: "check"}}
	authed := runner.Outcome{Kind: runner.OutcomeRefused, Reason: "Not logged in", Fix: failure.FixLogin, Failure: failure.Failure{Class: failure.Auth}}
	tests := []struct {
		name      string
		end       sessionEnd
		signalled bool
		want      stepKind
		why       string
		reached   bool
	}{
		{"completed", sessionEnd{outcome: completed}, false, stepFinish, "", false},
		{"max turns", sessionEnd{outcome: runner.Outcome{Kind: runner.OutcomeMaxTurns}}, false, stepFinish, "", false},
		{"Ctrl-C beats done", sessionEnd{outcome: stopped, interrupted: true, done: true}, true, stepInterrupted, "", false},
		{"done beats a threshold's stop", sessionEnd{outcome: stopped, trigger: estimator.TriggerContext, reason: "ctx", done: true}, false, stepFinish, "", false},
		{"a signal on disk beats a budget's stop", sessionEnd{outcome: stopped, trigger: policy.TriggerBudget}, true, stepFinish, "", false},
		{"budget", sessionEnd{outcome: stopped, trigger: policy.TriggerBudget}, false, stepExhausted, "", false},
		{"threshold", sessionEnd{outcome: stopped, trigger: estimator.TriggerContext, reason: "context 81 %"}, false, stepRestart, "context 81 %", false},
		{"ended its turn while being stopped", sessionEnd{outcome: completed, trigger: estimator.TriggerContext, reason: "r"}, false, stepRestart, "r", false},
		{"adaptive", sessionEnd{outcome: stopped, trigger: policy.TriggerAdaptive, reason: "adaptive"}, false, stepRestart, lessons("adaptive"), false},
		{"the agent's handoff restarts", sessionEnd{outcome: stopped, trigger: policy.TriggerAgentHandoff, reason: policy.AgentHandoffReason, handoff: "h"}, false, stepRestart, policy.AgentHandoffReason, false},
		{"done beats the agent's handoff", sessionEnd{outcome: stopped, trigger: policy.TriggerAgentHandoff, done: true}, false, stepFinish, "", false},
		{"Ctrl-C beats the agent's handoff", sessionEnd{outcome: stopped, trigger: policy.TriggerAgentHandoff, interrupted: true}, false, stepInterrupted, "", false},
		{"prompt too long", sessionEnd{outcome: tooLong}, false, stepRestart, "the context filled up (prompt too long)", false},
		{"crash", sessionEnd{outcome: crashed}, false, stepRetry, describeOutcome(crashed), false},
		{"usage limit", sessionEnd{outcome: limit}, false, stepUsageLimit, "You've hit your 5-hour limit", false},
		{"done beats a usage limit", sessionEnd{outcome: limit, done: true}, false, stepFinish, "", false},
		{"not logged in", sessionEnd{outcome: authed}, false, stepFailFast, "", false},
		{"unreachable before any answer", sessionEnd{outcome: unreachable}, false, stepFailFast, "no API: check", false},
		{"unreachable after answers", sessionEnd{outcome: unreachable}, false, stepRetry, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := afterSession(tt.end, tt.signalled, tt.reached)
			if got.kind != tt.want || (tt.why != "" && got.why != tt.why) {
				t.Fatalf("afterSession = %+v, want kind %d why %q", got, tt.want, tt.why)
			}
		})
	}
}
