package estimator

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/debussy-dev/debussy/event"
)

// Kinds of nudge (seed economics).
const (
	NudgeDoomLoop    = "doom_loop"   // the same call again and again
	NudgeExploration = "exploration" // reading without ever editing
)

// nudgeArgsRunes bounds a nudge's arguments: they are quoted to the agent
// and kept in the ledger.
const nudgeArgsRunes = 120

// NudgeConfig holds the nudges' thresholds; 0 disables each.
type NudgeConfig struct {
	// Repeat identical (call, result) pairs within the last RepeatWindow
	// main-thread results are a doom loop; at RepeatRestart the session
	// should restart. A repeat counts only when its result is a failure or
	// nothing was written since the previous identical call: the same call
	// with a changing result (a test run after each edit), or a silent
	// successful check after each edit (`go build ./...`), is progress.
	Repeat, RepeatWindow, RepeatRestart int
	// ExploreReads reads without an edit in between are too many.
	ExploreReads int
	// Cooldown is how many main-thread calls must pass after a nudge
	// before another of the same kind.
	Cooldown int
}

// Nudge is one note the agent should hear about its own behaviour.
type Nudge struct {
	Kind    string // NudgeDoomLoop or NudgeExploration
	Tool    string // the call that triggered it
	Args    string // its input as short canonical JSON
	Count   int    // identical (call, result) pairs in a row that made no progress, or reads since the last edit
	Restart bool   // a doom loop at RepeatRestart: end the session
}

// Nudger watches one session's main-thread tool calls (Observe) and their
// results (ObserveResult). Like the Estimator it is pure and not safe for
// concurrent use.
type Nudger struct {
	cfg       NudgeConfig
	seen      map[string]bool // tool_use ids of main-thread calls
	sub       map[string]bool // tool_use ids of subagents' calls
	open      map[string]event.ToolUse
	judged    map[string]bool // ids whose result was judged (PostToolUse) or is not the agent's (Skip)
	calls     int             // main-thread calls observed
	results   int             // main-thread results observed
	writes    int             // successful main-thread calls that may have changed files
	recent    []repeat        // the last RepeatWindow results, oldest first
	reads     int             // reads since the last edit
	lastNudge map[string]int
	restarted bool
}

// repeat is one judged result: its (call, result) key, how many identical
// ones in a row made no progress (chain), and the writes counted after it.
type repeat struct {
	key   string
	chain int
	mark  int
}

// NewNudger returns a Nudger for one session.
func NewNudger(c NudgeConfig) *Nudger {
	return &Nudger{cfg: c, seen: map[string]bool{}, sub: map[string]bool{}, open: map[string]event.ToolUse{},
		judged: map[string]bool{}, lastNudge: map[string]int{}}
}

// Skip leaves a call out of loop judging: debussy refused it (its
// is_error result is debussy's, not the agent's failure).
func (n *Nudger) Skip(id string) {
	if id != "" {
		n.judged[id] = true
	}
}

// Observe folds one stream event in and returns the nudges it causes, if
// any: exploration on calls, loops on failed results. A failed tool gets
// no PostToolUse (measured on 2.1.197 and 2.1.332: the CLI calls
// PostToolUseFailure instead), so its is_error tool_result in the stream
// is where it is judged; successes are judged at PostToolUse
// (ObserveResult), before the agent reads them.
func (n *Nudger) Observe(ev event.Event) []Nudge {
	if len(ev.ToolResults) > 0 {
		return n.failures(ev.ToolResults)
	}
	a := ev.Assistant
	if a == nil {
		return nil
	}
	if !a.MainThread() {
		for _, tu := range a.ToolUses {
			n.sub[tu.ID] = true
		}
		return nil
	}
	var out []Nudge
	for _, tu := range a.ToolUses {
		if tu.ID != "" {
			if n.seen[tu.ID] {
				continue // the CLI repeats a response's blocks
			}
			n.seen[tu.ID] = true
			n.open[tu.ID] = tu
		}
		out = append(out, n.call(tu)...)
	}
	return out
}

