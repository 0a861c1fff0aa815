package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// LedgerVersion is the state.json format this package writes.
const LedgerVersion = 1

// Status is the state of a run, a phase or a signal. Runs use running,
// completed, failed, blocked and interrupted; phases also pending and
// skipped; signals completed, blocked and failed. It is a type of its own so
// a status cannot be passed where another kind of string is meant.
type Status string

const (
	StatusPending     Status = "pending"
	StatusRunning     Status = "running"
	StatusCompleted   Status = "completed"
	StatusFailed      Status = "failed"
	StatusBlocked     Status = "blocked"
	StatusInterrupted Status = "interrupted"
	StatusSkipped     Status = "skipped"
)

// ErrCorruptLedger means state.json exists but cannot be read. Nothing
// overwrites it: the user decides whether to repair or move it aside.
var ErrCorruptLedger = errors.New("corrupt ledger")

// Ledger is state.json: every run debussy made in this tree, oldest first.
type Ledger struct {
	Version int    `json:"version"`
	Runs    []*Run `json:"runs"`
}

// Run is one `debussy run` invocation.
type Run struct {
	ID        string         `json:"id"`
	Plan      string         `json:"plan"` // absolute path of the master plan
	Status    Status         `json:"status"`
	StartedAt time.Time      `json:"started_at"`
	EndedAt   time.Time      `json:"ended_at,omitzero"`
	PID       int            `json:"pid"`
	ExitCode  int            `json:"exit_code"`
	Phases    []*PhaseRecord `json:"phases"`
	// Economics is the run's spend against the plan's budget.
	Economics *Economics `json:"economics,omitempty"`
	// AfterFailure is set when a phase of a --parallel run failed while
	// others were running: what became of those is in their records.
	AfterFailure *AfterFailure `json:"after_failure,omitempty"`
}

// AfterFailure names the first phase of a --parallel run to fail and the
// phases running at that moment.
type AfterFailure struct {
	Phase string `json:"phase"`
	// FailFast: --fail-fast stopped the others at a safe point; else they
	// went on to their end.
	FailFast bool     `json:"fail_fast"`
	Running  []string `json:"running"`
}

// PhaseRecord is what one run did with one phase.
type PhaseRecord struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Status   Status `json:"status"`
	Attempts int    `json:"attempts"`
	Restarts int    `json:"restarts"`
	Sessions int    `json:"sessions"`
	// Tokens and CostUSD are what this run spent on the phase; PriorTokens
	// and PriorCostUSD what the earlier runs it resumed from spent, so a
	// run's figures add up to its sessions and the phase's across runs is
	// their sum (PhaseTokens, PhaseCostUSD).
	Tokens       int64   `json:"tokens"`
	CostUSD      float64 `json:"cost_usd"`
	PriorTokens  int64   `json:"prior_tokens,omitempty"`
	PriorCostUSD float64 `json:"prior_cost_usd,omitempty"`
	LastError    string  `json:"last_error,omitempty"`
	// Question is why the agent blocked the phase (its `debussy done
	// --status blocked --reason`), redacted: what `debussy answer` answers.
	Question string `json:"question,omitempty"`
	// Answered is the person's answer (redacted) this run resumed the
	// blocked phase with.
	Answered string `json:"answered,omitempty"`
	// Reason is what may leave the machine about LastError (the commit
	// trailer, GitHub's step summary): structured words or the agent's
	// own redacted line, never a command or tool output.
	Reason string `json:"reason,omitempty"`
	// Uncommitted is why the phase's work could not be committed at its
	// end (a lock held too long, a full disk): the files stay in the tree
	// for the next run to commit as the agent's, not as the user's.
	Uncommitted string `json:"uncommitted,omitempty"`
	// UncheckedGates are the phase's gates with no command: never run,
	// never reported as passed.
	UncheckedGates []string  `json:"unchecked_gates,omitempty"`
	BaseCommit     string    `json:"base_commit,omitempty"`
	Commits        []string  `json:"commits,omitempty"`
	Checkpoint     string    `json:"checkpoint,omitempty"` // path of the latest checkpoint json
	StartedAt      time.Time `json:"started_at,omitzero"`
	EndedAt        time.Time `json:"ended_at,omitzero"`
	// Measured for the README's numbers: how long a requested stop took, and
	// from a stop to the next session's first event.
	StopLatencyMs       []int64 `json:"stop_latency_ms,omitempty"`
	RestartTurnaroundMs []int64 `json:"restart_turnaround_ms,omitempty"`
	// Zone is the budget zone (green, yellow, red) the phase's latest
	// session reached; Zones lists it per session, in order.
	Zone  string   `json:"zone,omitempty"`
	Zones []string `json:"zones,omitempty"`
	// Nudges are what debussy told the agent about its own loops.
	Nudges []Nudge `json:"nudges,omitempty"`
	// Handoffs are the handoff files the agent wrote before a restart;
	// Emergencies the restarts that had to go without one.
	Handoffs    []string `json:"handoffs,omitempty"`
	Emergencies int      `json:"emergencies,omitempty"`
	// Economics is the phase's spend against its budget.
	Economics *Economics `json:"economics,omitempty"`
	// With --parallel: the phase's linked worktree and branch (kept until
	// it is merged, so a rerun resumes there) and the merge commit that
	// brought it into the user's branch.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Merge    string `json:"merge,omitempty"`
	// WaitingUntil is set while the phase waits for a usage limit to
	// reset (and kept when the run ended before it: a rerun before the
	// reset waits again instead of asking the API); Limit names the
	// limit (five_hour, seven_day, ...). UsageLimits counts the waits.
	WaitingUntil time.Time `json:"waiting_until,omitzero"`
	Limit        string    `json:"limit,omitempty"`
	UsageLimits  int       `json:"usage_limits,omitempty"`
	// Model is the model the phase switched to (fallback_model) once a
	// limit held for the configured one only.
	Model string `json:"model,omitempty"`
}

