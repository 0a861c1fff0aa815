// Package checkpoint turns what happened in a phase's sessions — stream
// events, git facts, plan tasks — into the note that heads a restarted
// session's prompt. It is pure: no I/O, no clock, no git.
package checkpoint

import (
	"slices"
	"strings"
)

// Kinds of fresh session a checkpoint introduces.
const (
	KindRestart = "restart" // a threshold stopped the previous session
	KindResume  = "resume"  // a new debussy run picks the phase up again
	KindRetry   = "retry"   // a new attempt after a failed gate or missing signal
)

// FileChange is one line of git's name-status since the phase began.
type FileChange struct {
	Status string `json:"status"` // A, M, D, R100 …
	Path   string `json:"path"`
}

// Task is a checklist item of the phase file.
type Task struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
	Line int    `json:"line,omitempty"`
}

// Input holds the facts the orchestrator knows from git, the plan and the
// ledger.
type Input struct {
	RunID      string       `json:"run_id"`
	PhaseID    string       `json:"phase_id"`
	PhaseTitle string       `json:"phase_title,omitempty"`
	PhaseFile  string       `json:"phase_file,omitempty"`
	Kind       string       `json:"kind"` // KindRestart, KindResume, KindRetry; "" means restart
	Restart    int          `json:"restart"`
	RestartsOf int          `json:"max_restarts"`
	Reason     string       `json:"reason,omitempty"` // e.g. "context 83 % of 200K ≥ 80 %"
	Commit     string       `json:"commit,omitempty"` // the checkpoint commit, if any
	Files      []FileChange `json:"files,omitempty"`
	Tasks      []Task       `json:"tasks,omitempty"`
	Progress   []string     `json:"progress,omitempty"` // the agent's `debussy progress` lines
	// TokensSoFar and CostSoFar, when non-zero, replace the recorder's
	// totals (a resume reads them from the ledger).
	TokensSoFar int64   `json:"tokens_so_far,omitempty"`
	CostSoFar   float64 `json:"cost_so_far_usd,omitempty"`

	// Handoff is what the agent wrote when asked to (HandoffTemplate), as
	// written; Build bounds and redacts it. NoHandoff says why there is
	// none when one was asked for, e.g. "the agent did not write its
	// handoff within 2 tool calls".
	Handoff     string `json:"handoff,omitempty"`
	HandoffPath string `json:"handoff_path,omitempty"`
	NoHandoff   string `json:"no_handoff,omitempty"`
	// Avoid lists calls the agent repeated in a loop ("Bash {...}").
	Avoid []string `json:"avoid,omitempty"`
	// Exists reports whether a file the handoff names exists (a relative
	// path is the repository's); nil skips the check. The checkpoint is
	// pure, so the orchestrator looks; Build uses it and drops it.
	Exists func(path string) bool `json:"-"`
	// Refused are the tool_use ids debussy itself refused (a PreToolUse
	// deny), each with who refused: "handoff" or "budget". The stream shows
	// such a refusal as a failed tool whose output is debussy's reason; the
	// orchestrator knows which they were. Build uses it and drops it.
	Refused map[string]string `json:"-"`
}

// Checkpoint is everything the next session is told; it is saved as JSON
// next to its markdown.
type Checkpoint struct {
	Input
	ToolCalls      []ToolCall `json:"tool_calls,omitempty"`      // the latest main-thread calls, oldest first
	ToolCallCount  int        `json:"tool_call_count"`           // all main-thread calls observed
	FailedCommands []ToolCall `json:"failed_commands,omitempty"` // the latest failed calls, oldest first
	FailedCount    int        `json:"failed_count"`              // all failed calls observed, debussy's refusals not counted
	LastMessage    string     `json:"last_message,omitempty"`    // the agent's last text, bounded
	FilesTouched   []string   `json:"files_touched,omitempty"`   // written per the stream, first touch first
	FilesTouchedN  int        `json:"files_touched_count"`       // distinct files written
	// HandoffMissing are files the handoff names that are neither changed
	// nor written nor existing: the handoff contradicts git.
	HandoffMissing []string `json:"handoff_missing,omitempty"`
}