func (n *Nudger) call(tu event.ToolUse) []Nudge {
	n.calls++
	switch {
	case isEdit(tu):
		n.reads = 0
	case isRead(tu):
		n.reads++
		if r := n.cfg.ExploreReads; r > 0 && n.reads >= r && n.ready(NudgeExploration, n.calls) {
			args, _ := canonicalArgs(tu.Input)
			return []Nudge{{Kind: NudgeExploration, Tool: tu.Name, Args: clipArgs(args), Count: n.reads}}
		}
	}
	return nil
}

// failures judges the main thread's failed results not judged at a hook.
func (n *Nudger) failures(trs []event.ToolResult) []Nudge {
	var out []Nudge
	for _, tr := range trs {
		tu, ok := n.open[tr.ToolUseID]
		delete(n.open, tr.ToolUseID)
		if !ok || tr.ParentToolUseID != "" || n.judged[tr.ToolUseID] {
			delete(n.judged, tr.ToolUseID)
			continue
		}
		if tr.IsError {
			if nd, ok := n.judge(tu.Name, tu.ID, tu.Input, tr.Content, true); ok {
				out = append(out, nd)
			}
		}
	}
	return out
}

// ObserveResult folds in one tool's successful result (the PostToolUse
// hook's tool_response) and returns the doom-loop nudge it causes, if any.
// A loop is no progress: the same call with the same result, compared
// after normalizing (ANSI escapes stripped, digit runs masked, so timings
// and PIDs are not progress), with nothing written since the previous one.
// Subagents' calls do not count.
func (n *Nudger) ObserveResult(tool, id string, input json.RawMessage, result string) (Nudge, bool) {
	if id != "" && n.sub[id] {
		return Nudge{}, false
	}
	if id != "" {
		n.judged[id] = true // its tool_result follows in the stream
	}
	return n.judge(tool, id, input, result, false)
}

// judge counts one result. A failure always counts toward a loop (the
// same failing test after each edit is one); a success only when no other
// call wrote since the previous identical one — `go build ./...` after
// each edit, silent each time, is progress.
func (n *Nudger) judge(tool, id string, input json.RawMessage, result string, failed bool) (Nudge, bool) {
	n.results++
	args, canonical := canonicalArgs(input)
	sum := sha256.Sum256([]byte(NormalizeResult(result)))
	key := tool + "\x00" + args + "\x00" + string(sum[:])
	if !canonical {
		key += "\x00" + id // an input too large to keep is never "identical"
	}
	r := repeat{key: key, chain: 1}
	for i := len(n.recent) - 1; i >= 0; i-- {
		if prev := n.recent[i]; prev.key == key {
			if failed || n.writes == prev.mark {
				r.chain = prev.chain + 1
			}
			break
		}
	}
	// The call's own writes come after the comparison: a repeated
	// command that may write (a build) is not progress by itself.
	if !failed && isEdit(event.ToolUse{Name: tool, Input: input}) {
		n.writes++
	}
	r.mark = n.writes
	if w := n.cfg.RepeatWindow; w > 0 {
		n.recent = append(n.recent, r)
		if len(n.recent) > w {
			n.recent = n.recent[len(n.recent)-w:]
		}
	} else {
		return Nudge{}, false
	}
	return n.doomLoop(tool, r.chain, args)
}

