package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Issue 51: `debussy tune` predicts what debussy does. Session shapes are
// recorded by a real run (the real CLI, the fake API playing each shape
// as one phase's work across its sessions), tuned, and run again at
// another setting: the self-check at the recorded setting must be exact,
// and the restarts tune predicts for the other setting must be the
// restarts that run makes, phase by phase.

// shapePlayer is the fake model working through one shape per phase,
// across the phase's sessions: each request gets the shape's next turn;
// asked for its handoff, it writes it, and the turn whose calls were
// refused is redone first by the next session. A restarted session's
// first response is its prompt's size (the CLI's ~20K plus the checkpoint
// prompt at 4 characters a token); every later one grows by what the
// shape's turns added.
type shapePlayer struct {
	mu     sync.Mutex
	phases map[string]*phasePlay
}

type phasePlay struct {
	turns    []fakeapi.Turn // the shape replayed, then the done signal and a final text
	next     int            // the next turn to serve
	started  bool
	sessions map[int]*sessionPlay
	served   map[[2]int]fakeapi.Turn // (session, request turn): a retried request gets the same answer
}

type sessionPlay struct {
	start   int   // the shape turn it started at
	base    int64 // its first response's context
	last    int   // the last shape turn served
	lastCtx int64
}

func newShapePlayer() *shapePlayer { return &shapePlayer{phases: map[string]*phasePlay{}} }

// add gives phase id the shape s to work through.
func (sp *shapePlayer) add(id string, s fakeapi.Shape) {
	conv := fakeapi.Replay(s, fakeapi.ReplayOptions{Dir: "shape-" + id, End: []fakeapi.Turn{
		{Blocks: []fakeapi.Block{done(id)}}, {Blocks: []fakeapi.Block{fakeapi.Text("Phase " + id + " done.")}}}})
	sp.phases[id] = &phasePlay{turns: conv.Turns, sessions: map[int]*sessionPlay{}, served: map[[2]int]fakeapi.Turn{}}
}

func (sp *shapePlayer) react(r fakeapi.Request) (fakeapi.Turn, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	var pp *phasePlay
	for id, p := range sp.phases {
		if strings.Contains(r.FirstUser, phaseMatch(id)) {
			pp = p
		}
	}
	if pp == nil {
		return turn(5000, fakeapi.Text("ok")), true
	}
	key := [2]int{r.Session, r.Turn}
	if t, ok := pp.served[key]; ok {
		return t, true
	}
	sess := pp.sessions[r.Session]
	if sess == nil {
		sess = &sessionPlay{start: pp.next, last: -1}
		if pp.started {
			sess.base = 20000 + int64(len(r.FirstUser)/4)
		} else if pp.next < len(pp.turns) {
			sess.base = pp.turns[pp.next].Usage.Context()
		}
		pp.started = true
		pp.sessions[r.Session] = sess
	}
	var t fakeapi.Turn
	switch p := handoffPath(r); {
	case p != "":
		t = fakeapi.Turn{Usage: usageAt(fakeapi.Usage{Input: 3, CacheCreation: 1500}, sess.lastCtx+1500),
			Blocks: []fakeapi.Block{fakeapi.Write(p, "## Completed\nthe shape up to here\n")}}
		if sess.last >= 0 {
			pp.next = sess.last // its calls were refused: the next session redoes them
		}
	case pp.next >= len(pp.turns):
		t = fakeapi.Turn{Usage: usageAt(fakeapi.Usage{Input: 3}, sess.lastCtx), Blocks: []fakeapi.Block{fakeapi.Text("done.")}}
	default:
		i := pp.next
		pp.next++
		t = pp.turns[i]
		ctx := sess.base + t.Usage.Context() - pp.turns[sess.start].Usage.Context()
		t.Usage = usageAt(t.Usage, ctx)
		sess.last, sess.lastCtx = i, ctx
	}
	pp.served[key] = t
	return t, true
}

// usageAt is u's input and cache write at the context ctx, the rest read
// from the cache.
func usageAt(u fakeapi.Usage, ctx int64) fakeapi.Usage {
	u.CacheCreation = min(u.CacheCreation, max(ctx-u.Input, 0))
	u.CacheRead = max(ctx-u.Input-u.CacheCreation, 0)
	return u
}

