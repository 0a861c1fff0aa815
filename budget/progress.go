package budget

import (
	"regexp"
	"strings"

	"github.com/debussy-dev/debussy/event"
)

// Progress is what a session is doing, from its tool use.
type Progress string

const (
	Exploring Progress = "exploring" // reading and searching
	Planning  Progress = "planning"  // a todo list or a written plan
	Acting    Progress = "acting"    // writing files, running commands that change things
	Verifying Progress = "verifying" // tests and builds after an edit
)

// Classifier follows one session's progress phase. The phase is that of
// the latest telling tool call, with one exception that keeps it stable:
// once the agent has acted, reads are part of acting (looking at what it
// edits) and do not send it back to exploring. Tests and builds before any
// edit are exploring (learning the state), after one verifying.
type Classifier struct {
	phase  Progress
	edited bool
}

// Phase is the current progress phase; "" before the first telling event.
func (c *Classifier) Phase() Progress { return c.phase }

// Observe folds an event in and returns the phase after it. Subagents'
// lines count: a delegated search is exploration all the same.
func (c *Classifier) Observe(ev event.Event) Progress {
	if ev.Assistant == nil {
		return c.phase
	}
	for _, tu := range ev.Assistant.ToolUses {
		c.tool(tu.Name, tu.Command)
	}
	if len(ev.Assistant.ToolUses) == 0 && ev.Assistant.MainThread() && !c.edited && isPlanText(ev.Assistant.Text) {
		c.phase = Planning
	}
	return c.phase
}

// Tool folds in one tool call by name and, for Bash, its command.
func (c *Classifier) Tool(name, command string) Progress {
	c.tool(name, command)
	return c.phase
}

func (c *Classifier) tool(name, command string) {
	switch ToolKind(name, command) {
	case KindRead:
		if !c.edited {
			c.phase = Exploring
		}
	case KindPlan:
		if !c.edited {
			c.phase = Planning
		}
	case KindWrite:
		c.edited = true
		c.phase = Acting
	case KindVerify:
		if c.edited {
			c.phase = Verifying
		} else {
			c.phase = Exploring
		}
	}
}

// Kind sorts tool calls for the classifier and for strict enforcement.
type Kind int

const (
	KindOther  Kind = iota
	KindRead        // Read, Grep, Glob, LS, web reads, read-only shell
	KindPlan        // TodoWrite, ExitPlanMode
	KindWrite       // Write, Edit, shell that changes things
	KindVerify      // tests, builds, linters
)

// ToolKind classifies a tool call by name and, for Bash, its command.
func ToolKind(name, command string) Kind {
	switch name {
	case "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "Task", "Agent":
		// A delegation is the agent sending someone to look.
		return KindRead
	case "TodoWrite", "ExitPlanMode":
		return KindPlan
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return KindWrite
	case "Bash":
		switch {
		case verifyCommand.MatchString(command):
			return KindVerify
		case readOnlyCommand(command):
			return KindRead
		}
		return KindWrite
	}
	return KindOther
}

var verifyCommand = regexp.MustCompile(`(^|[;&|(]\s*|\s)(go (test|build|vet)|make( |$)|npm (test|run (test|build|lint))|yarn (test|build)|pnpm (test|build)|pytest|python3? -m pytest|tox|cargo (test|build|check|clippy)|mvn |gradle |ruff|mypy|eslint|tsc|golangci-lint|staticcheck|ctest|bazel (test|build))`)

// readOnlyCommand reports whether every command of a simple pipeline is one
// that only reads. Redirections into files make it a write.
func readOnlyCommand(command string) bool {
	cmd := strings.TrimSpace(command)
	if cmd == "" || strings.ContainsAny(cmd, ">`$") {
		return false
	}
	for _, part := range pipeline.Split(cmd, -1) {
		fields := strings.Fields(part)
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		if name == "git" && len(fields) > 1 {
			switch fields[1] {
			case "status", "log", "diff", "show", "grep", "blame", "ls-files", "branch", "rev-parse":
				continue
			}
			return false
		}
		switch name {
		case "ls", "cat", "head", "tail", "grep", "rg", "find", "fd", "wc", "tree", "file", "stat", "pwd",
			"less", "sed", "awk", "sort", "uniq", "diff", "which", "echo", "du", "jq", "cd":
			if name == "sed" && strings.Contains(part, " -i") {
				return false
			}
			continue
		}
		return false
	}
	return true
}

// isPlanText spots a written plan: a line starting "Plan" or three or more
// numbered steps.
func isPlanText(text string) bool {
	steps := 0
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimLeft(strings.TrimSpace(line), "#* ")
		if strings.HasPrefix(strings.ToLower(l), "plan") {
			return true
		}
		if numbered.MatchString(l) {
			steps++
		}
	}
	return steps >= 3
}

var pipeline = regexp.MustCompile(`\|\||&&|[|;]`)

var numbered = regexp.MustCompile(`^\d+[.)] `)
