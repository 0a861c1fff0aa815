package policy

import (
	"testing"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/failure"
)

// What follows a session, in the order of precedence.
func TestAfter(t *testing.T) {
	completed := Ended{Completed: true, Limits: Limits{Restarts: 3}}
	stopped := Ended{Stopped: true, Limits: Limits{Restarts: 3}}
	tooLong := Ended{Limits: Limits{Restarts: 3}, Failure: failure.Failure{Class: failure.PromptTooLong, Reason: "the context filled up (prompt too long)"}}
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

// Every row of AfterRows, played: the step each row's input leads to is
// the one the row shows.
func TestAfterRows(t *testing.T) {
	limit := failure.Failure{Class: failure.UsageLimit, LimitType: "seven_day_opus", Reason: "Opus limit"}
	stopped := Ended{Stopped: true, Trigger: estimator.TriggerContext, Reason: "context 81 %", Limits: Limits{Restarts: 2}}
	with := func(e Ended, f func(*Ended)) Ended { f(&e); return e }
	after := func(e Ended) func() string { return func() string { return After(e).Kind.String() } }
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	waits := func(resets time.Time, wait time.Duration) func() string {
		return func() string {
			if _, ok := ResetWait(resets, now, wait); ok {
				return "wait"
			}
			return "exit 75"
		}
	}
	remediate := func(attempt, max int) func() string {
		return func() string {
			if Remediate(attempt, max) {
				return "remediation"
			}
			return "failed"
		}
	}
	pick := func(c BudgetCheck) func() string { return func() string { return BudgetFirst(c).String() } }
	fuller := func(c BudgetCheck) func() string { return func() string { return c.Fuller().String() } }
	plays := map[string][]func() string{
		"ctrl-c":         {after(with(stopped, func(e *Ended) { e.Interrupted, e.Done = true, true }))},
		"done":           {after(with(stopped, func(e *Ended) { e.Done = true })), after(with(stopped, func(e *Ended) { e.Signalled = true; e.Restarts = 2 }))},
		"refused":        {after(Ended{Refused: "Not logged in", Completed: true})},
		"fallback":       {after(Ended{Failure: limit, Model: "opus", Limits: Limits{FallbackModel: "sonnet"}})},
		"usage limit":    {after(Ended{Failure: limit, Model: "sonnet", Limits: Limits{FallbackModel: "sonnet"}}), after(Ended{Failure: limit}), after(Ended{Failure: failure.Failure{Class: failure.UsageLimit, LimitType: "five_hour"}, Limits: Limits{FallbackModel: "sonnet"}})},
		"unreachable":    {after(Ended{Failure: failure.Failure{Class: failure.Unreachable}})},
		"budget":         {after(with(stopped, func(e *Ended) { e.Trigger = TriggerBudget; e.Restarts = 2 }))},
		"budget quarter": {pick(BudgetCheck{QuarterDue: true}), pick(BudgetCheck{QuarterDue: true, Phase: budget.LevelNote, Plan: budget.LevelExhausted})},
		"phase budget": {pick(BudgetCheck{}), pick(BudgetCheck{Phase: budget.LevelWrapUp, Plan: budget.LevelWrapUp}),
			pick(BudgetCheck{QuarterDue: true, Stopping: true, Phase: budget.LevelExhausted}), fuller(BudgetCheck{QuarterDue: true, Phase: budget.LevelNote})},
		"plan budget": {pick(BudgetCheck{Phase: budget.LevelNote, Plan: budget.LevelWrapUp}), fuller(BudgetCheck{QuarterDue: true, Plan: budget.LevelNote})},
		"completed":   {after(Ended{Completed: true})},
		"restart": {after(stopped), after(with(stopped, func(e *Ended) { e.Stopped, e.Completed, e.Restarts = false, true, 1 })),
			after(Ended{Failure: failure.Failure{Class: failure.PromptTooLong}, Limits: Limits{Restarts: 1}})},
		"restarts spent": {after(with(stopped, func(e *Ended) { e.Restarts = 2 })), after(with(stopped, func(e *Ended) { e.Limits.Restarts = 0 }))},
		"retry":          {after(Ended{Describe: "crashed"}), after(Ended{Describe: "crashed", Retries: MaxSessionRetries - 1})},
		"retries spent":  {after(Ended{Describe: "crashed", Retries: MaxSessionRetries})},
		"signal blocked": {func() string { return AfterAttempt("blocked", false).String() }},
		"signal failed":  {func() string { return AfterAttempt("failed", true).String() }},
		"no signal":      {func() string { return AfterAttempt("", true).String() }},
		"signal completed": {func() string { return AfterAttempt("completed", true).String() },
			func() string { return AfterAttempt("", false).String() }},
		"remediation":    {remediate(1, 1), remediate(2, 3)},
		"attempts spent": {remediate(1, 0), remediate(3, 2)},
		"wait":           {waits(now.Add(time.Hour), 2*time.Hour), waits(now.Add(-time.Minute), 0)},
		"exit 75":        {waits(time.Time{}, 2*time.Hour), waits(now.Add(3*time.Hour), 2*time.Hour), waits(now.Add(time.Hour), 0)},
	}
	for _, r := range AfterRows {
		ps, ok := plays[r.Name]
		if !ok {
			t.Errorf("row %q is not played", r.Name)
		}
		for i, play := range ps {
			if got := play(); got != r.Step {
				t.Errorf("row %q, play %d: step %q, want %q", r.Name, i, got, r.Step)
			}
		}
		delete(plays, r.Name)
	}
	for name := range plays {
		t.Errorf("play %q has no row", name)
	}
}

// The step carries the counts and the backoff the orchestrator shows and
// waits.
func TestAfterCounts(t *testing.T) {
	s := After(Ended{Stopped: true, Trigger: estimator.TriggerContext, Restarts: 1, Limits: Limits{Restarts: 3}})
	if s.Kind != StepRestart || s.N != 2 || s.Of != 3 {
		t.Fatalf("restart: %+v", s)
	}
	s = After(Ended{Retries: 1, Limits: Limits{RetryBackoff: 5 * time.Second}})
	if s.Kind != StepRetry || s.N != 2 || s.Wait != 10*time.Second {
		t.Fatalf("retry: %+v", s)
	}
	s = After(Ended{Retries: 2, Limits: Limits{Backoff: func(n int) time.Duration { return time.Duration(n) }}})
	if s.Wait != 3 {
		t.Fatalf("retry with Backoff: %+v", s)
	}
	if w := RetryWait(40*time.Second, 3); w != time.Minute {
		t.Fatalf("RetryWait capped at a minute: %s", w)
	}
	if w := RetryWait(2*time.Minute, 3); w != 2*time.Minute {
		t.Fatalf("RetryWait of a first wait beyond a minute: %s", w)
	}
}
