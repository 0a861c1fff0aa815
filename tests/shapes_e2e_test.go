package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Real session shapes replayed through the real CLI with debussy's default
// settings (issue 16): long phases of small calls are normal work, the same
// call with a changing result is progress, only the same call with the same
// result is a loop, and a session is stopped at its context threshold — at
// the crossing, not before.

// shapesConfig is added to every config of this file. Empty in CI: the
// tests are about the defaults. Set DEBUSSY_TEST_SHAPES_CONFIG (YAML, "\n"
// for newlines) to check the harness against other settings.
var shapesConfig = strings.ReplaceAll(os.Getenv("DEBUSSY_TEST_SHAPES_CONFIG"), `\n`, "\n")

// shapeWindow is the window of the model the threshold tests name
// (claude-sonnet-4-5 on both CLIs), and shapeThreshold the default
// context_threshold, in tokens.
const (
	shapeWindow    = 200000
	shapeThreshold = shapeWindow * 80 / 100
	shapeModel     = "model: claude-sonnet-4-5\n"
)

// finishing ends a replayed phase: the done signal, then the final text.
var finishing = []fakeapi.Turn{{Blocks: []fakeapi.Block{done("1")}}, {Blocks: []fakeapi.Block{fakeapi.Text("Phase 1 done.")}}}

// handoffAsked finds debussy's handoff request wherever the CLI put it.
var handoffAsked = regexp.MustCompile("Write your handoff NOW to `([^`]+)`")

func handoffPath(r fakeapi.Request) string {
	for _, s := range slices.Concat(r.ToolResults, r.HookContext, []string{r.LastUser}, r.Added) {
		if m := handoffAsked.FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	return ""
}

// writesHandoff is the fake model doing what debussy asks at the
// threshold: writing its handoff, at the usage u.
func writesHandoff(u fakeapi.Usage) func(fakeapi.Request) (fakeapi.Turn, bool) {
	return func(r fakeapi.Request) (fakeapi.Turn, bool) {
		p := handoffPath(r)
		if p == "" {
			return fakeapi.Turn{}, false
		}
		return fakeapi.Turn{Usage: u, Blocks: []fakeapi.Block{fakeapi.Write(p, "## Completed\nreplayed work up to the threshold\n")}}, true
	}
}

// replayPhase runs phase 1 as conv (then a fresh session that only says
// done) with config, and returns the harness and the result.
func replayPhase(t *testing.T, conv fakeapi.Conversation, config string) (*harness, result) {
	t.Helper()
	conv.Name, conv.Match = "replay", phaseMatch("1")
	if conv.React == nil && len(conv.Turns) > 0 {
		conv.React = writesHandoff(conv.Turns[len(conv.Turns)-1].Usage)
	}
	script := fakeapi.Script{Conversations: []fakeapi.Conversation{conv,
		{Name: "fresh", Match: phaseMatch("1"), Turns: []fakeapi.Turn{turn(20000, done("1")), turn(21000, fakeapi.Text("ok"))}},
	}}
	h := newHarness(t, script, []phaseSpec{{ID: "1", Title: "Replay"}}, config+shapesConfig)
	start := time.Now()
	r := h.run("run", "plan/MASTER_PLAN.md")
	t.Logf("replayed %d turns in %s", len(conv.Turns), time.Since(start).Round(time.Millisecond))
	return h, r
}

// events returns the run's events named name, decoded.
func (h *harness) events(name string) []map[string]any {
	h.t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(h.runFiles("events.jsonl")))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			h.t.Fatalf("events.jsonl: %v: %s", err, sc.Bytes())
		}
		if m["event"] == name {
			out = append(out, m)
		}
	}
	return out
}

