package record

import "time"

// The events the run itself records (package orchestrator), by name.

// RunStarted opens a run's log: the plan (its path and name), its phases in
// run order, and the process.
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
	// Name is the plan's; Order its phases in run order; PID the run's
	// process.
	Name  string         `json:"name,omitempty"`
	PID   int            `json:"pid,omitempty"`
	Order []PlannedPhase `json:"order,omitempty"`
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

// PlannedPhase is one phase of the plan as a run starts it: pending.
type PlannedPhase struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	// Unchecked are its gates with no command (never run).
	Unchecked []string `json:"unchecked_gates,omitempty"`
}

// RunEnded closes it: its status, the exit code the user saw and, when it
// did not complete, what may be published about why (Reason) and debussy's
// own error (Error).
type RunEnded struct {
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Error    string `json:"error,omitempty"`
}

// PhaseStarted is a phase's first session about to start (or its resume),
// in its Attempt (1, or the one after a blocked run's).
type PhaseStarted struct {
	Phase   string `json:"phase"`
	Title   string `json:"title"`
	Base    string `json:"base"`
	Attempt int    `json:"attempt,omitempty"`
	Short   string `json:"-"` // the title as the log shows it
}

// PhaseEnded is a phase's outcome. Sessions is set when the count it
// leaves differs from the sessions started: 0 for a phase that ended
// before its first session (NotStarted), one less for a session claude
// could not run. Reason is what may be published about Error; Question
// the blocked agent's (redacted); Uncommitted why its work could not be
// committed.
type PhaseEnded struct {
	Phase       string `json:"phase"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	Sessions    *int   `json:"sessions,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Question    string `json:"question,omitempty"`
	Uncommitted string `json:"uncommitted,omitempty"`
	NotStarted  bool   `json:"not_started,omitempty"`
	// Err is the error itself, for the log: its public form (outcome's,
	// public.OwnErr) is what a log of structure only shows.
	Err error `json:"-"`
}

// ResumeDiscarded is an earlier run's work no longer in git: the phase
// starts fresh.
type ResumeDiscarded struct {
	Phase string `json:"phase"`
	Run   string `json:"run"`
	Why   string `json:"why"`
}

// Remediation is another attempt at a phase after a failed one: the
// phase's Attempt (a blocked run's included), the run's Remediation count
// of MaxRetries.
type Remediation struct {
	Phase       string `json:"phase"`
	Attempt     int    `json:"attempt"`
	Problem     string `json:"problem"`
	Remediation int    `json:"remediation,omitempty"`
	MaxRetries  int    `json:"max_retries,omitempty"`
	// ProblemPublic is what may be published of Problem (outcome's), for
	// a log of structure only.
	ProblemPublic string `json:"-"`
}

// Answered is a blocked phase resumed with a person's answer (Text,
// redacted).
type Answered struct {
	Phase   string `json:"phase"`
	Run     string `json:"run"`
	Attempt int    `json:"attempt"`
	Text    string `json:"text,omitempty"`
}

// AfterFailure is a phase failing while others run.
type AfterFailure struct {
	Phase    string   `json:"phase"`
	Running  []string `json:"running"`
	FailFast bool     `json:"fail_fast"`
}

// SessionSpawned is a session about to start; TurnaroundMs is how long
// after the stop that triggered it (a restart), when one did.
type SessionSpawned struct {
	Phase        string `json:"phase"`
	Session      int    `json:"session"`
	PromptChars  int    `json:"prompt_chars"`
	TurnaroundMs *int64 `json:"restart_turnaround_ms,omitempty"`
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
	// StopLatencyMs is how long a requested stop took; PeakTokens the
	// highest context the session reached; Model the model it ran.
	StopLatencyMs *int64 `json:"stop_latency_ms,omitempty"`
	PeakTokens    int64  `json:"context_peak_tokens,omitempty"`
	Model         string `json:"model,omitempty"`
	// Described is the outcome in a few words, for the log, and
	// DescribedPublic what a log of structure only shows of it.
	Described       string `json:"-"`
	DescribedPublic string `json:"-"`
}

// SessionRetry is a session that failed on its own, retried.
type SessionRetry struct {
	Phase string `json:"phase"`
	// Why is how the session ended in debussy's words; Error adds what
	// claude said with it (its message, its stderr), which stays local.
	Why        string `json:"why"`
	Error      string `json:"error,omitempty"`
	Failure    string `json:"failure"`
	WaitMs     int64  `json:"wait_ms"`
	Retry      int    `json:"retry"`
	MaxRetries int    `json:"max_retries,omitempty"`
}

// Commit is a commit of the phase's work; Kind says which (restart,
// retry, the end...). DurationMs is how long committing took, hooks and
// lock waits included.
type Commit struct {
	Phase      string `json:"phase"`
	Commit     string `json:"commit"`
	Files      int    `json:"files"`
	Kind       string `json:"kind"`
	DurationMs int64  `json:"duration_ms,omitempty"`
}

// CommitFailed is a commit that failed: the work stays in the tree.
// Interrupted: Ctrl-C cut it (the rerun commits the work as the agent's).
// Err is the error itself, for the log (its public form).
type CommitFailed struct {
	Phase       string `json:"phase"`
	Error       string `json:"error"`
	Kind        string `json:"kind,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	DurationMs  int64  `json:"duration_ms,omitempty"`
	Err         error  `json:"-"`
}

// CommitRejected is a commit a git hook refused; Empty: the empty commit
// that records the phase's end (no work of the agent's refused).
type CommitRejected struct {
	Phase      string `json:"phase"`
	Hook       string `json:"hook"`
	ExitCode   int    `json:"exit_code"`
	Output     string `json:"output"`
	Kind       string `json:"kind"`
	Empty      bool   `json:"empty,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
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
	// For the log: the unchecked gate's requirement; whether it passed,
	// else the gates' problem in a line.
	Requirement   string `json:"-"`
	Passed        bool   `json:"-"`
	Problem       string `json:"-"`
	ProblemPublic string `json:"-"` // what a log of structure only shows of Problem
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

// MergeFailed is a merge that did not happen: the phase failed. Err is
// the error itself, for the log (its public form).
type MergeFailed struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Error  string `json:"error"`
	Reason string `json:"reason,omitempty"`
	Err    error  `json:"-"`
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
	Remote string `json:"remote,omitempty"`
}

// Push is a phase's branch pushed; Commit is unset for the final retry.
type Push struct {
	Phase  string  `json:"phase"`
	Branch string  `json:"branch"`
	Remote string  `json:"remote"`
	Commit *string `json:"commit,omitempty"`
}

// PushFailed is a push that failed: retried at the run's end, or (Final)
// that retry.
type PushFailed struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Remote string `json:"remote"`
	Error  string `json:"error"`
	Final  bool   `json:"final,omitempty"`
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

// UsageLimit is a usage limit reached: waited out until Until, or not;
// Session is the session that met it (0: a wait an earlier run or
// another job recorded).
type UsageLimit struct {
	Phase   string        `json:"phase"`
	Limit   string        `json:"limit"`
	Resets  time.Time     `json:"resets"`
	Waiting bool          `json:"waiting"`
	Until   *time.Time    `json:"until,omitempty"`
	Session int           `json:"session,omitempty"`
	Wait    time.Duration `json:"-"` // usage_limit_wait, for the log
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
