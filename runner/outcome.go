package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/failure"
	fold "github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/record"
)

// OutcomeKind says how a session ended.
type OutcomeKind string

const (
	OutcomeCompleted      OutcomeKind = "completed"       // last result: success, not is_error
	OutcomeStopped        OutcomeKind = "stopped"         // RequestStop
	OutcomeAPIError       OutcomeKind = "api_error"       // last result is_error (incl. "Prompt is too long")
	OutcomeMaxTurns       OutcomeKind = "max_turns"       // last result error_max_turns
	OutcomeCrashed        OutcomeKind = "crashed"         // exited without any result
	OutcomeIdleTimeout    OutcomeKind = "idle_timeout"    // no stdout line for Spec.IdleTimeout
	OutcomeSessionTimeout OutcomeKind = "session_timeout" // ran longer than Spec.SessionTimeout
	OutcomeCancelled      OutcomeKind = "cancelled"       // Start's context was cancelled
	OutcomeKilled         OutcomeKind = "killed"          // Kill
	// OutcomeRefused: claude or the API refused what no retry changes (root
	// and bypass permissions, an unknown option, credentials, the model);
	// Outcome.Failure.Fix says what to change, Outcome.Refused is the error.
	OutcomeRefused OutcomeKind = "refused"
)

// Outcome is how a session ended.
type Outcome struct {
	Kind   OutcomeKind
	Reason string  // human-readable detail; the stop reason for stopped
	Result *Result // the last result line, may be nil
	// ExitCode of claude; -1 when it was ended by a signal.
	ExitCode int
	Stderr   string // tail of claude's stderr, bounded
	// Err is a failure of the runner itself (reading stdout, the session
	// log, waiting for the process); nil for every ordinary ending.
	Err   error
	Marks []Mark // the stop timeline, in time order
	// InFlightAtStop are the main-thread tools that had no result when the
	// runner interrupted or signalled claude: work cut in half.
	InFlightAtStop []ToolUse
	// HookLatency is, per hook, how long the CLI waited for the answers
	// (from the call's arrival to the answer's write).
	HookLatency map[HookEvent]Latency
	// Failure is how the session failed, classified once for every
	// consumer (failure.Classify); its Class is None when it did not.
	Failure failure.Failure

	facts failure.Facts // the stream's facts, classified when the session ends
}

// Mark is one step of the stop timeline, also reported through Spec.OnMark
// (and recorded in events.jsonl under its name).
type Mark struct {
	Name   MarkName
	At     time.Time
	Fields record.MarkFields
}

// MarkName names a step of the stop timeline: a misspelt one does not
// compile.
type MarkName string

const (
	MarkStopRequested  MarkName = "stop_requested"
	MarkToolDrained    MarkName = "tool_drained"
	MarkInterruptSent  MarkName = "interrupt_sent"
	MarkInterruptAcked MarkName = "interrupt_acked"
	MarkResultReceived MarkName = "result_received"
	MarkFollowUpSent   MarkName = "follow_up_sent"
	MarkStdinClosed    MarkName = "stdin_closed"
	MarkIdleTimeout    MarkName = "idle_timeout"
	MarkHookStopSent   MarkName = "hook_stop_sent" // a PostToolUse answered continue:false
	// MarkHookStopIgnored: the CLI sent another request after a PostToolUse
	// was answered continue:false (2.1.197 does when the tool ends before its
	// response does); that response's tools are refused, the turn interrupted.
	MarkHookStopIgnored MarkName = "hook_stop_ignored"
	MarkHookSlow        MarkName = "hook_slow"      // a hook call not answered within Spec.HookTimeout
	MarkHookCancelled   MarkName = "hook_cancelled" // the CLI withdrew a hook call
	MarkSigint          MarkName = "sigint"
	MarkSigterm         MarkName = "sigterm"
	MarkSigkill         MarkName = "sigkill"
	MarkExited          MarkName = "exited"
	MarkGroupKilled     MarkName = "group_killed"
)