// Build combines the orchestrator's facts with what r observed. r may be
// nil when no session ran (a resume). Text from the stream and the agent
// is redacted, so neither the checkpoint's JSON nor its markdown nor the
// prompt can carry a secret.
func Build(in Input, r *Recorder) Checkpoint {
	if in.Kind == "" {
		in.Kind = KindRestart
	}
	exists, refused := in.Exists, in.Refused
	in.Exists, in.Refused = nil, nil
	c := Checkpoint{Input: in}
	if r != nil {
		c.observed(r)
		c.refusals(refused, r)
	}
	c = c.redacted()
	c.Handoff = clipMiddle(strings.TrimSpace(c.Handoff), handoffRunes)
	c.HandoffMissing = missingPaths(c.Handoff, c.Files, c.FilesTouched, exists)
	return c
}

func (c *Checkpoint) observed(r *Recorder) {
	inFlight := make(map[*ToolCall]bool, len(r.pending))
	for _, p := range r.pending {
		inFlight[p.call] = true
	}
	for _, p := range r.calls {
		tc := *p
		// No result by now: the session ended while the tool ran.
		if inFlight[p] {
			tc.Interrupted = true
		}
		c.ToolCalls = append(c.ToolCalls, tc)
	}
	c.ToolCallCount = r.callCount
	c.FailedCommands = append([]ToolCall(nil), r.failed...)
	c.FailedCount = r.failedCount
	c.LastMessage = r.lastMsg
	c.FilesTouched = append([]string(nil), r.files...)
	c.FilesTouchedN = r.fileCount
	tokens, cost := r.Totals()
	if c.TokensSoFar == 0 {
		c.TokensSoFar = tokens
	}
	if c.CostSoFar == 0 {
		c.CostSoFar = cost
	}
}

// refusals turns the failed calls debussy refused into refused ones, with
// debussy's reason (the first sentence of what it told the agent).
func (c *Checkpoint) refusals(refused map[string]string, r *Recorder) {
	if len(refused) == 0 {
		return
	}
	for i, tc := range c.ToolCalls {
		if who, ok := refused[tc.ID]; ok && tc.Failed {
			c.ToolCalls[i].Failed, c.ToolCalls[i].Error = false, ""
			c.ToolCalls[i].Refused = refusalReason(who, tc.Error)
		}
	}
	c.FailedCommands = slices.DeleteFunc(c.FailedCommands, func(tc ToolCall) bool {
		_, ok := refused[tc.ID]
		return ok
	})
	for id := range refused {
		if r.failedIDs[id] {
			c.FailedCount--
		}
	}
	if len(c.FailedCommands) == 0 {
		c.FailedCommands = nil
	}
}

// refusalReason is "handoff requested: context 83 % of 200K ≥ 80 %" from
// who refused and debussy's message ("debussy: context 83 % …. Write your
// handoff NOW …").
func refusalReason(who, msg string) string {
	label := map[string]string{"handoff": "handoff requested", "budget": "budget"}[who]
	if label == "" {
		label = who
	}
	_, rest, ok := strings.Cut(msg, ": ")
	if !ok || !strings.HasPrefix(msg, "debussy") {
		return label
	}
	first, _, _ := strings.Cut(rest, "\n")
	if i := strings.Index(first, ". "); i >= 0 {
		first = first[:i]
	}
	first = strings.TrimSuffix(strings.TrimSpace(first), ".")
	if first == "" {
		return label
	}
	return label + ": " + clip(first, summaryRunes)
}

// redacted is c with every text that came from the stream or the agent
// passed through Redact. The recorder redacts before it clips (a cut
// could split a secret); this catches the rest, and hand-built or decoded
// checkpoints.
func (c Checkpoint) redacted() Checkpoint {
	c.Reason = Redact(c.Reason)
	c.Progress = redactAll(c.Progress)
	c.Handoff = Redact(c.Handoff)
	c.NoHandoff = Redact(c.NoHandoff)
	c.Avoid = redactAll(c.Avoid)
	c.LastMessage = Redact(c.LastMessage)
	c.ToolCalls = redactCalls(c.ToolCalls)
	c.FailedCommands = redactCalls(c.FailedCommands)
	return c
}

func redactCalls(calls []ToolCall) []ToolCall {
	if calls == nil {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, tc := range calls {
		tc.Summary, tc.Error, tc.Refused = Redact(tc.Summary), Redact(tc.Error), Redact(tc.Refused)
		out[i] = tc
	}
	return out
}

// Prompt is the restarted session's prompt: the checkpoint, a rule, then
// the phase's own prompt.
func (c Checkpoint) Prompt(phasePrompt string) string {
	// The fields are redacted already (Build); this covers what Markdown
	// adds around them. The phase prompt is the user's own text, sent as is.
	return Redact(c.Markdown()) + "\n---\n\n" + phasePrompt
}
