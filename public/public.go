// Package public decides what may leave the machine: what a log line on a
// CI job's output, and what the export bundle (`debussy export`), may
// carry. One rule, by construction rather than by recognising secrets:
//
//   - numbers, booleans, durations and times, always;
//   - text under a key that names structure (Keys: a phase, a tool's or a
//     gate's name, a status, a path, a commit), folded to one bounded line;
//   - a value's or an error's public form, when it has one (Public, Own);
//   - for any other text — a tool's input or output, the agent's text, a
//     gate's output, an error's message — only its size.
//
// A key missing from Keys is withheld, so a new log line or event field
// carries no text until someone says it is structure. The full text stays
// in the 0600 files under .debussy/ and where a person reads it on a
// terminal (Text).
package public

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/internal/text"
)

// Publisher is a value or error with a form that may leave the machine.
type Publisher interface{ Public() string }

// words is text whose public form is set apart from its full form.
type words struct{ public, full string }

func (w words) Public() string { return w.public }
func (w words) String() string { return w.full }

// Words is full text whose public form is public: a session's outcome in
// words ("crashed (exit code 137)") beside the CLI's message that came
// with it.
func Words(public, full string) Publisher { return words{public, full} }

// Own marks s as debussy's own words (the completion resolver's reason, a
// config note): public whatever its key.
func Own(s string) Publisher { return words{s, s} }

// OwnErr marks err's message as debussy's own words (a bad config or
// plan, a setup problem), shown whole.
func OwnErr(err error) error {
	if err == nil {
		return nil
	}
	return &ownError{err}
}

type ownError struct{ err error }

func (e *ownError) Error() string  { return e.err.Error() }
func (e *ownError) Unwrap() error  { return e.err }
func (e *ownError) Public() string { return e.err.Error() }

// maxRunes bounds one structural text where it leaves the machine (a
// title, a reason, a path): what the commit trailers allow.
const maxRunes = 200

// maxOwnRunes bounds a public form (debussy's own words: a setup problem
// and its fix), which may take more than a name does.
const maxOwnRunes = 1000

// Keys name structure: their text is a name, a status, a place or a
// number in words, never a tool's or the agent's text. A command is not
// structure, even the plan's own gate: what leaves the machine names a
// gate by its name and exit code (as the commit trailers do). Keys are the log's
// attribute keys and events.jsonl's, which share their names.
var Keys = map[string]bool{
	// what and when
	"ts": true, "time": true, "level": true, "msg": true, "event": true, "kind": true, "mark": true, "subtype": true,
	// where in the plan and the run
	"run": true, "plan": true, "phase": true, "phases": true, "title": true, "session": true, "turn": true,
	"attempt": true, "restart": true, "retry": true, "dependency": true,
	// how it stands
	"status": true, "exit": true, "outcome": true, "failure": true, "terminal_reason": true, "stop_reason": true, "policy_state": true,
	"step": true, "zone": true, "scope": true, "enforcement": true, "trigger": true, "dimension": true, "decision": true, "reason": true,
	"why": true,
	// names: tools, gates, hooks, models, the CLI's version
	"tool": true, "name": true, "gate": true, "hook": true, "model": true, "claude": true, "requirement": true,
	"tool_use_id": true, "request_id": true, "id": true, "code": true, "notification": true,
	// git
	"commit": true, "branch": true, "remote": true, "base": true, "commits": true,
	// paths: files in the repository, debussy's own files
	"path": true, "paths": true, "files": true, "file": true, "log": true, "logs": true, "dir": true, "root": true,
	"at": true, "config": true, "env": true, "report": true, "checkpoint": true, "removed": true, "locks": true,
	// amounts in words (200K, $0.31, "tokens 100K")
	"window": true, "compacts_at": true, "too_long_at": true, "spent": true, "used": true, "left": true, "by": true,
	"budget": true, "limit": true, "resets": true, "until": true, "to": true, "from": true, "method": true,
	"autocompact_source": true, "categories": true, "by_phase": true, "hook_latency_ms": true, "size": true,
	// the run's record (run.json): times, git, budgets
	"started_at": true, "ended_at": true, "base_commit": true, "merge": true, "worktree": true, "zones": true,
	"unchecked_gates": true, "economics": true, "after_failure": true, "running": true, "waiting_until": true,
	"limits": true, "progress": true, "quarters": true, "tokens_by_kind": true, "unknown_models": true,
	"handoffs": true,
	// the run's own advice
	"resume": true, "fix": true, "show": true,
}

// Withheld is what a text becomes where its text may not go: its size.
func Withheld(n int) string { return fmt.Sprintf("[text withheld: %d bytes]", n) }

// Value is v as it may leave the machine under key.
func Value(key string, v any) any {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64,
		time.Duration, time.Time:
		return v
	case Publisher:
		return text.OneLine(x.Public(), maxOwnRunes)
	case error:
		return errorValue(x)
	case string:
		if Keys[key] || x == "" {
			return line(x)
		}
		return Withheld(len(x))
	case []string:
		if !Keys[key] {
			return Withheld(len(strings.Join(x, "\n")))
		}
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = line(s)
		}
		return out
	case fmt.Stringer:
		return Value(key, x.String())
	}
	if Keys[key] {
		return v // a struct or a map of numbers and names (categories, by_phase)
	}
	b, _ := json.Marshal(v)
	return Withheld(len(b))
}

// errorValue is err's public form: its own (Publisher anywhere in its
// chain), or a system error's operation, path and errno (debussy's own
// files), or its size.
func errorValue(err error) string {
	var p Publisher
	if errors.As(err, &p) {
		return text.OneLine(p.Public(), maxOwnRunes)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return line(pe.Op + " " + pe.Path + ": " + pe.Err.Error())
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return line(le.Op + " " + le.Old + " " + le.New + ": " + le.Err.Error())
	}
	return "[error text withheld: " + fmt.Sprint(len(err.Error())) + " bytes]"
}

func line(s string) string { return text.OneLine(s, maxRunes) }