// ansiEscape matches CSI and OSC terminal sequences.
var ansiEscape = regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])`)

var digitRun = regexp.MustCompile(`[0-9]+`)

// NormalizeResult is a tool result as loops compare it: its text (see
// resultText), without ANSI escapes, every digit run one "0" (durations,
// PIDs, timestamps).
func NormalizeResult(s string) string {
	return digitRun.ReplaceAllString(ansiEscape.ReplaceAllString(resultText(s), ""), "0")
}

// resultText is the text in a tool's response: a JSON object's or array's
// strings, in key order, and not its flags and counts, which are the CLI's
// bookkeeping beside the tool's output — 2.1.332 gives the first Bash call
// of a session a "bashEditDiff" object ({"files":[],"unavailable":true})
// that the same call lacks after it, so five identical calls never looked
// identical. Any other result is its own text.
func resultText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return s
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return s
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte(0)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}

func (n *Nudger) doomLoop(tool string, count int, args string) (Nudge, bool) {
	if n.cfg.Repeat <= 0 && n.cfg.RepeatRestart <= 0 {
		return Nudge{}, false
	}
	nd := Nudge{Kind: NudgeDoomLoop, Tool: tool, Args: clipArgs(args), Count: count}
	// The restart is never held back by the cooldown: the loop has gone
	// on despite the nudges. It is asked for once; a session that goes on
	// (restarts disabled) hears plain nudges again.
	if r := n.cfg.RepeatRestart; r > 0 && count >= r && !n.restarted {
		n.restarted = true
		n.lastNudge[NudgeDoomLoop] = n.results
		nd.Restart = true
		return nd, true
	}
	if r := n.cfg.Repeat; r > 0 && count >= r && n.ready(NudgeDoomLoop, n.results) {
		return nd, true
	}
	return Nudge{}, false
}

// ready reports whether a nudge of kind may be sent at count now (calls
// for exploration, results for loops), and if so starts its cooldown.
func (n *Nudger) ready(kind string, now int) bool {
	if last, ok := n.lastNudge[kind]; ok && now-last <= n.cfg.Cooldown {
		return false
	}
	n.lastNudge[kind] = now
	return true
}

// canonicalArgs is input as whitespace-free JSON with sorted keys, so the
// same call spelled twice compares equal; ok is false without an input
// (too large for the runner to keep).
func canonicalArgs(input json.RawMessage) (string, bool) {
	if len(input) == 0 {
		return "", false
	}
	var v any
	if json.Unmarshal(input, &v) != nil {
		return string(input), true
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "a > b" stays readable in a nudge
	if enc.Encode(v) != nil {
		return string(input), true
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

func clipArgs(s string) string {
	r := []rune(s)
	if len(r) <= nudgeArgsRunes {
		return s
	}
	return string(r[:nudgeArgsRunes-1]) + "…"
}

func isEdit(tu event.ToolUse) bool {
	switch tu.Name {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return true
	case "Bash":
		return !ReadOnlyCommand(bashCommand(tu))
	}
	return false
}

func isRead(tu event.ToolUse) bool {
	switch tu.Name {
	case "Read", "Grep", "Glob", "LS":
		return true
	case "Bash":
		return ReadOnlyCommand(bashCommand(tu))
	}
	return false
}

func bashCommand(tu event.ToolUse) string {
	if tu.Command != "" {
		return tu.Command
	}
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(tu.Input, &in)
	return in.Command
}

// readOnlyCommands only look: each segment of a read-only command line
// starts with one of them (cd and pwd move around, nothing more).
var readOnlyCommands = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "ls": true, "grep": true, "rg": true,
	"find": true, "wc": true, "tree": true, "cd": true, "pwd": true,
}

var readOnlyGit = map[string]bool{"status": true, "log": true, "diff": true, "show": true}

// harmlessRedirects write nothing the agent made.
var harmlessRedirects = strings.NewReplacer("2>&1", "", "&>/dev/null", "", "2>/dev/null", "", ">/dev/null", "")

// ReadOnlyCommand reports whether a shell command line only reads: every
// segment (split on ;, &&, || and |) starts with a reading command, and
// nothing is redirected into a file. It is a heuristic for nudges, not a
// sandbox.
func ReadOnlyCommand(cmd string) bool {
	cmd = harmlessRedirects.Replace(cmd)
	if strings.TrimSpace(cmd) == "" || strings.Contains(cmd, ">") {
		return false
	}
	segments := strings.FieldsFunc(cmd, func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' })
	for _, seg := range segments {
		words := strings.Fields(seg)
		if len(words) == 0 {
			continue
		}
		switch first := words[0]; {
		case first == "git":
			if len(words) < 2 || !readOnlyGit[words[1]] {
				return false
			}
		case first == "find":
			for _, w := range words[1:] {
				if w == "-delete" || strings.HasPrefix(w, "-exec") || strings.HasPrefix(w, "-ok") || strings.HasPrefix(w, "-fprint") {
					return false
				}
			}
		case !readOnlyCommands[first]:
			return false
		}
	}
	return true
}
