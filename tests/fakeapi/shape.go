package fakeapi

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"strings"
)

// Shape is what a real Claude Code session looked like, as data: per
// assistant turn the API's usage and every tool call with its input and
// the hash of its result (the format of ../shared/session-shapes). No
// prompt, prose or result is kept, so a shape is replayed with harmless
// calls that keep each call's identity, kind and whether its result changed.
type Shape struct {
	Source string      `json:"source"`
	Model  string      `json:"model"`
	Turns  []ShapeTurn `json:"turns"`
}

// ShapeTurn is one assistant message of a shape.
type ShapeTurn struct {
	Usage     Usage       `json:"usage"`
	Tools     []ShapeCall `json:"tools"`
	Sidechain bool        `json:"sidechain"` // a subagent's turn, not the main thread's
}

// ShapeCall is one tool call of a shape. ResultNormSHA1 hashes the result
// with ANSI escapes stripped and digit runs masked; "" when no result came.
type ShapeCall struct {
	Name           string          `json:"name"`
	Input          json.RawMessage `json:"input"`
	ResultSHA1     string          `json:"result_sha1"`
	ResultNormSHA1 string          `json:"result_norm_sha1"`
	ResultLen      int             `json:"result_len"`
	IsError        bool            `json:"is_error"`
}

// Context is the context size a usage reports: input plus both cache
// figures (what debussy's estimator reads).
func (u Usage) Context() int64 { return u.Input + u.CacheRead + u.CacheCreation }

// LoadShape reads a shape file. Unknown fields (the files' stats) are fine.
func LoadShape(file string) (Shape, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Shape{}, fmt.Errorf("read shape: %w", err)
	}
	var s Shape
	if err := json.Unmarshal(data, &s); err != nil {
		return Shape{}, fmt.Errorf("decode shape %s: %w", file, err)
	}
	if s.Source == "" {
		s.Source = file
	}
	return s, nil
}

