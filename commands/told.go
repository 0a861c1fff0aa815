package commands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/view"
)

// What `debussy logs` adds to a session's stream from the run's
// events.jsonl: what debussy told the agent (warnings, notes, nudges,
// refusals) and why the session ended. The stream has only the CLI's
// side; debussy's answers went to its stdin.

// sessionTold reads what debussy told session n of phase, and why that
// session ended (with what followed it: gates, the phase's end). A
// missing or unreadable events log is nothing to add.
func sessionTold(store *state.Store, runID, phase string, n int, structure bool) ([]view.Told, string) {
	lines, err := readEvents(store.EventsPath(runID), structure)
	if err != nil {
		return nil, ""
	}
	var told []view.Told
	var ended, after []string
	stoppedWith := ""
	in := false // between this session's spawn and the phase's next one
	for _, l := range lines {
		if l.Phase != phase {
			continue
		}
		if sp, ok := record.As[record.SessionSpawned](l); ok {
			in = sp.Session == n
			continue
		}
		if !in || (l.Session != nil && *l.Session != n) {
			continue
		}
		if ev, ok := record.As[record.SessionEnded](l); ok {
			ended = append(ended, endedText(ev, stoppedWith))
		} else if ev, ok := record.As[record.Gate](l); ok {
			after = append(after, gateText(ev))
		} else if ev, ok := record.As[record.Remediation](l); ok {
			after = append(after, "another attempt: "+text.OneLine(ev.Problem, 120))
		} else if ev, ok := record.As[record.PhaseEnded](l); ok {
			what := "phase " + ev.Status
			if ev.Error != "" && ev.Status != string(state.StatusCompleted) {
				what += ": " + text.OneLine(ev.Error, 120)
			}
			after = append(after, what)
		} else if ev, ok := record.As[record.BudgetLevel](l); ok {
			told = append(told, tell(ev.Turn, fmt.Sprintf("%s budget %s at %s %%", ev.Scope, ev.Level, num(&ev.UsedPct))))
		} else if ev, ok := record.As[record.Interrupt](l); ok {
			told = append(told, tell(ev.Turn, "interrupted the session (Ctrl-C)"))
		} else if ev, err := l.Policy(); err == nil {
			switch ev.Name {
			case record.HandoffWritten:
				stoppedWith = "handoff written"
				told = append(told, tell(ev.Turn, "got the handoff ("+num(ev.Bytes)+" bytes)"))
			case record.EmergencyStop:
				stoppedWith = "no handoff: " + str(ev.Reason)
				told = append(told, tell(ev.Turn, "stopped the session without a handoff: "+str(ev.Reason)))
			default:
				if text := toldText(ev); text != "" {
					it := tell(ev.Turn, text)
					if ev.Name == record.ToolDenied {
						it.ToolUseID = str(ev.ToolUseID)
					}
					told = append(told, it)
				}
			}
		}
	}
	return told, strings.Join(append(ended, after...), " · ")
}

// readEvents is state.ReadLog, each line as public's rule leaves it when
// structure says so (a pipe, a CI log, the export).
func readEvents(path string, structure bool) ([]record.Line, error) {
	if !structure {
		return state.ReadLog(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	var out []record.Line
	for _, line := range bytes.Split(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if l, err := record.Parse(public.JSONLine(line)); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

func tell(turn *int, text string) view.Told {
	t := view.Told{Text: text}
	if turn != nil {
		t.Turn = *turn
	}
	return t
}

// toldText is what the policy recorded as what debussy told or did, ""
// for its bookkeeping.
func toldText(ev record.Policy) string {
	switch ev.Name {
	case record.ContextWarning:
		if ev.By == "context_max_tokens" {
			return fmt.Sprintf("warned the agent: context at %s tokens (handoff at %s, the cap context_max_tokens)", tokens(ev.Tokens), tokens(ev.At))
		}
		if ev.Tokens != nil && ev.At != nil {
			return fmt.Sprintf("warned the agent: context at %s tokens, %s %% (handoff at %s, context_threshold %s %%)",
				tokens(ev.Tokens), num(ev.Percent), tokens(ev.At), num(ev.Threshold))
		}
		return fmt.Sprintf("warned the agent: context at %s %% (restart at %s %%)", num(ev.Percent), num(ev.Threshold))
	case record.Note:
		if note := str(ev.Text); note != "" {
			return "noted after " + str(ev.Tool) + ": " + text.OneLine(note, 200)
		}
		return fmt.Sprintf("added a note after %s (%s characters)", str(ev.Tool), num(ev.Chars))
	case record.Nudge:
		what := fmt.Sprintf("nudged the agent (%s): %s %s, %s times", strings.ReplaceAll(ev.Kind, "_", " "),
			str(ev.Tool), text.OneLine(str(ev.Args), 80), num(ev.Count))
		if ev.Restart != nil && *ev.Restart {
			what += "; restarting the session"
		}
		return what
	case record.HandoffRequested:
		return "asked for the handoff (" + str(ev.Reason) + ") at " + filepath.Base(str(ev.Path))
	case record.ToolDenied:
		why := "the handoff comes first"
		if ev.Why == "budget" {
			why = "the budget"
		}
		if r := str(ev.Reason); r != "" {
			why = text.OneLine(r, 160)
		}
		return "refused " + str(ev.Tool) + " (" + why + "); it did not run"
	case record.HookStop:
		return "stopped the session after " + str(ev.Tool) + ": " + str(ev.Reason)
	case record.StopBlocked:
		if ev.Why == "done_signal" {
			return "kept the session going: `debussy done` was not run"
		}
		return "kept the session going: the handoff is not written yet"
	case record.CompactionBlocked:
		return "refused to compact the context (a restart from a checkpoint instead)"
	}
	return ""
}

// endedText says why a session ended: its outcome and debussy's reason.
func endedText(ev record.SessionEnded, stoppedWith string) string {
	reason := ev.Reason
	var what string
	switch out := ev.Outcome; out {
	case "completed":
		what = "the agent finished"
	case "stopped":
		what = "stopped by debussy"
	case "cancelled":
		what = "interrupted"
	case "failed":
		what = "claude failed"
		if c := num(&ev.ExitCode); c != "0" {
			what += " (exit code " + c + ")"
		}
	default:
		what = out
	}
	if reason != "" && reason != "cancelled" {
		what += ": " + text.OneLine(reason, 160)
	}
	if stoppedWith != "" {
		what += " (" + stoppedWith + ")"
	}
	return what
}

func gateText(ev record.Gate) string {
	name := ev.Gate
	switch {
	case ev.Unchecked:
		return "gate " + name + " unchecked"
	case ev.TimedOut != nil && *ev.TimedOut:
		return "gate " + name + " timed out"
	case num(ev.ExitCode) != "0":
		return "gate " + name + " failed (exit " + num(ev.ExitCode) + ")"
	}
	return "gate " + name + " passed"
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// tokens is a token count as people read it: 360K, 1.2M; "" when unset.
func tokens(v *int64) string {
	if v == nil {
		return ""
	}
	return estimator.FormatTokens(*v)
}

// num is a number as the log has it: 73, 82.5; "" when it is not set.
func num[T int | int64 | float64](v *T) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%g", float64(*v))
}
