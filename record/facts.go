package record

import "time"

// More of what a run records: each fact once, as the phase or the run
// states it; the recorder applies it to the ledger and hands it to the
// log, the live view, the notifier, the tracer and the pusher.

// Volatile is a fact that changes the ledger or tells a subscriber (the
// log, the live view, a span) but is no line of events.jsonl: commit
// bookkeeping, what is about to run, the live figures.
type Volatile interface {
	Event
	Volatile()
}

// PhaseSkipped is a phase the run does not do: completed already (Why),
// in git (its Commits) or .debussy/, or before --phase.
type PhaseSkipped struct {
	Phase   string   `json:"phase"`
	Why     string   `json:"why,omitempty"`
	Commits []string `json:"commits,omitempty"`
}

// PhaseResumed is a phase taken up from an earlier run's checkpoint (the
// checkpoint of kind resume that follows): that run (Run, where it
// stood), what the earlier runs spent, and the wait, model and handoff it
// carries over.
type PhaseResumed struct {
	Phase        string     `json:"phase"`
	Run          string     `json:"run"`
	Status       string     `json:"status"`
	PriorTokens  int64      `json:"prior_tokens,omitempty"`
	PriorCostUSD float64    `json:"prior_cost_usd,omitempty"`
	WaitingUntil *time.Time `json:"waiting_until,omitempty"`
	Limit        string     `json:"limit,omitempty"`
	Model        string     `json:"model,omitempty"`
	Handoff      string     `json:"handoff,omitempty"`
}

// StillBlocked is a phase blocked in run Run whose question nobody has
// answered: it stays blocked, and no session starts.
type StillBlocked struct {
	Phase    string `json:"phase"`
	Run      string `json:"run"`
	Question string `json:"question,omitempty"`
}

// Unanswered is a blocked phase resumed without the person's answer
// (--resume-blocked).
type Unanswered struct {
	Phase    string `json:"phase"`
	Run      string `json:"run"`
	Question string `json:"question,omitempty"`
}

// StaleRun is an earlier run found dead (killed, crashed) while recorded
// as running: it is interrupted now, its running phases too, or ended as
// git's commits say (Phases); Processes it left were killed.
type StaleRun struct {
	Run       string       `json:"run"`
	PID       int          `json:"pid"`
	Processes int          `json:"processes,omitempty"`
	Phases    []StalePhase `json:"phases,omitempty"`
}