// ref is v's address, for a MarkFields value.
func ref[T any](v T) *T { return &v }

// inFlight is n tools in flight, for a mark.
func inFlight(n int) *record.InFlight { return &record.InFlight{N: n} }

// classify decides the kind of an ending no stop or watchdog caused.
func classify(last *Result, exitDesc string) (OutcomeKind, string) {
	if last == nil {
		return OutcomeCrashed, fmt.Sprintf("claude %s without a result", exitDesc)
	}
	switch {
	case last.Subtype == "error_max_turns":
		return OutcomeMaxTurns, fmt.Sprintf("claude stopped at the turn limit after %d turns", last.NumTurns)
	case last.Subtype == "success" && !last.IsError:
		return OutcomeCompleted, ""
	}
	reason := last.Text
	if reason == "" {
		reason = last.Subtype
	}
	if last.APIErrorStatus != 0 {
		reason = fmt.Sprintf("%s (API status %d)", reason, last.APIErrorStatus)
	}
	if last.TerminalReason != "" {
		reason = fmt.Sprintf("%s, terminal reason %s", reason, last.TerminalReason)
	}
	return OutcomeAPIError, reason
}

// HookLatencyMs is the CLI's wait for debussy's hook answers, per hook,
// in milliseconds for events.jsonl.
func (o Outcome) HookLatencyMs() map[string]record.HookLatency {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := map[string]record.HookLatency{}
	for ev, x := range o.HookLatency {
		out[string(ev)] = record.HookLatency{N: x.N, P50: ms(x.P50), P99: ms(x.P99), Max: ms(x.Max)}
	}
	return out
}

// Describe says in words how a session ended.
func (o Outcome) Describe() string {
	var b strings.Builder
	kind := strings.ReplaceAll(string(o.Kind), "_", " ")
	b.WriteString(kind)
	if o.Reason != "" && o.Reason != kind {
		fmt.Fprintf(&b, ": %s", o.Reason)
	}
	if o.Result != nil && o.Result.IsError {
		if o.Result.APIErrorStatus != 0 {
			fmt.Fprintf(&b, " (API status %d)", o.Result.APIErrorStatus)
		}
		if t := fold.OneLine(o.Result.Text, 200); t != "" && !strings.Contains(b.String(), t) {
			fmt.Fprintf(&b, ": %s", t)
		}
	}
	if o.Kind == OutcomeCrashed {
		if code := fmt.Sprintf("code %d", o.ExitCode); !strings.Contains(b.String(), code) {
			fmt.Fprintf(&b, " (exit %s)", code)
		}
		// The last line is where a CLI says why it stopped.
		if s := fold.OneLine(fold.LastLine(o.Stderr), 200); s != "" {
			fmt.Fprintf(&b, ": %s", s)
		}
	}
	if o.Err != nil {
		fmt.Fprintf(&b, ": %v", o.Err)
	}
	return b.String()
}

// Words is Describe without what came from claude (its result's message,
// its stderr) or from an error: how the session ended in debussy's words,
// for a log that may carry no free text (public.Words).
func (o Outcome) Words() string {
	var b strings.Builder
	kind := strings.ReplaceAll(string(o.Kind), "_", " ")
	b.WriteString(kind)
	switch o.Kind {
	case OutcomeAPIError, OutcomeCrashed, OutcomeRefused:
	default:
		if o.Reason != "" && o.Reason != kind {
			fmt.Fprintf(&b, ": %s", o.Reason)
		}
	}
	if o.Result != nil && o.Result.IsError && o.Result.APIErrorStatus != 0 {
		fmt.Fprintf(&b, " (API status %d)", o.Result.APIErrorStatus)
	}
	if o.Kind == OutcomeCrashed {
		fmt.Fprintf(&b, " (exit code %d)", o.ExitCode)
	}
	return b.String()
}
