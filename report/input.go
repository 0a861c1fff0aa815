// Package report draws what a run recorded — the ledger, events.jsonl, each
// session's raw stream and the run's commits — as one self-contained HTML
// page (inline SVG, no script, no network) or as markdown with Mermaid
// charts for GitHub; and it words a run's end: the summary printed when a
// run ends, its GitHub step summary, the spend line `status` shows. It reads
// no files and runs nothing: the caller hands it the recorded data as values.
package report

import (
	"regexp"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// Input is everything one run left behind.
type Input struct {
	Run      *state.Run
	PlanName string // the master plan's title, or its path
	// Events are events.jsonl's lines, in order (state.ReadLog).
	Events []record.Line
	// Sessions are the sessions' digested streams.
	Sessions map[SessionKey]*Digest
	// Commits are the run's commits as git has them (ReadCommit of the
	// ledger's hashes); their Debussy-Session trailer names the session.
	Commits []gitcommit.CommitInfo
	// Signals are the `debussy done` signals left per phase.
	Signals map[string]*state.Signal
	// Threshold, Window and MaxTokens are the config's
	// context_threshold, context_window and context_max_tokens, for runs
	// whose events do not record them.
	Threshold int
	Window    int64
	MaxTokens int64
	// Tuning is `debussy tune` on the run's sessions; nil leaves it out.
	Tuning *Tuning
}

// SessionKey names one session of one phase; N counts from 1.
type SessionKey struct {
	Phase string
	N     int
}

// Point is the context after one main-thread response.
type Point struct {
	Turn      int
	Tokens    int64
	ToolCalls int // main-thread tool calls so far
}

// Digest is one session's stream boiled down to what a report shows. Feed
// it the raw lines in order with Line.
type Digest struct {
	est   *estimator.Estimator
	acct  *budget.Accountant
	snap  estimator.Snapshot
	price budget.Prices

	Points        []Point
	Tools         map[string]int // main-thread tool calls by name
	SubagentTools int
	// DoneTurns are the turns whose Bash ran `debussy done`.
	DoneTurns []int
	// StopTurns are the turns at which the CLI's Stop hook came.
	StopTurns []int
	Result    *runner.Result // the last result line, if any
	BadLines  int            // lines that were not readable JSON

	toolTurn map[string]int  // tool_use id → turn
	pathTurn map[string]int  // file written or edited → latest turn
	seenTool map[string]bool // tool_use ids counted
	subSeen  map[string]bool // subagent tool_use ids counted
	window   int64           // from config, 0: the estimator's
	model    string          // init's
}

// NewDigest starts a session's digest. window is context_window (0: from
// the model and the CLI's result); prices price its tokens (nil: defaults).
func NewDigest(window int64, prices budget.Prices) *Digest {
	if prices == nil {
		prices = budget.DefaultPrices()
	}
	return &Digest{
		est:      estimator.New(estimator.Config{Window: window}),
		acct:     budget.NewAccountant(prices),
		price:    prices,
		Tools:    map[string]int{},
		toolTurn: map[string]int{},
		pathTurn: map[string]int{},
		seenTool: map[string]bool{},
		subSeen:  map[string]bool{},
		window:   window,
	}
}

// doneCommand matches the agent's own `debussy done` (not `debussy done
// --help` in prose: it must be a command word).
var doneCommand = regexp.MustCompile(`(^|[;&|(\s/])debussy\s+done(\s|$)`)

// runsDone reports whether a Bash command runs `debussy done`. A heredoc's
// body is data (a handoff that says "then run debussy done"), not a command.
func runsDone(cmd string) bool {
	for _, l := range strings.Split(cmd, "\n") {
		code, _, heredoc := strings.Cut(l, "<<")
		if doneCommand.MatchString(code) {
			return true
		}
		if heredoc {
			return false
		}
	}
	return false
}

// Line digests one raw line of session-N.jsonl.
func (d *Digest) Line(line []byte) {
	ev, err := runner.Parse(line)
	if err != nil {
		d.BadLines++
		return
	}
	d.Observe(ev)
}

// Observe digests one parsed event.
func (d *Digest) Observe(ev runner.Event) {
	d.snap = d.est.Observe(ev)
	d.acct.Observe(ev)
	turn := d.snap.Messages
	switch ev.Kind {
	case runner.KindInit:
		d.model = ev.Init.Model
	case runner.KindAssistant:
		a := ev.Assistant
		if !a.MainThread() {
			for _, tu := range a.ToolUses {
				if !d.subSeen[tu.ID] {
					d.subSeen[tu.ID] = true
					d.SubagentTools++
				}
			}
			return
		}
		if turn > 0 {
			p := Point{Turn: turn, Tokens: d.snap.Tokens, ToolCalls: d.snap.ToolCalls}
			if len(d.Points) == turn {
				d.Points[turn-1] = p
			} else {
				d.Points = append(d.Points, p)
			}
		}
		for _, tu := range a.ToolUses {
			if tu.ID != "" && d.seenTool[tu.ID] {
				continue
			}
			d.seenTool[tu.ID] = true
			d.Tools[tu.Name]++
			d.toolTurn[tu.ID] = turn
			if tu.FilePath != "" {
				d.pathTurn[tu.FilePath] = turn
			}
			if runsDone(tu.Command) && !slices.Contains(d.DoneTurns, turn) {
				d.DoneTurns = append(d.DoneTurns, turn)
			}
		}
	case runner.KindHook:
		if ev.Hook != nil && ev.Hook.Event == runner.HookStop {
			d.StopTurns = append(d.StopTurns, turn)
		}
	case runner.KindResult:
		d.Result = ev.Result
	}
}

// Window is the context window the session's percentages are of.
func (d *Digest) Window() int64 {
	if d.snap.Window > 0 {
		return d.snap.Window
	}
	return estimator.DefaultWindow
}

// Model is the session's main model, from its init line.
func (d *Digest) Model() string { return d.model }

// Spent is what the session spent, priced.
func (d *Digest) Spent() budget.Totals { return d.acct.Totals() }

// ToolTurn is the turn that called the tool_use id, or -1.
func (d *Digest) ToolTurn(id string) int {
	if t, ok := d.toolTurn[id]; ok {
		return t
	}
	return -1
}

// PathTurn is the latest turn that wrote or edited path, or -1.
func (d *Digest) PathTurn(path string) int {
	if t, ok := d.pathTurn[path]; ok {
		return t
	}
	return -1
}

// Turns is the number of main-thread responses.
func (d *Digest) Turns() int { return len(d.Points) }
