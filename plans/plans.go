// Package plans reads a master plan and its phase files into a Plan: phases
// in table order with their dependencies, gates, tasks and notes paths, plus
// every problem found as a Finding with file:line.
//
// Parsing is structural (goldmark with GFM tables and task lists), so a
// table or checkbox inside a fenced code block is never mistaken for a phase
// or a task.
package plans

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Status is a phase's state as written in the master plan's table.
type Status string

const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusBlocked   Status = "blocked"
	StatusFailed    Status = "failed"
)

// Finding severities. Errors make a plan unusable; warnings do not.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding codes, kept stable because `debussy check --json` prints them.
const (
	CodeNoPhases             = "no-phases"
	CodeBadPhaseRow          = "bad-phase-row"
	CodePhaseNoID            = "phase-no-id"
	CodeDuplicateID          = "duplicate-id"
	CodeDuplicateFile        = "duplicate-file"
	CodeMissingPhaseFile     = "missing-phase-file"
	CodeUnreadablePhaseFile  = "unreadable-phase-file"
	CodeTemplatePlaceholder  = "template-placeholder"
	CodeUnknownDependency    = "unknown-dependency"
	CodeBrokenDependencyLink = "broken-dependency-link"
	CodeDependencyCycle      = "dependency-cycle"
	CodeGateNoCommand        = "gate-no-command"
	CodeNoGates              = "no-gates"
	CodeEmptyPhase           = "empty-phase"
	CodeUnknownStatus        = "unknown-status"
	CodeNoTitle              = "no-title"
	CodeMultipleH1           = "multiple-h1"
	CodeNotesNotDependency   = "notes-not-dependency"
	CodeSelfDependency       = "self-dependency"
)

// ErrInvalidPlan is wrapped by Plan.Err when the plan has error findings.
var ErrInvalidPlan = errors.New("invalid plan")

// Plan is a master plan and everything read from its phase files.
type Plan struct {
	Name     string    `json:"plan"`
	Path     string    `json:"path"`   // master plan path as given
	Phases   []*Phase  `json:"phases"` // in table order
	Findings []Finding `json:"findings"`
}

// Phase is one row of the master plan's phase table plus its phase file.
type Phase struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"` // the phase file's H1, else the link text
	File       string   `json:"file"`  // path as written in the link
	Path       string   `json:"-"`     // resolved path on disk
	Focus      string   `json:"focus,omitempty"`
	Risk       string   `json:"risk,omitempty"`
	Status     Status   `json:"status"`
	StatusText string   `json:"status_text,omitempty"`
	Line       int      `json:"line"`       // row line in the master plan
	DependsOn  []string `json:"depends_on"` // never null in JSON
	Gates      []Gate   `json:"gates"`
	Tasks      []Task   `json:"tasks"`
	ReadNotes  []string `json:"read_notes,omitempty"`
	WriteNotes []string `json:"write_notes,omitempty"`
	Content    string   `json:"-"` // phase file text, CRLF normalised

	depLine  map[string]int // dependency id → line in the phase file that declares it
	noteLine map[string]int // read-notes path → line in the phase file
}

// Gate is one check from a phase's gates section.
type Gate struct {
	Name        string `json:"name"`
	Requirement string `json:"requirement,omitempty"`
	Command     string `json:"command"`
	FromConfig  bool   `json:"from_config,omitempty"`
	// Preset is set when the command is debussy's built-in one for the
	// tool the gate names (see Presets).
	Preset bool `json:"preset,omitempty"`
	// Unchecked is a gate with no command at all: nothing can run it, so it
	// is never reported as passed; the agent is told to meet it.
	Unchecked bool `json:"unchecked,omitempty"`
	Line      int  `json:"line"`
}

// Source says where the gate's command came from, for people reading
// `check` and `--dry-run`: "plan", "gate_commands", "preset" or
// "unchecked".
func (g Gate) Source() string {
	switch {
	case g.Unchecked:
		return "unchecked"
	case g.FromConfig:
		return "gate_commands"
	case g.Preset:
		return "preset"
	}
	return "plan"
}

// Program is the program the gate's command runs first: its first word
// after any VAR=value assignments, unquoted ("uv" for `uv run ruff
// check .`); "" for an unchecked gate. check and the gate runner name it
// when it is missing.
func (g Gate) Program() string {
	for _, w := range strings.Fields(g.Command) {
		w = strings.Trim(w, `"'`)
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && !strings.ContainsAny(k, "/$") {
			continue
		}
		return w
	}
	return ""
}

// Task is one checkbox item of a phase file.
type Task struct {
	Text string `json:"text"`
	Done bool   `json:"done"`
	Line int    `json:"line"`
}

// Finding is one problem found in a plan.
type Finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

// String formats the finding like a compiler diagnostic:
// "file:line: error: message [code]".
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return fmt.Sprintf("%s: %s: %s [%s]", loc, f.Severity, f.Message, f.Code)
}

