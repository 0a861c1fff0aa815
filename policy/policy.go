// Package policy decides everything debussy does inside one claude
// session: the notes the agent hears (warnings, zones, nudges, budget
// levels), the tools it refuses (a budget's included), the handoff it asks
// for, the done signal it accepts and the stop it makes — and, after the
// session, what follows it (After). It is pure: stream events, hook calls
// and budget readings go in; answers and Effects (what to record, log and
// do) come out. Package session feeds it and turns the effects into its
// own; the runner carries the answers.
//
// The states and the transition table are data in transitions.go
// (States, Transitions): docs/policy.md shows them as TransitionsMarkdown
// renders them, and transitions_test.go plays every row. What follows a
// session (restart or its budget spent, retry and its backoff, a usage
// limit's fallback, wait or exit 75, the done signal's verdict, a
// remediation) is AfterRows in afterrows.go, played by after_test.go: the
// orchestrator passes the counts and Limits and does what the Step says.
// Precedence between simultaneous conditions is tested in policy_test.go.
package policy

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/record"
)

// State is where a session stands.
type State string

const (
	Working          State = "working"           // below every threshold
	Warned           State = "warned"            // told that the threshold nears
	HandoffRequested State = "handoff_requested" // asked for its handoff; other tools refused
	Stopping         State = "stopping"          // the next PostToolUse ends the session
	Done             State = "done"              // the agent ran `debussy done`: nothing stops it for a restart
)

// Triggers beside the estimator's: why a session is stopped.
const (
	TriggerZone     estimator.Trigger = "zone"
	TriggerDoomLoop estimator.Trigger = "doom_loop"
	TriggerBudget   estimator.Trigger = "budget"
	TriggerAdaptive estimator.Trigger = "adaptive"
	// TriggerAgentHandoff is the agent's own `debussy handoff`: it wrote
	// its handoff at a task boundary rather than be stopped mid-task.
	TriggerAgentHandoff estimator.Trigger = "agent_handoff"
)

// AgentHandoffReason is the restart's reason for TriggerAgentHandoff.
const AgentHandoffReason = "the agent handed off at a task boundary"

// Zone actions: what a red zone does.
const (
	ZoneNote    = "note"    // tell the agent where it stands (default)
	ZoneHandoff = "handoff" // ask for the handoff, as the context threshold does
)

const (
	// EmergencyPercent ends a session at once, handoff or not: the CLI
	// refuses the prompt a few points later.
	EmergencyPercent = 98
	// WarnBelow is how many points under the threshold the agent is told
	// to wrap up.
	WarnBelow = 10
	// FallbackToolCalls restarts a session whose stream reports no usage
	// (the context is only a character estimate) when tool_call_threshold
	// is not set. Real sessions make a median 110 tool calls (15 public
	// sessions, ../shared/session-shapes): with exact usage the count says
	// nothing about the context, so it never stops such a session.
	FallbackToolCalls = 150
)

// Config is one session's policy settings.
type Config struct {
	Phase            string // the phase id, quoted in notes
	ContextThreshold int    // percent of the window; ≥ 100 disables
	// ContextMaxTokens caps the context in tokens whatever the window (a
	// handoff at the lower of the two); 0 disables it.
	ContextMaxTokens int64
	// ToolCallThreshold, when > 0 (set by the user), restarts at that many
	// main-thread tool calls; 0 applies FallbackToolCalls, and only to
	// streams without usage.
	ToolCallThreshold int
	Zones             estimator.ZoneConfig
	ZoneAction        string // ZoneNote or ZoneHandoff
	Nudges            estimator.NudgeConfig
	Handoff           bool   // ask for a handoff before a threshold's stop
	HandoffPath       string // absolute path the handoff is written to
	HandoffGraceCalls int    // refused calls allowed before an emergency stop; 0: no limit
	MaxRestarts       int    // 0: thresholds only warn
	RequireDoneSignal bool
	AllowCompaction   bool
	// Root is the work tree: relative paths in tool inputs are below it.
	Root string
	// IsSelf reports whether a command's program (its first word, as
	// typed) runs debussy's own executable; nil: nothing does, and no
	// command gets debussy's allowance.
	IsSelf func(program string) bool
	// Boundary is the sandbox's reason to refuse a call before it runs
	// ("" lets it run); nil when the run is not bounded.
	Boundary func(Call) string
}

// Effect is one thing the session's owner must do for a decision: record an
// event (Event, Fields), log it (Log at Level), and, for the kinds that
// change more than the record, act (Kind).
type Effect struct {
	Kind   EffectKind
	Event  record.PolicyEvent
	Fields Fields // what events.jsonl records and the log shows; nothing acts on it
	Level  Level
	Log    string

	// The payloads of the effects the session acts on, apart from
	// Fields, whose shape is the event log's: set for EffStop, EffZone and
	// EffNudge.
	Stop  *StopDecision
	Zone  estimator.Zone
	Nudge *estimator.Nudge
}

// StopDecision is why the policy ends the session (EffStop).
type StopDecision struct {
	Trigger estimator.Trigger
	Reason  string
	// Emergency: no handoff and no time left (the grace ran out, the
	// context is about full), whatever the trigger that asked first.
	Emergency bool
}

// EffectKind says what an Effect asks beyond recording and logging.
type EffectKind string

const (
	EffRecord         EffectKind = ""                // record and log only
	EffStop           EffectKind = "stop"            // ask the runner to stop at the next safe point (fallback to the hook's stop)
	EffZone           EffectKind = "zone"            // the session's zone changed (Effect.Zone)
	EffNudge          EffectKind = "nudge"           // keep the nudge in the ledger
	EffHandoffWritten EffectKind = "handoff_written" // keep the handoff's path in the ledger
	EffNoHandoff      EffectKind = "no_handoff"      // an emergency stop without a handoff: counted
)

