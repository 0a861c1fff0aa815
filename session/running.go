package session

import (
	"strings"
	"time"

	"github.com/debussy-dev/debussy/event"
	"github.com/debussy-dev/debussy/internal/text"
)

// Running is the main thread's tool in flight, for the live view: what it
// does in the words the agent or the CLI gave it, and since when.
type Running struct {
	Tool, Description string
	Since             time.Time
}

// runningTool follows the main thread's tool in flight: its tool_use
// starts it (the input's description, else its command or file), the
// CLI's task_started and tool_progress heartbeats (2.1.333: with a
// description) name it better, its tool_result ends it.
type runningTool struct {
	id string
	Running
}

func (r *runningTool) observe(ev event.Event, now time.Time) {
	switch {
	case ev.Assistant != nil && ev.Assistant.MainThread():
		for _, tu := range ev.Assistant.ToolUses {
			if tu.ID == "" || tu.ID == r.id {
				continue
			}
			at := ev.At
			if at.IsZero() {
				at = now
			}
			r.id, r.Running = tu.ID, Running{Tool: tu.Name, Description: describe(tu), Since: at}
		}
	case len(ev.ToolResults) > 0:
		for _, tr := range ev.ToolResults {
			if tr.ToolUseID == r.id {
				*r = runningTool{}
			}
		}
	case ev.System != nil && r.id != "" && ev.System.ToolUseID == r.id && ev.System.Description != "":
		switch ev.System.Subtype {
		case "task_started", "tool_progress":
			r.Description = text.OneLine(ev.System.Description, 80)
		}
	}
}

// now is the tool in flight, nil when none.
func (r *runningTool) now() *Running {
	if r.id == "" {
		return nil
	}
	c := r.Running
	return &c
}

// describe is a tool call in a few words: its description, else what it
// runs or touches.
func describe(tu event.ToolUse) string {
	if d := strings.TrimSpace(tu.Description); d != "" {
		return text.OneLine(d, 80)
	}
	if tu.Command != "" {
		return text.OneLine(tu.Command, 80)
	}
	return tu.FilePath
}
