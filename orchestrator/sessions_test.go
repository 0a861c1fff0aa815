package orchestrator

import (
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
)

// What follows a session, in the order of precedence.
func TestAfterSession(t *testing.T) {
	completed := runner.Outcome{Kind: runner.OutcomeCompleted}
	stopped := runner.Outcome{Kind: runner.OutcomeStopped}
	crashed := runner.Outcome{Kind: runner.OutcomeCrashed, ExitCode: 3}
	tooLong := runner.Outcome{Kind: runner.OutcomeAPIError, Result: &runner.Result{IsError: true, Text: "Prompt is too long"}}
	tests := []struct {
		name      string
		end       sessionEnd
		signalled bool
		want      stepKind
		why       string
	}{
		{"completed", sessionEnd{outcome: completed}, false, stepFinish, ""},
		{"max turns", sessionEnd{outcome: runner.Outcome{Kind: runner.OutcomeMaxTurns}}, false, stepFinish, ""},
		{"Ctrl-C beats done", sessionEnd{outcome: stopped, interrupted: true, done: true}, true, stepInterrupted, ""},
		{"done beats a threshold's stop", sessionEnd{outcome: stopped, trigger: estimator.TriggerContext, reason: "ctx", done: true}, false, stepFinish, ""},
		{"a signal on disk beats a budget's stop", sessionEnd{outcome: stopped, trigger: policy.TriggerBudget}, true, stepFinish, ""},
		{"budget", sessionEnd{outcome: stopped, trigger: policy.TriggerBudget}, false, stepExhausted, ""},
		{"threshold", sessionEnd{outcome: stopped, trigger: estimator.TriggerContext, reason: "context 81 %"}, false, stepRestart, "context 81 %"},
		{"ended its turn while being stopped", sessionEnd{outcome: completed, trigger: estimator.TriggerContext, reason: "r"}, false, stepRestart, "r"},
		{"adaptive", sessionEnd{outcome: stopped, trigger: policy.TriggerAdaptive, reason: "adaptive"}, false, stepRestart, lessons("adaptive")},
		{"prompt too long", sessionEnd{outcome: tooLong}, false, stepRestart, "the context filled up (prompt too long)"},
		{"crash", sessionEnd{outcome: crashed}, false, stepRetry, describeOutcome(crashed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := afterSession(tt.end, tt.signalled)
			if got.kind != tt.want || (tt.why != "" && got.why != tt.why) {
				t.Fatalf("afterSession = %+v, want kind %d why %q", got, tt.want, tt.why)
			}
		})
	}
}