// shapeRun runs one phase per shape (in order) with config, and returns
// the harness and each phase's restarts.
func shapeRun(t *testing.T, shapes []fakeapi.Shape, config string) (*harness, []int) {
	t.Helper()
	sp := newShapePlayer()
	var specs []phaseSpec
	for i, s := range shapes {
		id := strconv.Itoa(i + 1)
		sp.add(id, s)
		ph := phaseSpec{ID: id, Title: "Shape " + id}
		if i > 0 {
			ph.Deps = []string{strconv.Itoa(i)}
		}
		specs = append(specs, ph)
	}
	h := newHarness(t, fakeapi.Script{Default: &fakeapi.Conversation{Name: "shapes", React: sp.react}}, specs, config)
	r := h.run("run", "plan/MASTER_PLAN.md")
	if r.Code != 0 {
		t.Fatalf("want exit 0: %s", r)
	}
	restarts := make([]int, len(shapes))
	for _, c := range h.events("checkpoint") {
		if c["kind"] == "restart" {
			n, _ := strconv.Atoi(fmt.Sprint(c["phase"]))
			restarts[n-1]++
		}
	}
	return h, restarts
}

// tuneOut is what these tests read of `debussy tune --json`.
type tuneOut struct {
	Streams []struct {
		Source      string `json:"source"`
		Turns       int    `json:"turns"`
		Compactions int    `json:"compactions"`
		SideTokens  int64  `json:"side_tokens"`
		Window      int64  `json:"window"`
	} `json:"streams"`
	Skipped   []string `json:"skipped"`
	SelfCheck struct {
		Exact    bool `json:"exact"`
		Sessions []struct {
			Phase      string `json:"phase"`
			RecordedAt []int  `json:"recorded_at"`
			ReplayedAt []int  `json:"replayed_at"`
		} `json:"sessions"`
	} `json:"self_check"`
	Candidates []struct {
		Current           bool  `json:"current"`
		ContextThreshold  int   `json:"context_threshold"`
		ContextMaxTokens  int   `json:"context_max_tokens"`
		MaxRestarts       int   `json:"max_restarts"`
		RestartsBySession []int `json:"restarts_by_session"`
		Sessions          int   `json:"sessions"`
		PeakTokens        int64 `json:"peak_tokens"`
	} `json:"candidates"`
	Recommended *struct {
		ContextThreshold int `json:"context_threshold"`
	} `json:"recommended"`
}

func runTune(t *testing.T, h *harness, args ...string) tuneOut {
	t.Helper()
	r := h.run(append([]string{"tune", "--json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("tune: %s", r)
	}
	var out tuneOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, r.Stdout)
	}
	return out
}

// predicted is the candidate's restarts per phase for threshold and cap.
func (o tuneOut) predicted(t *testing.T, threshold, cap int) []int {
	t.Helper()
	for _, c := range o.Candidates {
		if c.ContextThreshold == threshold && c.ContextMaxTokens == cap {
			return c.RestartsBySession
		}
	}
	t.Fatalf("no candidate at %d %% cap %d in %+v", threshold, cap, o.Candidates)
	return nil
}