// Level is how loudly an effect is logged; "" is not logged.
type Level string

const (
	LevelNone  Level = ""
	LevelDebug Level = "debug"
	LevelInfo  Level = "info"
	LevelWarn  Level = "warn"
)

// Policy is one session's decisions. It is not safe for concurrent use:
// one goroutine feeds it events and hook calls in stream order.
type Policy struct {
	cfg   Config
	state State

	trigger estimator.Trigger
	reason  string
	request string // the handoff request, also every refusal's reason in HandoffRequested

	refusedCalls int // calls refused while the handoff is due
	handoff      string
	noHandoff    string
	handoffTold  bool // a budget's wrap-up told the agent where its handoff goes
	doneAsked    bool
	warnedOnce   bool
	// stopAfterDone keeps a stop decided before or with the done signal:
	// the session still ends at the next PostToolUse, as done.
	stopAfterDone bool
	// doneStatus is what the done signal says (SignalStatus), for its log.
	doneStatus string

	budget BudgetReading // the latest: its action refuses calls

	zone   estimator.Zone
	nudger *estimator.Nudger
	avoid  []string

	notes   []string // for the next PostToolUse that does not stop
	effects []Effect
}

// New returns the policy of one session. carried are notes an earlier
// session decided but never delivered (its stop came first).
func New(cfg Config, carried []string) *Policy {
	if cfg.ZoneAction == "" {
		cfg.ZoneAction = ZoneNote
	}
	return &Policy{
		cfg:    cfg,
		state:  Working,
		zone:   estimator.ZoneGreen,
		nudger: estimator.NewNudger(cfg.Nudges),
		notes:  append([]string(nil), carried...),
	}
}

// State is the session's state.
func (p *Policy) State() State { return p.state }

// Zone is the session's zone.
func (p *Policy) Zone() estimator.Zone { return p.zone }

// Effects returns the effects decided since the last call, and forgets them.
func (p *Policy) Effects() []Effect {
	out := p.effects
	p.effects = nil
	return out
}

// Outcome is what the session's end needs to know of the policy.
type Outcome struct {
	Trigger   estimator.Trigger // why debussy stopped the session; "" when it did not
	Reason    string
	Done      bool     // the agent ran `debussy done`: no restart
	Handoff   string   // the handoff's path, when written
	NoHandoff string   // why a handoff that was due is missing
	Avoid     []string // calls the next session must not repeat
	// Undelivered are notes decided but never heard: the next session
	// hears them first.
	Undelivered []string
}

// Outcome is the session's ending as the policy saw it.
func (p *Policy) Outcome() Outcome {
	o := Outcome{Done: p.state == Done, Handoff: p.handoff, Undelivered: append([]string(nil), p.notes...)}
	if p.state == Stopping || (p.state == Done && p.stopAfterDone) {
		o.Trigger, o.Reason = p.trigger, p.reason
		o.NoHandoff, o.Avoid = p.noHandoff, p.avoid
	}
	return o
}

// GraceDue reports whether a handoff is awaited, so the handoff's timer
// should run.
func (p *Policy) GraceDue() bool { return p.state == HandoffRequested }

// StopReason is the stop's reason once the session is stopping.
func (p *Policy) StopReason() string {
	if p.state == Stopping || p.stopAfterDone {
		return p.reason
	}
	return ""
}

func (p *Policy) emit(e Effect) { p.effects = append(p.effects, e) }

func (p *Policy) record(event record.PolicyEvent, fields Fields, level Level, log string) {
	p.emit(Effect{Event: event, Fields: fields, Level: level, Log: log})
}

// Note queues text for the agent: the next PostToolUse that does not end
// the session carries it.
func (p *Policy) Note(text string) {
	if text != "" {
		p.notes = append(p.notes, text)
	}
}

// HandoffHint is what a budget's wrap-up adds to "write the handoff":
// where, and the template, the first time; the path after that.
func (p *Policy) HandoffHint(template string) string {
	if p.handoffTold || p.state == HandoffRequested {
		return fmt.Sprintf(" The handoff goes to `%s`.", p.cfg.HandoffPath)
	}
	p.handoffTold = true
	return fmt.Sprintf(" Write your handoff to `%s` (the Write tool, that exact absolute path); the session that goes on starts from it. "+
		"Use this template:\n\n%s", p.cfg.HandoffPath, template)
}

// abs is path made absolute below the work tree.
func (p *Policy) abs(path string) string {
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(p.cfg.Root, path)
	}
	return filepath.Clean(path)
}

// isHandoffWrite reports whether a call writes (or reads back) the
// handoff, or is debussy's own progress, handoff or done command: the
// calls the handoff stage lets through.
func (p *Policy) isHandoffWrite(c Call) bool {
	switch c.Tool {
	case "Write", "Edit", "MultiEdit", "Read":
		return c.FilePath != "" && p.abs(c.FilePath) == p.cfg.HandoffPath
	case "Bash":
		cmd := strings.TrimSpace(c.Command)
		// A shell redirect into the handoff file is a handoff write too;
		// its name suffices, as the path may be spelled with variables.
		return RunsOwn(cmd, "progress") || RunsOwn(cmd, "done") || RunsOwn(cmd, "handoff") ||
			strings.Contains(cmd, filepath.Base(p.cfg.HandoffPath))
	}
	return false
}
