// Package history reads what past sessions did, for `debussy tune`: the
// sessions of debussy's recorded runs (.debussy/runs: events.jsonl and each
// session's raw stream) and Claude Code's own transcripts
// (~/.claude/projects/<folder>/*.jsonl). Each becomes a Stream of work: a
// phase of a run, its sessions in order with how each ended, or one
// transcript. A turn is one main-thread API response, counted once however
// many lines carry it; subagents' responses are spend, never the main
// context. A file it cannot read is named in Result.Skipped and left out;
// nothing here is fatal but an unreadable directory that was asked for.
package history

import (
	"encoding/json"
	"time"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/record"
)

// Source says where a stream was read from.
type Source string

const (
	SourceRun    Source = "run"    // a phase of a debussy run
	SourceClaude Source = "claude" // a Claude Code transcript
)

// Stream is one stream of work.
type Stream struct {
	Source Source
	Run    string // the run's id (SourceRun)
	Phase  string // the phase's id (SourceRun)
	Path   string // the transcript's file (SourceClaude)
	// Started orders streams: the run's start, or the transcript's first line.
	Started time.Time
	Model   string
	Version string // the CLI's version, when a line says it
	// Window is the context window the sessions ran with; WindowFrom says
	// how it is known: "config" (context_window), "cli" (the CLI's own
	// answer), "result" (a result's modelUsage), "model" (a "[1m]" id or
	// the 1M beta), "context" (a context beyond 200K), "default" (200K).
	Window     int64
	WindowFrom string
	// Threshold, MaxTokens and Settings are what the run recorded
	// (run_started): MaxTokens and Settings nil for transcripts and for
	// runs recorded before they were kept.
	Threshold int
	MaxTokens *int
	Settings  *record.Settings
	Sessions  []Session
}

// Ending is how a session ended, as the run recorded what followed it.
type Ending string

const (
	EndLast    Ending = ""        // nothing followed it in the stream
	EndRestart Ending = "restart" // a restart from a checkpoint (counted against max_restarts)
	EndRetry   Ending = "retry"   // a retry, a usage limit's or a budget extension's resume: a new session, not a restart
	EndAttempt Ending = "attempt" // a remediation: a new attempt, whose restarts count afresh
)

// Session is one claude session (a transcript is one session).
type Session struct {
	N     int // its number within the phase, from 1
	Turns []Turn
	// Side is what subagents spent in the session: cost, never context.
	Side budget.Tokens
	// CostUSD is what the run recorded the session cost (session_ended),
	// or the CLI's own figure; 0 when unknown.
	CostUSD float64
	End     Ending
	// Trigger is why debussy stopped it ("" when it did not), and
	// TriggerTurn the index of the turn it was decided on (-1 none).
	Trigger      string
	TriggerTurn  int
	Warned       bool // debussy told it the threshold nears (context_warning)
	AgentHandoff bool // the agent ended it itself with `debussy handoff`
	// Gates are the phase's gate runs after this session (it ended an
	// attempt): failed of run.
	GatesRun, GatesFailed int
}

// Turn is one main-thread API response and the tool calls it made.
type Turn struct {
	Usage budget.Tokens // output is the CLI's figure, or estimated from the text
	Calls []Call
	// Compacted: the CLI compacted the context before this response.
	Compacted bool
	// Done: the agent's `debussy done` signal was taken at this turn.
	Done bool
	// HandedOff: the agent's own `debussy handoff` was taken at this turn.
	HandedOff bool
	// Refused: debussy refused its calls (the handoff came first).
	Refused bool
	// Handoff: the turn was spent on the handoff debussy asked for, not on
	// the phase's work.
	Handoff bool
	// Adaptive: an adaptive budget's quarter restarted the session at
	// this turn (budget.enforcement: adaptive).
	Adaptive bool
}

// Context is the turn's context: input plus both cache figures.
func (t Turn) Context() int64 { return t.Usage.Input + t.Usage.CacheRead + t.Usage.CacheWrite }

// Call is one tool call, with what the policy reads of it and its result.
type Call struct {
	ID, Name          string
	Input             json.RawMessage // nil when too large to keep
	FilePath, Command string
	// Result is the tool's result text (bounded) and ResultLen its length;
	// NoResult when none came (the session ended first).
	Result    string
	ResultLen int
	IsError   bool
	NoResult  bool
}

// Result is what was read.
type Result struct {
	Streams []Stream
	// SessionIDs are the CLI's ids of the sessions read from runs: their
	// transcripts are the same sessions, and are not read twice.
	SessionIDs map[string]bool
	// Skipped names each file left out and why ("path: reason").
	Skipped []string
	// Notes are things worth telling (lines skipped, sessions read twice).
	Notes []string
}