func loadShape(t *testing.T, name string) fakeapi.Shape {
	t.Helper()
	s, err := fakeapi.LoadShape(filepath.Join("fakeapi", "testdata", "shapes", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkPrediction compares tune's prediction with the restarts of a run.
func checkPrediction(t *testing.T, what string, predicted, actual []int) {
	t.Helper()
	t.Logf("%s: predicted restarts per phase %v, the run made %v", what, predicted, actual)
	if !slices.Equal(predicted, actual) {
		t.Errorf("%s: tune predicted %v restarts per phase, debussy made %v", what, predicted, actual)
	}
}

// A 200K window (claude-sonnet-4-5): recorded at 80 %, predicted at 60 %.
func TestTunePredictsRestarts(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's replay of its own policy; the CLI's part is the stream and hooks every other test covers")
	shapes := []fakeapi.Shape{
		loadShape(t, "13-speakfree-vscode.json").Scale(340_000),
		fakeapi.Generate(7, 150).Scale(420_000),
	}
	const cfg = "model: claude-sonnet-4-5\nmax_restarts: 10\n"
	recorded, atA := shapeRun(t, shapes, cfg+"context_threshold: 80\n")
	if slices.Max(atA) < 1 {
		t.Fatalf("the recorded run made no restart (%v): nothing for the self-check to reproduce", atA)
	}
	if keep := os.Getenv("DEBUSSY_TUNE_KEEP"); keep != "" {
		// The recording, for docs/tune.md's table: `debussy tune` in KEEP.
		for _, f := range []string{".debussy", ".debussy.yaml"} {
			if out, err := exec.Command("cp", "-a", filepath.Join(recorded.Repo, f), keep).CombinedOutput(); err != nil {
				t.Fatalf("keep: %v %s", err, out)
			}
		}
	}
	out := runTune(t, recorded, "--threshold", "60,70")
	if !out.SelfCheck.Exact {
		t.Errorf("the self-check at the recorded settings is not exact: %+v", out.SelfCheck.Sessions)
	}
	if c := out.Candidates[0]; !c.Current || c.ContextThreshold != 80 || !slices.Equal(c.RestartsBySession, atA) {
		t.Errorf("the current settings (80 %%) come first and predict what was recorded (%v): %+v", atA, c)
	}
	_, atB := shapeRun(t, shapes, cfg+"context_threshold: 60\n")
	checkPrediction(t, "60 %", out.predicted(t, 60, 400_000), atB)
}

// The CLI's default model (a 1M window on the pinned and the latest CLI):
// recorded at the default cap (400K), predicted at a 250K cap.
func TestTunePredictsRestartsLongWindow(t *testing.T) {
	claudetest.CLISensitive(t, "the CLI's default model and its 1M window")
	if _, window := cliDefaultModel(t); window < 1_000_000 {
		t.Skipf("the CLI's default window is %d: the cap needs a 1M window", window)
	}
	shapes := []fakeapi.Shape{fakeapi.Generate(11, 120).Scale(900_000)}
	const cfg = "max_restarts: 10\n"
	recorded, atA := shapeRun(t, shapes, cfg)
	out := runTune(t, recorded, "--threshold", "80", "--cap", "250K")
	if !out.SelfCheck.Exact {
		t.Errorf("the self-check at the recorded settings is not exact: %+v", out.SelfCheck.Sessions)
	}
	if c := out.Candidates[0]; !slices.Equal(c.RestartsBySession, atA) {
		t.Errorf("the current settings predict %v, the recorded run made %v", c.RestartsBySession, atA)
	}
	_, atB := shapeRun(t, shapes, cfg+"context_max_tokens: 250000\n")
	checkPrediction(t, "cap 250K", out.predicted(t, 80, 250_000), atB)
}

// The way TestShapesReplay plays a shape (the session after a restart
// only signals done): recorded at 80 %, tuned, and run at 60 % and 70 %.
func TestTuneAfterShapesReplay(t *testing.T) {
	claudetest.OncePerSuite(t, "debussy's replay of its own policy")
	conv := fakeapi.Replay(fakeapi.Generate(2, 30).Scale(shapeWindow*84/100), fakeapi.ReplayOptions{End: finishing})
	restarts := func(h *harness) []int {
		n := 0
		for _, c := range h.events("checkpoint") {
			if c["kind"] == "restart" {
				n++
			}
		}
		return []int{n}
	}
	recorded, _ := replayPhase(t, conv, shapeModel+"context_threshold: 80\n")
	out := runTune(t, recorded, "--threshold", "60,70")
	if !out.SelfCheck.Exact || !slices.Equal(out.Candidates[0].RestartsBySession, restarts(recorded)) {
		t.Errorf("self-check %+v, the current settings predict %v, the run made %v", out.SelfCheck, out.Candidates[0].RestartsBySession, restarts(recorded))
	}
	for _, thr := range []int{60, 70} {
		h, _ := replayPhase(t, conv, shapeModel+fmt.Sprintf("context_threshold: %d\n", thr))
		checkPrediction(t, fmt.Sprintf("%d %%", thr), out.predicted(t, thr, 400_000), restarts(h))
	}
}