// oneSession checks a phase that must complete in one session: exit 0,
// one session that was served every scripted turn, no handoff asked, no
// threshold trigger, no loop restart.
func oneSession(t *testing.T, h *harness, r result, conv fakeapi.Conversation) {
	t.Helper()
	if r.Code != 0 {
		t.Errorf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 1 {
		t.Errorf("want 1 session, got %d; session_ended: %v", len(sessions), h.events("session_ended"))
	}
	if len(sessions) > 0 {
		s := sessions[0]
		for i, req := range s {
			if handoffPath(req) != "" {
				t.Errorf("request %d of %d asks for a handoff (context %s)", i, len(s), percentAt(conv, i-1))
				break
			}
		}
		if len(s) < len(conv.Turns) {
			t.Errorf("the session ended after %d of %d scripted turns", len(s), len(conv.Turns))
		}
	}
	for _, ev := range []string{"trigger", "handoff_requested", "emergency_stop"} {
		if e := h.events(ev); len(e) > 0 {
			t.Errorf("%s: %v", ev, e[0])
		}
	}
	for _, nd := range h.events("nudge") {
		if nd["restart"] == true {
			t.Errorf("a loop restart: %v", nd)
		}
	}
}

// loopRestarted checks a phase whose loop restarts its session once:
// exit 0, two sessions, the looping one ending after requests requests,
// call under "## Avoid" in the next session's checkpoint, one loop restart
// in events.jsonl.
func loopRestarted(t *testing.T, h *harness, r result, requests int, call string) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	sessions := h.requestsOf(phaseMatch("1"))
	if len(sessions) != 2 {
		t.Fatalf("want 2 sessions (a restart for the loop), got %d", len(sessions))
	}
	if n := len(sessions[0]); n != requests {
		t.Errorf("the looping session made %d requests, want %d", n, requests)
	}
	first := sessions[1][0].FirstUser
	if i := strings.Index(first, "## Avoid"); i < 0 || !strings.Contains(first[i:], call) {
		t.Errorf("the next session's prompt lacks the call under Avoid:\n%s", first)
	}
	restarts := 0
	for _, nd := range h.events("nudge") {
		if nd["restart"] == true {
			restarts++
		}
	}
	if restarts != 1 {
		t.Errorf("%d loop restarts in events.jsonl, want 1", restarts)
	}
}

// percentAt describes the context of scripted turn i against the window.
func percentAt(c fakeapi.Conversation, i int) string {
	if i < 0 || i >= len(c.Turns) {
		return "-"
	}
	tok := c.Turns[i].Usage.Context()
	return fmt.Sprintf("%d = %.1f %% of %dK", tok, 100*float64(tok)/shapeWindow, shapeWindow/1000)
}

// phaseOfCalls is a shape of calls at 20K → 60K of context (≤ 30 % of
// 200K, 6 % of 1M). With repeats, each edit is followed by the same test
// command and the same read, whose results change after every edit;
// without, an edit and a listing of a new directory alternate.
func phaseOfCalls(calls int, repeats bool) fakeapi.Shape {
	var s fakeapi.Shape
	for i := range calls {
		var c fakeapi.ShapeCall
		switch {
		case repeats && i%3 == 1:
			c = fakeapi.ShapeCall{Name: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}
		case repeats && i%3 == 2:
			c = fakeapi.ShapeCall{Name: "Read", Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}
		case i%2 == 0:
			c = fakeapi.ShapeCall{Name: "Edit", Input: json.RawMessage(fmt.Sprintf(`{"file_path":"/src/main.go","old_string":"v%d","new_string":"v%d"}`, i, i+1))}
		default:
			c = fakeapi.ShapeCall{Name: "Bash", Input: json.RawMessage(fmt.Sprintf(`{"command":"ls /src/dir%d"}`, i))}
		}
		// A new result after every edit: the i/3-th state of the code.
		c.ResultNormSHA1 = fmt.Sprintf("%040x", i/3+1)
		c.ResultSHA1 = c.ResultNormSHA1
		ctx := int64(20000 + i*40000/(calls-1))
		s.Turns = append(s.Turns, fakeapi.ShapeTurn{Usage: fakeapi.Usage{Input: 3, CacheRead: ctx - 503, CacheCreation: 500, Output: 120},
			Tools: []fakeapi.ShapeCall{c}})
	}
	return s
}

// (a) A phase of 80 tool calls at ≤ 30 % context completes in one session
// with the default settings, also with the same test command and the same
// read repeated between edits, their results changing after every edit
// (27 runs of each, 7 within any 20 calls).
func TestShapesLongPhaseOneSession(t *testing.T) {
	claudetest.CLISensitive(t, "the hooks over a long session")
	conv := fakeapi.Replay(phaseOfCalls(80, true), fakeapi.ReplayOptions{End: finishing})
	h, r := replayPhase(t, conv, "")
	oneSession(t, h, r, conv)
	for _, nd := range h.events("nudge") {
		if nd["kind"] == "doom_loop" {
			t.Errorf("a loop nudge for a call whose result changes: %v", nd)
		}
	}
}