// Main returns the main thread's turns that made tool calls: what a -p
// session replays. A text-only turn of an interactive session ended its
// turn (the user spoke next) and a subagent's turns are its own session;
// the next main turn's usage already counts both.
func (s Shape) Main() []ShapeTurn {
	var out []ShapeTurn
	for _, t := range s.Turns {
		if !t.Sidechain && len(t.Tools) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// Peak is the largest context of the main turns.
func (s Shape) Peak() int64 {
	var peak int64
	for _, t := range s.Main() {
		peak = max(peak, t.Usage.Context())
	}
	return peak
}

// Scale returns the shape with every turn's input and cache figures scaled
// so that its main-thread peak is peak tokens: a test places a shape below
// or above a threshold. Output tokens stay as they were.
func (s Shape) Scale(peak int64) Shape {
	old := s.Peak()
	if old == 0 {
		return s
	}
	f := float64(peak) / float64(old)
	scale := func(v int64) int64 { return int64(math.Round(float64(v) * f)) }
	out := s
	out.Turns = make([]ShapeTurn, len(s.Turns))
	for i, t := range s.Turns {
		t.Usage.Input, t.Usage.CacheRead, t.Usage.CacheCreation = scale(t.Usage.Input), scale(t.Usage.CacheRead), scale(t.Usage.CacheCreation)
		out.Turns[i] = t
	}
	// Rounding may leave the peak a token or two off; put the difference
	// on the peak turn's input so Peak() is exactly what was asked.
	if d := peak - out.Peak(); d != 0 {
		for i, t := range out.Turns {
			if !t.Sidechain && len(t.Tools) > 0 && t.Usage.Context() == out.Peak() {
				out.Turns[i].Usage.Input = max(t.Usage.Input+d, 0)
				break
			}
		}
	}
	return out
}

// Kind is what a tool call does, as far as a replay cares.
type Kind string

const (
	KindRead       Kind = "read"
	KindEdit       Kind = "edit"
	KindShell      Kind = "shell"
	KindSearch     Kind = "search"
	KindDelegation Kind = "delegation"
)

// KindOf classifies a tool by name; a tool it does not know (TodoWrite,
// BashOutput, an MCP tool) is replayed as a shell command.
func KindOf(tool string) Kind {
	switch tool {
	case "Read", "NotebookRead":
		return KindRead
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return KindEdit
	case "Grep", "Glob", "LS", "ToolSearch", "WebSearch", "WebFetch":
		return KindSearch
	case "Task", "Agent":
		return KindDelegation
	}
	return KindShell
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	Name, Match string
	// Dir is the folder, relative to the session's working directory, that
	// holds the files the replay reads, runs and writes. Default "shape".
	Dir string
	// Delegate replays a delegation as a Task call (whose subagent then
	// talks to the fake API as a session of its own); by default the call
	// is left out, and a turn left with no call at all is dropped.
	Delegate bool
	// End are turns answered after the shape's (e.g. a done signal and a
	// final text); a zero Usage there repeats the shape's last one.
	End []Turn
}

// Replay turns a shape into a conversation: one turn per main-thread turn
// with tool calls, answering that turn's usage, each call replaced by a
// harmless one in Dir. A call keeps its identity (the same original input
// gives the same replayed input), its kind (read → Read of a file, edit →
// Write, shell → Bash running a script, search → Bash grep, delegation →
// Task or left out; neither CLI offers Grep/Glob in -p mode) and whether
// its result changed: the files a call looks at are written by the server
// just before the turn (Turn.Files), with content derived from the
// original's normalized result hash, so a repeated call whose original got
// a different result gets a different one here, and one whose original got
// the same result gets the same. Timing-like digits follow the raw hash, so
// a result that differs only in its digits differs only in its digits here.
func Replay(s Shape, o ReplayOptions) Conversation {
	if o.Dir == "" {
		o.Dir = "shape"
	}
	ids := map[string]int{}
	versions := map[int]map[string]int{} // identity → normalized result hash → version
	c := Conversation{Name: o.Name, Match: o.Match}
	var last Usage
	for _, t := range s.Main() {
		turn := Turn{Usage: t.Usage}
		for _, call := range t.Tools {
			key := call.Name + " " + canonicalJSON(call.Input)
			id, seen := ids[key]
			if !seen {
				id = len(ids)
				ids[key] = id
				versions[id] = map[string]int{}
			}
			vs := versions[id]
			if _, ok := vs[call.ResultNormSHA1]; !ok {
				vs[call.ResultNormSHA1] = len(vs)
			}
			b, files, ok := replayCall(o, KindOf(call.Name), letters(id), call)
			if !ok {
				continue
			}
			turn.Blocks = append(turn.Blocks, b)
			for p, content := range files {
				if turn.Files == nil {
					turn.Files = map[string]string{}
				}
				turn.Files[p] = content
			}
		}
		if len(turn.Blocks) == 0 {
			continue
		}
		c.Turns = append(c.Turns, turn)
		last = t.Usage
	}
	for _, t := range o.End {
		if t.Usage == (Usage{}) {
			t.Usage = last
		}
		c.Turns = append(c.Turns, t)
	}
	return c
}

// replayCall is the harmless stand-in for one call, and the files it needs.
func replayCall(o ReplayOptions, kind Kind, tag string, call ShapeCall) (Block, map[string]string, bool) {
	result := resultText(tag, call)
	switch kind {
	case KindRead:
		p := path.Join(o.Dir, "read-"+tag+".txt")
		return Block{Tool: "Read", Input: map[string]any{"file_path": p}}, map[string]string{p: result}, true
	case KindEdit:
		p := path.Join(o.Dir, "edit-"+tag+".txt")
		return Write(p, "replayed edit "+tag+"\n"), nil, true
	case KindSearch:
		p := path.Join(o.Dir, "search-"+tag+".txt")
		cmd := fmt.Sprintf("grep -rn 'find-%s' %s/", tag, o.Dir)
		return Block{Tool: "Bash", Input: map[string]any{"command": cmd, "description": "replayed search " + tag}},
			map[string]string{p: strings.ReplaceAll(result, "\n", " find-"+tag+"\n")}, true
	case KindDelegation:
		if !o.Delegate {
			return Block{}, nil, false
		}
		return Block{Tool: "Task", Input: map[string]any{"description": "replayed task " + tag,
			"prompt": "replayed delegation " + tag + ": answer ok", "subagent_type": "general-purpose"}}, nil, true
	}
	p := path.Join(o.Dir, "run-"+tag+".sh")
	var script strings.Builder
	for _, line := range strings.Split(strings.TrimRight(result, "\n"), "\n") {
		fmt.Fprintf(&script, "echo '%s'\n", line)
	}
	if call.IsError {
		script.WriteString("exit 1\n")
	}
	return Bash("sh " + p), map[string]string{p: script.String()}, true
}

// resultText is what a replayed call answers: the same text for the same
// normalized hash, a different text (in letters, which digit masking keeps)
// for a different one, digits that follow the raw hash, padded toward the
// original's length (at most 2 KB: the usage, not the text, sets the
// context).
func resultText(tag string, call ShapeCall) string {
	norm := call.ResultNormSHA1
	if norm == "" {
		norm = "0"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "replayed %s result %s took %dms\n", tag, hexLetters(norm, 12), hexDigits(call.ResultSHA1, 4))
	filler := "filler " + hexLetters(norm, 40) + "\n"
	for b.Len()+len(filler) <= min(call.ResultLen, 2048) {
		b.WriteString(filler)
	}
	return b.String()
}

// letters writes n in base 26 with a–z: identities with no digits in them,
// so digit masking cannot make two identities one.
func letters(n int) string {
	s := ""
	for {
		s = string(rune('a'+n%26)) + s
		n /= 26
		if n == 0 {
			return s
		}
		n--
	}
}

func hexLetters(h string, n int) string {
	// A digest first: hashes that share a prefix (or small numbers padded
	// with zeros) still give different letters.
	sum := sha1.Sum([]byte(h))
	h = hex.EncodeToString(sum[:])
	var b strings.Builder
	for i := 0; i < len(h) && i < n; i++ {
		v := strings.IndexByte("0123456789abcdef", h[i])
		b.WriteByte(byte('a' + max(v, 0)))
	}
	return b.String()
}

func hexDigits(h string, n int) int {
	v := 0
	for i := 0; i < len(h) && i < n; i++ {
		v = v*16 + max(strings.IndexByte("0123456789abcdef", h[i]), 0)
	}
	return v
}

// canonicalJSON re-encodes raw with sorted keys, so key order does not
// change a call's identity.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(bytes.TrimSpace(raw))
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Statistics of 15 public sessions (1,569 main-thread tool calls;
// ../shared/session-shapes/README.md) that Generate draws from.
const (
	genMinCalls, genMaxCalls     = 30, 300
	genFirstMin, genFirstMax     = 15000, 41000
	genRepeatRate                = 0.033     // exact repeats among all calls
	genRepeatChangedRate         = 46.0 / 52 // repeats that got a different result
	genRepeatMaxDistance         = 40        // how far back a repeat looks
	genMaxResultLen, genMinDelta = 6000, 40
)

// genDeltaQuantiles is the inverse CDF of the tokens one call adds to the
// context: p25 349, median 632, p75 1,283, p90 2,518 as published; the ends
// are guesses that keep the tail long but finite.
var genDeltaQuantiles = [][2]float64{{0, genMinDelta}, {0.25, 349}, {0.5, 632}, {0.75, 1283}, {0.9, 2518}, {1, 9000}}

// genKinds is the tool mix, shell-heavy like the sample (Bash made most
// calls in both published shapes).
var genKinds = []struct {
	kind Kind
	p    float64
}{{KindShell, 0.45}, {KindRead, 0.25}, {KindEdit, 0.17}, {KindSearch, 0.10}, {KindDelegation, 0.03}}

// Generate draws a main-thread session shape from the published statistics,
// the same for the same seed: calls tool calls (0: 30–300), one per turn, a
// first turn at 15K–41K, the tokens each call adds drawn from the measured
// quantiles, and 3.3 % exact repeats of a recent read, shell or search call,
// most of them with a changed result.
func Generate(seed uint64, calls int) Shape {
	rng := rand.New(rand.NewPCG(seed, 0x5ea55e55))
	if calls <= 0 {
		calls = genMinCalls + rng.IntN(genMaxCalls-genMinCalls+1)
	}
	s := Shape{Source: fmt.Sprintf("generated seed %d, %d calls", seed, calls), Model: "generated"}
	type made struct {
		call    ShapeCall
		version int
	}
	var history []made
	ctx := int64(genFirstMin + rng.IntN(genFirstMax-genFirstMin+1))
	for i := range calls {
		var call ShapeCall
		version := 0
		if j, ok := pickRepeat(rng, len(history), func(j int) bool {
			k := KindOf(history[j].call.Name)
			return k == KindRead || k == KindShell || k == KindSearch
		}); ok {
			call, version = history[j].call, history[j].version
			if rng.Float64() < genRepeatChangedRate {
				version = i + 1 // a version no earlier call had
			}
		} else {
			call = genCall(rng, i)
		}
		call.ResultNormSHA1 = sha1Hex(fmt.Sprintf("%s %s %d", call.Name, call.Input, version))
		call.ResultSHA1 = sha1Hex(fmt.Sprintf("%s %d", call.ResultNormSHA1, rng.IntN(1000)))
		call.ResultLen = rng.IntN(genMaxResultLen)
		call.IsError = rng.Float64() < 0.05
		history = append(history, made{call, version})
		u := Usage{Input: int64(1 + rng.IntN(6)), Output: int64(50 + rng.IntN(750))}
		if i == 0 {
			u.CacheCreation = ctx / 2
		} else {
			u.CacheCreation = drawDelta(rng)
			ctx += u.CacheCreation
		}
		u.CacheRead = ctx - u.Input - u.CacheCreation
		s.Turns = append(s.Turns, ShapeTurn{Usage: u, Tools: []ShapeCall{call}})
	}
	return s
}

// pickRepeat decides whether call n repeats an earlier one, and which.
func pickRepeat(rng *rand.Rand, n int, eligible func(int) bool) (int, bool) {
	if n == 0 || rng.Float64() >= genRepeatRate {
		return 0, false
	}
	for range 8 {
		j := n - 1 - rng.IntN(min(n, genRepeatMaxDistance))
		if eligible(j) {
			return j, true
		}
	}
	return 0, false
}

func genCall(rng *rand.Rand, i int) ShapeCall {
	r, kind := rng.Float64(), KindShell
	for _, k := range genKinds {
		if r < k.p {
			kind = k.kind
			break
		}
		r -= k.p
	}
	var name string
	var input any
	switch kind {
	case KindRead:
		name, input = "Read", map[string]any{"file_path": fmt.Sprintf("/src/file%d.go", i)}
	case KindEdit:
		name, input = "Edit", map[string]any{"file_path": fmt.Sprintf("/src/file%d.go", rng.IntN(i+1)),
			"old_string": fmt.Sprintf("old %d", i), "new_string": fmt.Sprintf("new %d", i)}
	case KindSearch:
		name, input = "Grep", map[string]any{"pattern": fmt.Sprintf("symbol%d", i), "path": "/src"}
	case KindDelegation:
		name, input = "Task", map[string]any{"description": fmt.Sprintf("subtask %d", i), "prompt": fmt.Sprintf("look into %d", i)}
	default:
		name, input = "Bash", map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", i)}
	}
	raw, _ := json.Marshal(input)
	return ShapeCall{Name: name, Input: raw}
}

func drawDelta(rng *rand.Rand) int64 {
	u := rng.Float64()
	q := genDeltaQuantiles
	for k := 1; k < len(q); k++ {
		if u <= q[k][0] {
			f := (u - q[k-1][0]) / (q[k][0] - q[k-1][0])
			return int64(q[k-1][1] + f*(q[k][1]-q[k-1][1]))
		}
	}
	return int64(q[len(q)-1][1])
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