// PhaseTokens is what the phase has processed across its runs.
func (p *PhaseRecord) PhaseTokens() int64 { return p.PriorTokens + p.Tokens }

// PhaseCostUSD is what the phase has cost across its runs.
func (p *PhaseRecord) PhaseCostUSD() float64 { return p.PriorCostUSD + p.CostUSD }

// Nudge is one mid-session note about the agent's own loop: the same call
// repeated (doom_loop) or reading without acting (exploration).
type Nudge struct {
	Session int       `json:"session"`
	Kind    string    `json:"kind"`
	Tool    string    `json:"tool,omitempty"`
	Args    string    `json:"args,omitempty"`
	Count   int       `json:"count"`
	Restart bool      `json:"restart,omitempty"`
	At      time.Time `json:"at"`
}

// Load reads the ledger. A missing file is an empty ledger; an unreadable
// one is an error naming the file and wrapping ErrCorruptLedger.
func (s *Store) Load() (*Ledger, error) {
	path := s.ledgerPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Ledger{Version: LedgerVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	var l Ledger
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%w %s: %w (move it aside to start a new ledger)", ErrCorruptLedger, path, err)
	}
	if l.Version > LedgerVersion {
		return nil, fmt.Errorf("read ledger %s: version %d is newer than this debussy understands (%d)", path, l.Version, LedgerVersion)
	}
	for i, r := range l.Runs {
		if r == nil {
			return nil, fmt.Errorf("%w %s: runs[%d] is null", ErrCorruptLedger, path, i)
		}
	}
	if l.Version == 0 {
		l.Version = LedgerVersion
	}
	return &l, nil
}

// Save writes the ledger atomically. Only the orchestrator calls it, so there
// is no merge with concurrent writers.
func (s *Store) Save(l *Ledger) error {
	if l.Version == 0 {
		l.Version = LedgerVersion
	}
	// The path is in the message: a run stops on this error, and the
	// user has to find the file to fix its directory.
	if err := writeJSONAtomic(s.ledgerPath(), l); err != nil {
		return fmt.Errorf("save ledger %s: %w", s.ledgerPath(), err)
	}
	return nil
}

// Run returns the run with that id, or nil.
func (l *Ledger) Run(id string) *Run {
	for _, r := range l.Runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// Latest returns the most recently started run, or nil.
func (l *Ledger) Latest() *Run {
	var latest *Run
	for _, r := range l.Runs {
		if latest == nil || !r.StartedAt.Before(latest.StartedAt) {
			latest = r
		}
	}
	return latest
}

// LatestWorked returns the most recently started run in which a phase ran
// a session, or nil. A rerun of a finished plan skips every phase; the run
// before it is the one whose work there is to show.
func (l *Ledger) LatestWorked() *Run {
	var latest *Run
	for _, r := range l.Runs {
		if r.Worked() && (latest == nil || !r.StartedAt.Before(latest.StartedAt)) {
			latest = r
		}
	}
	return latest
}

// Worked reports whether any phase of the run ran a session.
func (r *Run) Worked() bool {
	for _, p := range r.Phases {
		if p.Sessions > 0 {
			return true
		}
	}
	return false
}

// NewestFirst returns every run, the most recently started first.
func (l *Ledger) NewestFirst() []*Run {
	runs := slices.Clone(l.Runs)
	// On equal start times a later ledger entry counts as newer.
	slices.Reverse(runs)
	slices.SortStableFunc(runs, func(a, b *Run) int { return b.StartedAt.Compare(a.StartedAt) })
	return runs
}

// Phase returns the record of that phase in this run, or nil.
func (r *Run) Phase(id string) *PhaseRecord {
	for _, p := range r.Phases {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// newestFirst yields the runs of planPath from the most recently started.
func (l *Ledger) newestFirst(planPath string) []*Run {
	plan := filepath.Clean(planPath)
	return slices.DeleteFunc(l.NewestFirst(), func(r *Run) bool { return filepath.Clean(r.Plan) != plan })
}

// LastCompleted returns the newest run of planPath in which phaseID
// completed, or nils.
func (l *Ledger) LastCompleted(planPath, phaseID string) (*Run, *PhaseRecord) {
	for _, r := range l.newestFirst(planPath) {
		if p := r.Phase(phaseID); p != nil && p.Status == StatusCompleted {
			return r, p
		}
	}
	return nil, nil
}

// LastUnfinished returns the newest record of phaseID in planPath's runs
// that ran a session but did not complete, so a rerun can
// resume from its commits and checkpoint. If the newest started record
// completed, there is nothing to resume and it returns nils.
func (l *Ledger) LastUnfinished(planPath, phaseID string) (*Run, *PhaseRecord) {
	for _, r := range l.newestFirst(planPath) {
		p := r.Phase(phaseID)
		if p == nil || p.Status == StatusPending || p.Status == StatusSkipped {
			continue
		}
		if p.Status == StatusCompleted {
			return nil, nil
		}
		if p.Sessions == 0 {
			// That run ended the phase before a session (a spent budget, a
			// setup error): an earlier run's work is what to resume from.
			continue
		}
		return r, p
	}
	return nil, nil
}
