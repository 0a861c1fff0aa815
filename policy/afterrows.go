package policy

import (
	"fmt"
	"strings"
)

// AfterRow is one row of the table of what follows a session (After), an
// attempt (AfterAttempt, Remediate) or a usage limit (ResetWait):
// docs/policy.md shows it as AfterMarkdown renders it, and after_test.go
// plays every row.
type AfterRow struct {
	Name    string // short, for tests; not shown
	Input   string
	Step    string // the StepKind's or Verdict's String, or the decision in words
	Effects string // what the orchestrator does for it
}

// AfterRows are the decisions after a session, in their precedence, then
// those after an attempt and about a usage limit's wait.
var AfterRows = []AfterRow{
	{Name: "ctrl-c", Input: "Ctrl-C (or `--fail-fast`) stopped the session", Step: StepInterrupted.String(),
		Effects: "commit, the phase ends interrupted (exit 130); a rerun resumes"},
	{Name: "done", Input: "the agent ran `debussy done`, or its signal is on disk (beats any stop decided on the same response)",
		Step: StepFinish.String(), Effects: "the attempt ends: the signal is read (below)"},
	{Name: "refused", Input: "claude refused what no retry changes (not logged in, …)", Step: StepFailFast.String(),
		Effects: "commit the agent's work, no \"failed\" commit, the session uncounted; exit 2"},
	{Name: "fallback", Input: "a usage limit on one model, `fallback_model` set and not the model running",
		Step: StepFallback.String(), Effects: "commit, checkpoint, go on at once with `fallback_model`; nothing counted"},
	{Name: "usage limit", Input: "any other usage limit", Step: StepUsageLimit.String(),
		Effects: "commit (its trailer names the reset), checkpoint, then the wait below; nothing counted"},
	{Name: "unreachable", Input: "the API unreachable and no session of the run ever got an answer", Step: StepFailFast.String(),
		Effects: "as refused: exit 2"},
	{Name: "budget", Input: "a budget's stop", Step: StepExhausted.String(),
		Effects: "the user may extend it (a new session, not counted against max_restarts), else the phase fails"},
	{Name: "budget quarter", Input: "a budget check (after each event, or a duration budget's timer): an adaptive phase budget at a quarter not evaluated yet, no stop decided",
		Step: PickQuarter.String(), Effects: "the quarter's evaluation first (`budget_quarter`): its restart, even at 100 %, replaces the budget's stop; else the fuller budget below"},
	{Name: "phase budget", Input: "a budget check: the phase budget's level at or above the plan's", Step: PickPhase.String(),
		Effects: "the phase's budget is the one told, refusing and stopping (`budget_level` scope phase)"},
	{Name: "plan budget", Input: "a budget check: the plan budget's level above the phase's", Step: PickPlan.String(),
		Effects: "the plan's budget is the one told, refusing and stopping (`budget_level` scope plan); each of its levels is told once to every phase"},
	{Name: "completed", Input: "the CLI ended its turn (or hit max turns) and no stop was decided", Step: StepFinish.String(),
		Effects: "the attempt ends: the signal is read (below)"},
	{Name: "restart", Input: "debussy's stop took (or the agent ended its turn while being stopped), or the prompt was too long; fewer than `max_restarts` restarts this attempt",
		Step: StepRestart.String(), Effects: "commit, checkpoint \"restart N of max_restarts\", a fresh session from it"},
	{Name: "restarts spent", Input: "a restart, with `max_restarts` restarts made this attempt (or max_restarts 0)",
		Step: StepRestartsSpent.String(), Effects: "the phase fails: max restarts exceeded, work committed (exit 1)"},
	{Name: "retry", Input: fmt.Sprintf("anything else (a crash, an API error, a hang): retries %d or fewer", MaxSessionRetries),
		Step: StepRetry.String(), Effects: "commit, checkpoint, wait `retry_backoff` doubling per retry up to 1 min, a fresh session"},
	{Name: "retries spent", Input: fmt.Sprintf("anything else, the session having failed %d times", MaxSessionRetries+1),
		Step: StepRetriesSpent.String(), Effects: "the phase fails (exit 1)"},
	{Name: "signal blocked", Input: "after the attempt: the signal's status is `blocked`", Step: VerdictBlocked.String(),
		Effects: "the phase ends blocked with the agent's question (exit 1); `--answer` resumes it"},
	{Name: "signal failed", Input: "after the attempt: the signal's status is `failed`", Step: VerdictAgentFailed.String(),
		Effects: "a remediation session with the agent's reason, if one is left"},
	{Name: "no signal", Input: "after the attempt: no signal and `require_done_signal`", Step: VerdictNoSignal.String(),
		Effects: "a remediation session asking for `debussy done`, if one is left"},
	{Name: "signal completed", Input: "after the attempt: the signal says completed, or none and it is not required",
		Step: VerdictGates.String(), Effects: "the gates run: passed and committed, the phase is completed; else a remediation, if one is left"},
	{Name: "remediation", Input: "an attempt that did not finish the phase, attempt ≤ `max_retries`", Step: "remediation",
		Effects: "commit, a remediation session with the evidence (the attempt counts)"},
	{Name: "attempts spent", Input: "an attempt that did not finish the phase, attempt > `max_retries`", Step: "failed",
		Effects: "the phase fails on that attempt (exit 1)"},
	{Name: "wait", Input: "a usage limit whose reset is known and within `usage_limit_wait` (also before a rerun's first session)",
		Step: "wait", Effects: "the ledger names the reset; wait until 5–30 s after it, then go on"},
	{Name: "exit 75", Input: "a usage limit whose reset is unknown or later than `usage_limit_wait` allows (0: never wait)",
		Step: "exit 75", Effects: "the phase ends interrupted, the ledger names the reset, no \"failed\" commit; the same command after the reset resumes"},
}

// AfterMarkdown renders AfterRows as docs/policy.md shows them.
func AfterMarkdown() string {
	var b strings.Builder
	b.WriteString("## After a session\n\n| input | step | effects |\n|---|---|---|\n")
	for _, a := range AfterRows {
		row(&b, a.Input, a.Step, a.Effects)
	}
	return b.String()
}
