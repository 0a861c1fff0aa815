package record

import "time"

// The events the run itself records (package orchestrator), by name.

// RunStarted opens a run's log.
type RunStarted struct {
	Plan             string `json:"plan"`
	Phases           int    `json:"phases"`
	ContextThreshold int    `json:"context_threshold"`
	ContextWindow    int    `json:"context_window"`
	// ContextMaxTokens is context_max_tokens: the handoff comes at the
	// lower of it and the threshold (the report draws the one that acts).
	// Nil in runs recorded before it was.
	ContextMaxTokens *int `json:"context_max_tokens,omitempty"`
	// Settings are the rest of what the in-session policy decided on
	// (beside the threshold, the window and the cap above):
	// `debussy tune` replays the run's sessions at them. Nil in runs
	// recorded before they were kept.
	Settings *Settings `json:"settings,omitempty"`
}

// Settings are a run's policy settings as .debussy.yaml names them.
type Settings struct {
	Model             string `json:"model"`
	MaxRestarts       int    `json:"max_restarts"`
	ToolCallThreshold int    `json:"tool_call_threshold"`
	Handoff           bool   `json:"handoff"`
	HandoffGraceCalls int    `json:"handoff_grace_calls"`
	AllowCompaction   bool   `json:"allow_compaction"`
	RequireDoneSignal bool   `json:"require_done_signal"`
	ZoneAction        string `json:"zone_action"`
	// Zones are zone_tool_calls_yellow, _red, zone_large_reads_yellow,
	// _red, zone_delegations_yellow, _red, in that order.
	Zones [6]int `json:"zones"`
	// Nudges are nudge_repeat, nudge_repeat_window, nudge_repeat_restart,
	// nudge_explore_reads, nudge_cooldown, in that order.
	Nudges      [5]int `json:"nudges"`
	Enforcement string `json:"budget_enforcement"`
}

// RunEnded closes it.
type RunEnded struct {
	Status string `json:"status"`
}

// PhaseStarted is a phase's first session about to start (or its resume).
type PhaseStarted struct {
	Phase string `json:"phase"`
	Title string `json:"title"`
	Base  string `json:"base"`
}