// (b) Five identical calls with identical results — also when only their
// digits differ, like a timing — restart the session, and the call is
// under "Avoid" in the next session's checkpoint.
func TestShapesLoopRestartsWithAvoid(t *testing.T) {
	claudetest.CLISensitive(t, "tool results as the CLI reports them")
	for _, tt := range []struct{ name, cmd string }{
		{"identical", "ls plan"},
		{"digits differ", "echo took $(date +%N)ns"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			same := fakeapi.Bash(tt.cmd)
			var turns []fakeapi.Turn
			for i := range 8 {
				turns = append(turns, turn(int64(20000+1000*i), same))
			}
			h, r := replayPhase(t, fakeapi.Conversation{Turns: append(turns, finishing...)}, "")
			// Requests 1..5 follow calls 1..5; the fifth call ends the session.
			loopRestarted(t, h, r, 5, tt.cmd)
		})
	}
}

// (c) Replayed real and generated shapes with the default settings (the
// model named so the window is 200K on every CLI): a session whose context
// stays below context_threshold runs in one session with no handoff; one
// that crosses is stopped at the crossing — the first turn at or above the
// threshold — and not before. Delegations are replayed as Task calls whose
// subagents talk to the fake API as sessions of their own.
func TestShapesReplay(t *testing.T) {
	load := func(name string) fakeapi.Shape {
		s, err := fakeapi.LoadShape(filepath.Join("fakeapi", "testdata", "shapes", name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	x402, speakfree := load("09-privacy-x402.json"), load("13-speakfree-vscode.json")
	// On the second CLI one shape below the threshold and one crossing it
	// cover what the CLI can change (its usage and hooks on long sessions);
	// the other rows test debussy's decisions again.
	for _, tt := range []struct {
		name     string
		shape    fakeapi.Shape
		bothCLIs bool
	}{
		{"real 09 as recorded (peak 32 %)", x402, false},
		{"real 13 as recorded (peak 50 %)", speakfree, true},
		{"generated seed 1 at peak 78 %", fakeapi.Generate(1, 30).Scale(shapeWindow * 78 / 100), false},
		{"real 09 crossing (peak 85 %)", x402.Scale(shapeWindow * 85 / 100), true},
		{"generated seed 2 crossing (peak 84 %)", fakeapi.Generate(2, 30).Scale(shapeWindow * 84 / 100), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.bothCLIs {
				claudetest.OncePerSuite(t, "another shape of the same kind")
			}
			conv := fakeapi.Replay(tt.shape, fakeapi.ReplayOptions{End: finishing, Delegate: true})
			crossing := slices.IndexFunc(conv.Turns, func(t fakeapi.Turn) bool { return t.Usage.Context() >= shapeThreshold })
			h, r := replayPhase(t, conv, shapeModel)
			if crossing < 0 {
				oneSession(t, h, r, conv)
				return
			}
			t.Logf("crossing at turn %d of %d: %s", crossing, len(conv.Turns), percentAt(conv, crossing))
			if r.Code != 0 {
				t.Errorf("want exit 0: %s", r)
			}
			sessions := h.requestsOf(phaseMatch("1"))
			if len(sessions) != 2 {
				t.Fatalf("want 2 sessions (one restart at the crossing), got %d", len(sessions))
			}
			s := sessions[0]
			asked := slices.IndexFunc(s, func(r fakeapi.Request) bool { return handoffPath(r) != "" })
			// Request k+1 is the first after response k, the crossing one.
			switch {
			case asked < 0:
				t.Errorf("the first session (%d requests) was never asked for a handoff", len(s))
			case asked < crossing+1:
				t.Errorf("handoff asked in request %d, after turn %d at %s: before the crossing at turn %d (%s)",
					asked, asked-1, percentAt(conv, asked-1), crossing, percentAt(conv, crossing))
			case asked > crossing+1:
				t.Errorf("handoff asked in request %d: after the crossing at turn %d (%s)", asked, crossing, percentAt(conv, crossing))
			}
			if len(s) > crossing+2 {
				t.Errorf("the first session made %d requests: it went on after the crossing (turn %d) and its handoff", len(s), crossing)
			}
			trig := h.events("trigger")
			if len(trig) != 1 || trig[0]["trigger"] != "context" || int64(num(trig[0]["tokens"])) != conv.Turns[crossing].Usage.Context() {
				t.Errorf("trigger events %v, want one context trigger at %d tokens", trig, conv.Turns[crossing].Usage.Context())
			}
		})
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// (d) With its default model (no --model) a CLI whose default window is
// 1M — npm's latest, and the pinned one's claude-opus-4-8[1m] — runs on
// from a first response at 300K: 30 %, not "150 % of 200K".
func TestShapesDefaultModelWindow(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's default model and window")
	model, window := cliDefaultModel(t)
	if window < 1000000 {
		t.Skipf("the CLI's default model %s has a %dK window: a first response at 300K would overflow it; "+
			"the point needs a 1M default (npm's latest CLI has one)", model, window/1000)
	}
	t.Logf("default model %s, window %dK", model, window/1000)
	conv := fakeapi.Conversation{Turns: []fakeapi.Turn{
		turn(300000, fakeapi.Bash("echo big > big.txt")),
		turn(301000, done("1")),
		turn(302000, fakeapi.Text("ok")),
	}}
	h, r := replayPhase(t, conv, "")
	oneSession(t, h, r, conv)
	h.checkCosts(t)
}

// (e) On the CLI's default model and on a model of the price table, every
// session's cost (session_ended's cost_usd) equals the CLI's own
// total_cost_usd within 1 %, also across a restart.
func TestShapesCostMatchesCLI(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's own total_cost_usd")
	for _, tt := range []struct{ name, config string }{
		{"default model", ""},
		{"claude-sonnet-4-5", shapeModel},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conv := fakeapi.Replay(fakeapi.Generate(5, 12).Scale(shapeWindow*85/100), fakeapi.ReplayOptions{End: finishing})
			// The crossing restarts the session on the 200K model; on a 1M
			// default it runs on: both are sessions to price.
			h, r := replayPhase(t, conv, tt.config)
			if r.Code != 0 {
				t.Fatalf("want exit 0: %s", r)
			}
			h.checkCosts(t)
		})
	}
}

// checkCosts compares every session's cost_usd with the CLI's
// total_cost_usd in that session's log (its last result line).
func (h *harness) checkCosts(t *testing.T) {
	t.Helper()
	ended := h.events("session_ended")
	if len(ended) == 0 {
		t.Fatal("no session_ended events")
	}
	for _, e := range ended {
		log := h.runFiles(fmt.Sprintf("phase-%v/session-%v.jsonl", e["phase"], e["session"]))
		cli, model := -1.0, ""
		for _, line := range strings.Split(log, "\n") {
			var res struct {
				Type       string                     `json:"type"`
				Total      float64                    `json:"total_cost_usd"`
				ModelUsage map[string]json.RawMessage `json:"modelUsage"`
			}
			if json.Unmarshal([]byte(line), &res) == nil && res.Type == "result" {
				cli = res.Total
				for m := range res.ModelUsage {
					model = m
				}
			}
		}
		got := num(e["cost_usd"])
		t.Logf("phase %v session %v (%s): debussy $%.6f, CLI $%.6f", e["phase"], e["session"], model, got, cli)
		switch {
		case cli < 0:
			t.Errorf("phase %v session %v: no result line in its log", e["phase"], e["session"])
		case math.Abs(got-cli) > 0.01*cli+1e-9:
			t.Errorf("phase %v session %v on %s: cost $%.6f, the CLI's total_cost_usd $%.6f (%.2f×)",
				e["phase"], e["session"], model, got, cli, got/cli)
		}
	}
}

// cliDefaultModel asks the CLI under test which model it runs without
// --model and its window (the result's modelUsage), against a fake API.
func cliDefaultModel(t *testing.T) (string, int) {
	t.Helper()
	bin := claudetest.Bin(t)
	api, err := fakeapi.Start(fakeapi.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	cmd := exec.Command(bin, "-p", "--output-format", "stream-json", "--verbose")
	cmd.Dir = t.TempDir()
	cmd.Env = claudetest.Env(t, api.URL())
	cmd.Stdin = strings.NewReader("which model are you?")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		var res struct {
			Type       string `json:"type"`
			ModelUsage map[string]struct {
				ContextWindow int `json:"contextWindow"`
			} `json:"modelUsage"`
		}
		if json.Unmarshal(line, &res) == nil && res.Type == "result" {
			for m, u := range res.ModelUsage {
				return m, u.ContextWindow
			}
		}
	}
	t.Fatalf("no result with modelUsage from claude -p:\n%s", out)
	return "", 0
}