// Options are the parts of the configuration that change how a plan reads.
type Options struct {
	// GateCommands maps a gate name to the command that runs it, for gates
	// whose plan text names no command (config `gate_commands`).
	GateCommands map[string]string
	// Root is the repository the plan runs in: what it has (pyproject.toml,
	// package.json, go.mod, Cargo.toml) chooses the gate presets. Empty
	// means the master plan's directory.
	Root string
	// StrictGates makes a gate with no command an error instead of a
	// warning (config `strict_gates`, --strict-gates).
	StrictGates bool
}

// Load reads the master plan at masterPath and every phase file it links.
// The error is only for reading the master file itself; every problem in
// the plan's content is a Finding (see Err).
func Load(masterPath string, opts Options) (*Plan, error) {
	raw, err := os.ReadFile(masterPath)
	if err != nil {
		return nil, fmt.Errorf("read master plan: %w", err)
	}
	l := &loader{
		md:     newMarkdown(),
		opts:   opts,
		unread: map[*Phase]bool{},
		refs:   map[*Phase][]depRef{},
		plan:   &Plan{Path: masterPath, Phases: []*Phase{}, Findings: []Finding{}},
	}
	root := opts.Root
	if root == "" {
		root = filepath.Dir(masterPath)
	}
	l.presets = Presets(root)
	l.readMaster(normalize(raw))
	l.readPhases()
	l.resolveDependencies()
	l.checkGraph()
	l.checkNotes()
	l.sortFindings()
	return l.plan, nil
}

// Errors returns the findings of severity error.
func (p *Plan) Errors() []Finding {
	var out []Finding
	for _, f := range p.Findings {
		if f.Severity == SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// Err is nil for a usable plan, else an error wrapping ErrInvalidPlan that
// lists every error finding, one per line.
func (p *Plan) Err() error {
	errs := p.Errors()
	if len(errs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, f := range errs {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	noun := "errors"
	if len(errs) == 1 {
		noun = "error"
	}
	return fmt.Errorf("%w %s (%d %s):%s", ErrInvalidPlan, p.Path, len(errs), noun, b.String())
}

// Phase returns the phase with the given id, or nil. With duplicate ids
// (an error finding) the first row wins.
func (p *Plan) Phase(id string) *Phase {
	for _, ph := range p.Phases {
		if ph.ID == id {
			return ph
		}
	}
	return nil
}

// ReadTasks reads the checkbox items of a phase file afresh, so callers see
// what the agent has ticked since the plan was loaded.
func ReadTasks(phasePath string) ([]Task, error) {
	raw, err := os.ReadFile(phasePath)
	if err != nil {
		return nil, fmt.Errorf("read tasks: %w", err)
	}
	src := normalize(raw)
	doc := newMarkdown().parse(src)
	return tasksOf(doc), nil
}

// loader carries the state of one Load.
type loader struct {
	md      *markdown
	opts    Options
	presets map[string]string
	plan    *Plan
	master  *document
	unread  map[*Phase]bool     // phases whose file is not to be read (placeholder links)
	refs    map[*Phase][]depRef // dependencies as written, resolved once all phases are known
}

func (l *loader) add(sev, code, file string, line int, format string, args ...any) {
	l.plan.Findings = append(l.plan.Findings, Finding{
		Severity: sev,
		Code:     code,
		File:     file,
		Line:     line,
		Message:  fmt.Sprintf(format, args...),
	})
}

func (l *loader) errorf(code, file string, line int, format string, args ...any) {
	l.add(SeverityError, code, file, line, format, args...)
}

func (l *loader) warnf(code, file string, line int, format string, args ...any) {
	l.add(SeverityWarning, code, file, line, format, args...)
}

// sortFindings orders findings like a reader meets them: the master plan
// first, then each phase file in table order, by line.
func (l *loader) sortFindings() {
	rank := map[string]int{l.plan.Path: 0}
	for i, ph := range l.plan.Phases {
		if _, ok := rank[ph.Path]; !ok {
			rank[ph.Path] = i + 1
		}
	}
	slices.SortStableFunc(l.plan.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(rank[a.File], rank[b.File]), cmp.Compare(a.Line, b.Line))
	})
}

// resolvePath turns a link destination written in the file at from into a
// path on disk, relative to that file's directory.
func resolvePath(from, dest string) string {
	if filepath.IsAbs(dest) {
		return filepath.Clean(dest)
	}
	return filepath.Join(filepath.Dir(from), filepath.FromSlash(dest))
}

// normalize makes CRLF (and lone CR) files read exactly like LF files and
// drops a UTF-8 byte order mark; line numbers are unchanged.
func normalize(raw []byte) []byte {
	s := strings.TrimPrefix(string(raw), "\uFEFF")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return []byte(s)
}