// PhaseEnded is a phase's outcome; Sessions is set (0) only for a phase
// that ended before its first session.
type PhaseEnded struct {
	Phase    string `json:"phase"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Sessions *int   `json:"sessions,omitempty"`
}

// ResumeDiscarded is an earlier run's work no longer in git: the phase
// starts fresh.
type ResumeDiscarded struct {
	Phase string `json:"phase"`
	Run   string `json:"run"`
	Why   string `json:"why"`
}

// Remediation is another attempt at a phase after a failed one.
type Remediation struct {
	Phase   string `json:"phase"`
	Attempt int    `json:"attempt"`
	Problem string `json:"problem"`
}

// Answered is a blocked phase resumed with a person's answer.
type Answered struct {
	Phase   string `json:"phase"`
	Run     string `json:"run"`
	Attempt int    `json:"attempt"`
}

// AfterFailure is a phase failing while others run.
type AfterFailure struct {
	Phase    string   `json:"phase"`
	Running  []string `json:"running"`
	FailFast bool     `json:"fail_fast"`
}

// SessionSpawned is a session about to start.
type SessionSpawned struct {
	Phase       string `json:"phase"`
	Session     int    `json:"session"`
	PromptChars int    `json:"prompt_chars"`
}

// HookLatency is the CLI's wait for one hook's answers, in milliseconds.
// Its fields are in key order, as the map it replaces was written.
type HookLatency struct {
	Max float64 `json:"max"`
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// SessionEnded is how a session ended, and what it spent.
type SessionEnded struct {
	Phase           string                 `json:"phase"`
	Session         int                    `json:"session"`
	Outcome         string                 `json:"outcome"`
	Reason          string                 `json:"reason"`
	ExitCode        int                    `json:"exit_code"`
	Failure         string                 `json:"failure"`
	ContextTokens   int64                  `json:"context_tokens"`
	Percent         float64                `json:"percent"`
	ToolCalls       int                    `json:"tool_calls"`
	Zone            string                 `json:"zone"`
	PolicyState     string                 `json:"policy_state"`
	Trigger         string                 `json:"trigger"`
	StopReason      string                 `json:"stop_reason"`
	Done            bool                   `json:"done"`
	Tokens          int64                  `json:"tokens"`
	CostUSD         float64                `json:"cost_usd"`
	ReportedCostUSD float64                `json:"reported_cost_usd"`
	APITurns        int                    `json:"api_turns"`
	HookLatencyMs   map[string]HookLatency `json:"hook_latency_ms"`
}

// SessionRetry is a session that failed on its own, retried.
type SessionRetry struct {
	Phase string `json:"phase"`
	// Why is how the session ended in debussy's words; Error adds what
	// claude said with it (its message, its stderr), which stays local.
	Why     string `json:"why"`
	Error   string `json:"error,omitempty"`
	Failure string `json:"failure"`
	WaitMs  int64  `json:"wait_ms"`
	Retry   int    `json:"retry"`
}

// Commit is a commit of the phase's work; Kind says which (restart,
// retry, the end...).
type Commit struct {
	Phase  string `json:"phase"`
	Commit string `json:"commit"`
	Files  int    `json:"files"`
	Kind   string `json:"kind"`
}

// CommitFailed is a commit that failed: the work stays in the tree.
type CommitFailed struct {
	Phase string `json:"phase"`
	Error string `json:"error"`
}

// CommitRejected is a commit a git hook refused.
type CommitRejected struct {
	Phase    string `json:"phase"`
	Hook     string `json:"hook"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	Kind     string `json:"kind"`
}

// Checkpoint is the checkpoint written for the next session.
type Checkpoint struct {
	Phase string `json:"phase"`
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Files int    `json:"files"`
}

// Gate is one gate: unchecked (Unchecked, nothing else), or run.
type Gate struct {
	Phase      string  `json:"phase"`
	Gate       string  `json:"gate"`
	Unchecked  bool    `json:"unchecked,omitempty"`
	Command    *string `json:"command,omitempty"`
	ExitCode   *int    `json:"exit_code,omitempty"`
	TimedOut   *bool   `json:"timed_out,omitempty"`
	DurationMs *int64  `json:"duration_ms,omitempty"`
	OutputTail *string `json:"output_tail,omitempty"`
}

// Worktree is a parallel phase's work tree.
type Worktree struct {
	Phase   string `json:"phase"`
	Path    string `json:"path"`
	Branch  string `json:"branch"`
	Resumed bool   `json:"resumed"`
}

// WorktreeSetup is the worktree_setup command's run.
type WorktreeSetup struct {
	Phase      string `json:"phase"`
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out"`
	DurationMs int64  `json:"duration_ms"`
	Log        string `json:"log"`
}

// Merge is a parallel phase's branch merged into the user's.
type Merge struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	Files  int    `json:"files"` // how many, as a commit's
}

// MergeFailed is a merge that did not happen.
type MergeFailed struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Error  string `json:"error"`
}

// BaseMerge is a dependency's branch merged for --base deps.
type BaseMerge struct {
	Phase      string `json:"phase"`
	Dependency string `json:"dependency"`
	Branch     string `json:"branch"`
	Commit     string `json:"commit"`
}

// RemoteResume is --push's phase resumed from its remote branch.
type RemoteResume struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
}

// Push is a phase's branch pushed; Commit is unset for the final retry.
type Push struct {
	Phase  string  `json:"phase"`
	Branch string  `json:"branch"`
	Remote string  `json:"remote"`
	Commit *string `json:"commit,omitempty"`
}

