package commands

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/debussy-dev/debussy/internal/text"
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
func sessionTold(store *state.Store, runID, phase string, n int) ([]view.Told, string) {
	events, err := state.ReadEvents(store.EventsPath(runID))
	if err != nil {
		return nil, ""
	}
	var told []view.Told
	var ended, after []string
	stoppedWith := ""
	in := false // between this session's spawn and the phase's next one
	for _, ev := range events {
		if str(ev, "phase") != phase {
			continue
		}
		session, hasSession := ev["session"].(float64)
		if name := str(ev, "event"); name == "session_spawned" {
			in = int(session) == n
			continue
		}
		if !in {
			continue
		}
		if hasSession && int(session) != n {
			continue
		}
		switch str(ev, "event") {
		case "session_ended":
			ended = append(ended, endedText(ev, stoppedWith))
		case "handoff_written":
			stoppedWith = "handoff written"
			told = append(told, tell(ev, "got the handoff ("+num(ev, "bytes")+" bytes)"))
		case "emergency_stop":
			stoppedWith = "no handoff: " + str(ev, "reason")
			told = append(told, tell(ev, "stopped the session without a handoff: "+str(ev, "reason")))
		case "gate":
			after = append(after, gateText(ev))
		case "remediation":
			after = append(after, "another attempt: "+text.OneLine(str(ev, "problem"), 120))
		case "phase_ended":
			what := "phase " + str(ev, "status")
			if e := str(ev, "error"); e != "" && str(ev, "status") != string(state.StatusCompleted) {
				what += ": " + text.OneLine(e, 120)
			}
			after = append(after, what)
		default:
			if text := toldText(ev); text != "" {
				it := tell(ev, text)
				if str(ev, "event") == "tool_denied" {
					it.ToolUseID = str(ev, "tool_use_id")
				}
				told = append(told, it)
			}
		}
	}
	return told, strings.Join(append(ended, after...), " · ")
}

func tell(ev map[string]any, text string) view.Told {
	turn, _ := ev["turn"].(float64)
	return view.Told{Turn: int(turn), Text: text}
}

// toldText is one event as what debussy told or did, "" for events that
// are the run's bookkeeping.
func toldText(ev map[string]any) string {
	switch str(ev, "event") {
	case "context_warning":
		if str(ev, "by") == "context_max_tokens" {
			return fmt.Sprintf("warned the agent: context at %s tokens (handoff at %s, context_max_tokens)", num(ev, "tokens"), num(ev, "at"))
		}
		return fmt.Sprintf("warned the agent: context at %s %% (restart at %s %%)", num(ev, "percent"), num(ev, "threshold"))
	case "note":
		if note := str(ev, "text"); note != "" {
			return "noted after " + str(ev, "tool") + ": " + text.OneLine(note, 200)
		}
		return fmt.Sprintf("added a note after %s (%s characters)", str(ev, "tool"), num(ev, "chars"))
	case "nudge":
		what := fmt.Sprintf("nudged the agent (%s): %s %s, %s times", strings.ReplaceAll(str(ev, "kind"), "_", " "),
			str(ev, "tool"), text.OneLine(str(ev, "args"), 80), num(ev, "count"))
		if ev["restart"] == true {
			what += "; restarting the session"
		}
		return what
	case "handoff_requested":
		return "asked for the handoff (" + str(ev, "reason") + ") at " + filepath.Base(str(ev, "path"))
	case "tool_denied":
		why := "the handoff comes first"
		if str(ev, "why") == "budget" {
			why = "the budget"
		}
		if r := str(ev, "reason"); r != "" {
			why = text.OneLine(r, 160)
		}
		return "refused " + str(ev, "tool") + " (" + why + "); it did not run"
	case "hook_stop":
		return "stopped the session after " + str(ev, "tool") + ": " + str(ev, "reason")
	case "stop_blocked":
		if str(ev, "why") == "done_signal" {
			return "kept the session going: `debussy done` was not run"
		}
		return "kept the session going: the handoff is not written yet"
	case "compaction_blocked":
		return "refused to compact the context (a restart from a checkpoint instead)"
	case "budget_level":
		return fmt.Sprintf("%s budget %s at %s %%", str(ev, "scope"), str(ev, "level"), num(ev, "used_pct"))
	case "interrupt":
		return "interrupted the session (Ctrl-C)"
	}
	return ""
}

// endedText says why a session ended: its outcome and debussy's reason.
func endedText(ev map[string]any, stoppedWith string) string {
	reason := str(ev, "reason")
	var what string
	switch out := str(ev, "outcome"); out {
	case "completed":
		what = "the agent finished"
	case "stopped":
		what = "stopped by debussy"
	case "cancelled":
		what = "interrupted"
	case "failed":
		what = "claude failed"
		if c := num(ev, "exit_code"); c != "0" && c != "" {
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

func gateText(ev map[string]any) string {
	name := str(ev, "gate")
	switch {
	case ev["unchecked"] == true:
		return "gate " + name + " unchecked"
	case ev["timed_out"] == true:
		return "gate " + name + " timed out"
	case num(ev, "exit_code") != "0":
		return "gate " + name + " failed (exit " + num(ev, "exit_code") + ")"
	}
	return "gate " + name + " passed"
}

func str(ev map[string]any, k string) string {
	s, _ := ev[k].(string)
	return s
}

// num is a JSON number as written: 73, 82.5.
func num(ev map[string]any, k string) string {
	f, ok := ev[k].(float64)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%g", f)
}