// StalePhase is what became of a dead run's running phase.
type StalePhase struct {
	Phase  string `json:"phase"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	Commit string `json:"commit,omitempty"` // git's outcome commit, when git knew the end
}

// Restart is a phase's next session from a checkpoint: restart N of Of
// max_restarts, or a budget's extension (which max_restarts does not count).
type Restart struct {
	Phase     string `json:"phase"`
	Restart   int    `json:"restart"`
	Of        int    `json:"max_restarts"`
	Extension bool   `json:"extension,omitempty"`
}

// NoHandoff is a session stopped without the handoff that was due.
type NoHandoff struct {
	Phase   string `json:"phase"`
	Session int    `json:"session"`
}

// BudgetExhausted is a budget that ran out and ends the phase: Spent says
// whose (Scope: phase or plan), of what.
type BudgetExhausted struct {
	Phase string `json:"phase"`
	Scope string `json:"scope"`
	Spent string `json:"spent"`
}

// ExtensionSkipped is a spent budget not put to the user: max_extensions
// reached, or another phase's question extended it meanwhile.
type ExtensionSkipped struct {
	Phase         string `json:"phase"`
	Scope         string `json:"scope"`
	Meanwhile     bool   `json:"meanwhile,omitempty"`
	MaxExtensions int    `json:"max_extensions"`
}

// Warning is something debussy could not do that costs nothing of the
// work: a file not read or written, a list not made. What says it.
type Warning struct {
	Phase string `json:"phase,omitempty"`
	What  string `json:"what"`
	Error string `json:"error,omitempty"`
	Err   error  `json:"-"` // the error itself, for the log (its public form)
}

// LockWait is a commit waiting for a git process holding the
// repository's lock, for at most ForMs.
type LockWait struct {
	Phase string `json:"phase,omitempty"`
	ForMs int64  `json:"for_ms"`
	Error string `json:"error"`
	Err   error  `json:"-"` // the error itself, for the log (its public form)
}

// LeftoverCommit is the work a killed run left, committed as its own.
type LeftoverCommit struct {
	Phase  string `json:"phase,omitempty"`
	Run    string `json:"run"`
	Commit string `json:"commit"`
	Files  int    `json:"files"`
}

// Unstaged are .worktreeinclude copies the agent staged: kept out of the
// commit and the index.
type Unstaged struct {
	Phase string   `json:"phase"`
	Files []string `json:"files"`
}

// PushRejected is a push the remote refused because the branch moved on:
// fetched and merged, then tried again.
type PushRejected struct {
	Phase  string `json:"phase"`
	Branch string `json:"branch"`
	Try    int    `json:"try"`
}

// WorktreeDiscarded is a phase's worktree (and, Branch, the branch made
// for it) going away with nothing of the agent's in it: a rerun starts
// afresh.
type WorktreeDiscarded struct {
	Phase  string `json:"phase"`
	Branch bool   `json:"branch,omitempty"`
}

// CommitListed is a commit of the phase (of Run, another run's leftovers,
// when set) listed in the ledger before the branch moves to it, so a kill
// at any moment never leaves the branch at a commit .debussy/ does not
// list; CommitUnlisted takes it back out when it did not land.
type CommitListed struct {
	Run    string `json:"run,omitempty"`
	Phase  string `json:"phase"`
	Commit string `json:"commit"`
}

// CommitUnlisted: see CommitListed.
type CommitUnlisted struct {
	Run    string `json:"run,omitempty"`
	Phase  string `json:"phase"`
	Commit string `json:"commit"`
}

// CommitNothing is a commit with nothing to commit.
type CommitNothing struct {
	Phase      string `json:"phase"`
	Kind       string `json:"kind"`
	DurationMs int64  `json:"duration_ms,omitempty"`
}

// GateStarted is a gate about to run; NoGates a phase without any (the
// agent's done signal decides).
type GateStarted struct {
	Phase   string `json:"phase"`
	Gate    string `json:"gate"`
	Command string `json:"command"`
}

// NoGates: see GateStarted.
type NoGates struct {
	Phase string `json:"phase"`
}

// WorktreeSetupStarted is worktree_setup about to run in a phase's new
// worktree, its output going to Log.
type WorktreeSetupStarted struct {
	Phase   string `json:"phase"`
	Command string `json:"command"`
	Log     string `json:"log"`
}

// IncludesCopied are the .worktreeinclude files copied into a phase's
// worktree.
type IncludesCopied struct {
	Phase string `json:"phase"`
	Files int    `json:"files"`
}

func (PhaseSkipped) EventName() string      { return "phase_skipped" }
func (PhaseResumed) EventName() string      { return "phase_resumed" }
func (Unanswered) EventName() string        { return "unanswered" }
func (StillBlocked) EventName() string      { return "still_blocked" }
func (StaleRun) EventName() string          { return "stale_run" }
func (Restart) EventName() string           { return "restart" }
func (NoHandoff) EventName() string         { return "no_handoff" }
func (BudgetExhausted) EventName() string   { return "budget_exhausted" }
func (ExtensionSkipped) EventName() string  { return "extension_skipped" }
func (Warning) EventName() string           { return "warning" }
func (LockWait) EventName() string          { return "lock_wait" }
func (LeftoverCommit) EventName() string    { return "leftover_commit" }
func (Unstaged) EventName() string          { return "unstaged" }
func (PushRejected) EventName() string      { return "push_rejected" }
func (WorktreeDiscarded) EventName() string { return "worktree_discarded" }

func (CommitListed) EventName() string         { return "commit_listed" }
func (CommitUnlisted) EventName() string       { return "commit_unlisted" }
func (CommitNothing) EventName() string        { return "commit_nothing" }
func (GateStarted) EventName() string          { return "gate_started" }
func (NoGates) EventName() string              { return "no_gates" }
func (WorktreeSetupStarted) EventName() string { return "worktree_setup_started" }
func (IncludesCopied) EventName() string       { return "includes_copied" }

func (CommitListed) Volatile()         {}
func (CommitUnlisted) Volatile()       {}
func (CommitNothing) Volatile()        {}
func (GateStarted) Volatile()          {}
func (NoGates) Volatile()              {}
func (WorktreeSetupStarted) Volatile() {}
func (IncludesCopied) Volatile()       {}