// PushFailed is a push that failed (retried at the run's end).
type PushFailed struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Remote string `json:"remote"`
	Error  string `json:"error"`
}

// NotifyFailed is a notification not delivered.
type NotifyFailed struct {
	Kind         string `json:"kind"`
	To           string `json:"to"`
	Notification string `json:"notification"`
	Error        string `json:"error"`
}

// BudgetExtension is a person asked to extend a spent budget.
type BudgetExtension struct {
	Phase         string `json:"phase"`
	Scope         string `json:"scope"`
	Spent         string `json:"spent"`
	By            string `json:"by"`
	Granted       bool   `json:"granted"`
	Extension     int    `json:"extension"`
	MaxExtensions int    `json:"max_extensions"`
}

// BudgetWindow is an adaptive restart's fresh budget window.
type BudgetWindow struct {
	Phase   string  `json:"phase"`
	UsedPct float64 `json:"used_pct"`
}

// FallbackModel is the phase going on with the fallback model after a
// usage limit.
type FallbackModel struct {
	Phase  string    `json:"phase"`
	Limit  string    `json:"limit"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Resets time.Time `json:"resets"`
}

// UsageLimit is a usage limit reached: waited out until Until, or not.
type UsageLimit struct {
	Phase   string     `json:"phase"`
	Limit   string     `json:"limit"`
	Resets  time.Time  `json:"resets"`
	Waiting bool       `json:"waiting"`
	Until   *time.Time `json:"until,omitempty"`
}

// UsageLimitHold is a usage limit another job recorded in git.
type UsageLimitHold struct {
	Phase   string    `json:"phase"`
	Limit   string    `json:"limit"`
	Resets  time.Time `json:"resets"`
	Commit  string    `json:"commit"`
	ByPhase string    `json:"by_phase"`
}

// UsageLimitReset is the wait for a reset over.
type UsageLimitReset struct {
	Phase string `json:"phase"`
	Limit string `json:"limit"`
}

func (RunStarted) EventName() string      { return "run_started" }
func (RunEnded) EventName() string        { return "run_ended" }
func (PhaseStarted) EventName() string    { return "phase_started" }
func (PhaseEnded) EventName() string      { return "phase_ended" }
func (ResumeDiscarded) EventName() string { return "resume_discarded" }
func (Remediation) EventName() string     { return "remediation" }
func (Answered) EventName() string        { return "answered" }
func (AfterFailure) EventName() string    { return "after_failure" }
func (SessionSpawned) EventName() string  { return "session_spawned" }
func (SessionEnded) EventName() string    { return "session_ended" }
func (SessionRetry) EventName() string    { return "session_retry" }
func (Commit) EventName() string          { return "commit" }
func (CommitFailed) EventName() string    { return "commit_failed" }
func (CommitRejected) EventName() string  { return "commit_rejected" }
func (Checkpoint) EventName() string      { return "checkpoint" }
func (Gate) EventName() string            { return "gate" }
func (Worktree) EventName() string        { return "worktree" }
func (WorktreeSetup) EventName() string   { return "worktree_setup" }
func (Merge) EventName() string           { return "merge" }
func (MergeFailed) EventName() string     { return "merge_failed" }
func (BaseMerge) EventName() string       { return "base_merge" }
func (RemoteResume) EventName() string    { return "remote_resume" }
func (Push) EventName() string            { return "push" }
func (PushFailed) EventName() string      { return "push_failed" }
func (NotifyFailed) EventName() string    { return "notify_failed" }
func (BudgetExtension) EventName() string { return "budget_extension" }
func (BudgetWindow) EventName() string    { return "budget_window" }
func (FallbackModel) EventName() string   { return "fallback_model" }
func (UsageLimit) EventName() string      { return "usage_limit" }
func (UsageLimitHold) EventName() string  { return "usage_limit_hold" }
func (UsageLimitReset) EventName() string { return "usage_limit_reset" }
