package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// Fault injection with nothing lost: a three-phase plan runs with one fault
// injected at a seeded moment, then `debussy run` again (at most twice)
// must finish it, and every run is checked for lost work, a broken
// repository, a branch ahead of the ledger, leftover processes and silent
// failures (chaos_check_test.go).
//
//	CHAOS_RUNS   number of runs (default: the quick subset, one run per kind in quickFaults)
//	CHAOS_SEED   base seed; run i uses seed+i (default 1)
//	CHAOS_KINDS  comma-separated fault kinds to cycle through (default: all with CHAOS_RUNS, else quickFaults)
//	CHAOS_PHASES phases in the plan (default 3 with CHAOS_RUNS, else 2: make test's subset stays short)
//
// A failed run prints the line that replays it alone.

type faultKind string

const (
	faultKillDebussy faultKind = "sigkill-debussy"
	faultTermDebussy faultKind = "sigterm-debussy"
	faultKillClaude  faultKind = "sigkill-claude"
	faultKillTool    faultKind = "sigkill-tool"
	faultIndexLock   faultKind = "index-lock"
	faultCutStream   faultKind = "cut-stream"
	fault529Burst    faultKind = "529-burst"
	fault401         faultKind = "401-midway"
	faultDiskFull    faultKind = "disk-full"
	faultSecondRun   faultKind = "second-run"
)

var allFaults = []faultKind{faultKillDebussy, faultTermDebussy, faultKillClaude, faultKillTool, faultIndexLock,
	faultCutStream, fault529Burst, fault401, faultDiskFull, faultSecondRun}

// quickFaults is what `make test` runs: one each of the faults that take a
// different path through debussy (resume from the ledger after kill -9, a
// commit waiting for git's lock, the CLI's own retry, the run lock).
// Killing claude is TestRunCrashRetried's.
var quickFaults = []faultKind{faultKillDebussy, faultIndexLock, faultCutStream, faultSecondRun}

const (
	chaosPlan = "plan/MASTER_PLAN.md"
	// longToolSeconds is how long the tool a sigkill-tool run kills would
	// take; `perl -e sleep 37` in its argv is how the test finds it.
	longToolSeconds = "37"
)

// chaosOutcome is one run's line in the report.
type chaosOutcome struct {
	Index  int
	Kind   faultKind
	Seed   uint64
	Failed bool
	Landed bool
	Lost   int
	Exits  []int
	Took   time.Duration
}

func TestChaos(t *testing.T) {
	claudetest.OncePerSuite(t, "fault injection tests debussy's recovery, not the CLI")
	claudetest.Bin(t)
	kinds, runs, seed, phases := chaosConfig(t)

	var mu sync.Mutex
	var outcomes []chaosOutcome
	start := time.Now()
	t.Run("runs", func(t *testing.T) {
		for i := range runs {
			kind, s := kinds[i%len(kinds)], seed+uint64(i)
			t.Run(fmt.Sprintf("%02d-%s", i, kind), func(t *testing.T) {
				t.Parallel()
				began := time.Now()
				c := newChaosRun(t, kind, s, phases)
				t.Cleanup(func() {
					o := chaosOutcome{Index: i, Kind: kind, Seed: s, Failed: t.Failed(), Landed: c.landed, Lost: c.lost, Exits: c.exits, Took: time.Since(began)}
					if o.Failed {
						t.Logf("chaos FAILED: seed %d, fault %s at %s; replay: %s", s, kind, c.moment(), replay(s, kind, phases))
					}
					mu.Lock()
					outcomes = append(outcomes, o)
					mu.Unlock()
				})
				c.play()
			})
		}
	})
	t.Log(chaosReport(outcomes, seed, phases, time.Since(start)))
}

func chaosConfig(t *testing.T) (kinds []faultKind, runs int, seed uint64, phases int) {
	t.Helper()
	seed, phases = 1, 2
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	kinds = quickFaults
	runs = len(quickFaults)
	if s := os.Getenv("CHAOS_RUNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("CHAOS_RUNS=%q: want a positive number", s)
		}
		runs, kinds, phases = v, allFaults, 3
	}
	if s := os.Getenv("CHAOS_PHASES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("CHAOS_PHASES=%q: want a positive number", s)
		}
		phases = v
	}
	if s := os.Getenv("CHAOS_KINDS"); s != "" {
		kinds = nil
		for _, k := range strings.Split(s, ",") {
			k := faultKind(strings.TrimSpace(k))
			if !slices.Contains(allFaults, k) {
				t.Fatalf("CHAOS_KINDS: unknown fault %q; the kinds are %v", k, allFaults)
			}
			kinds = append(kinds, k)
		}
	}
	return kinds, runs, seed, phases
}

func replay(seed uint64, kind faultKind, phases int) string {
	return fmt.Sprintf("CHAOS_SEED=%d CHAOS_KINDS=%s CHAOS_PHASES=%d CHAOS_RUNS=1 make chaos", seed, kind, phases)
}

// chaosReport is the closing summary: runs, faults by kind, lines lost, and
// every failed run with its replay line.
func chaosReport(outcomes []chaosOutcome, seed uint64, phases int, took time.Duration) string {
	slices.SortFunc(outcomes, func(a, b chaosOutcome) int { return a.Index - b.Index })
	byKind, landed := map[faultKind]int{}, map[faultKind]int{}
	lost, failed, hit := 0, 0, 0
	for _, o := range outcomes {
		byKind[o.Kind]++
		lost += o.Lost
		if o.Failed {
			failed++
		}
		if o.Landed {
			landed[o.Kind]++
			hit++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nchaos report: %d runs of a %d-phase plan (base seed %d) in %s, %d failed, lost = %d lines; %d faults hit a running run\n",
		len(outcomes), phases, seed, took.Round(time.Second), failed, lost, hit)
	for _, k := range allFaults {
		if byKind[k] > 0 {
			fmt.Fprintf(&b, "chaos   %-16s %d runs, %d hit while running\n", k, byKind[k], landed[k])
		}
	}
	for _, o := range outcomes {
		status := "ok"
		if o.Failed {
			status = "FAILED — replay: " + replay(o.Seed, o.Kind, phases)
		}
		where := "hit"
		if !o.Landed {
			where = "after the end"
		}
		fmt.Fprintf(&b, "chaos   run %02d %-16s seed %-12d %-13s exits %v lost %d %s %s\n", o.Index, o.Kind, o.Seed, where, o.Exits, o.Lost, o.Took.Round(time.Second), status)
	}
	return b.String()
}

// chaosRun is one run: the plan, the fault and its moment, and what the
// checks collected.
type chaosRun struct {
	t      *testing.T
	h      *harness
	kind   faultKind
	seed   uint64
	phases int
	rng    *rand.Rand

	// The moment: when the API first sees phase targetPhase's request
	// number targetTurn, plus delay.
	targetPhase, targetTurn int
	delay                   time.Duration
	hold                    time.Duration // how long a lock or a full disk lasts
	mark                    string        // in the environment of every process the run starts

	mu           sync.Mutex
	fired        chan struct{}
	fireOnce     sync.Once
	unauthorized bool // 401-midway: the key is refused until the run ends
	overloaded   int  // 529-burst: requests still to refuse
	apiFaulted   bool // the API fault was injected
	longServed   bool // sigkill-tool: the long tool was handed out

	base      string            // HEAD before the first run
	userFiles map[string]string // the user's untracked files and their content
	written   map[string]bool   // "path\x00line" the agent had written when looked at
	lost      int
	exits     []int
	landed    bool // the fault hit while the first run was still going
}

func newChaosRun(t *testing.T, kind faultKind, seed uint64, phases int) *chaosRun {
	c := &chaosRun{t: t, kind: kind, seed: seed, phases: phases, rng: rand.New(rand.NewPCG(seed, uint64(len(kind)))),
		fired: make(chan struct{}), written: map[string]bool{}}
	c.mark = fmt.Sprintf("debussy-chaos-%d-%d", os.Getpid(), seed)
	c.targetPhase = 1 + c.rng.IntN(c.phases)
	c.targetTurn = c.rng.IntN(4)
	c.delay = time.Duration(c.rng.IntN(1500)) * time.Millisecond
	c.hold = time.Duration(2000+c.rng.IntN(3000)) * time.Millisecond
	switch kind {
	case faultKillTool:
		c.targetTurn = 1 // the turn that runs the long tool
		c.delay = time.Duration(c.rng.IntN(500)) * time.Millisecond
	case faultIndexLock:
		// After `debussy done`: the session ends, the gates run, and the
		// phase's commit lands inside the hold.
		c.targetTurn = 3
		c.delay = time.Duration(c.rng.IntN(800)) * time.Millisecond
	}
	if c.targetPhase == c.phases && c.targetTurn == 3 {
		// The plan's last request: a long delay would land after the end.
		c.delay /= 5
	}
	t.Logf("chaos run: seed %d, fault %s at %s (replay: %s)", seed, kind, c.moment(), replay(seed, kind, phases))

	var specs []phaseSpec
	for i := 1; i <= c.phases; i++ {
		ph := phaseSpec{ID: strconv.Itoa(i), Title: "Part " + strconv.Itoa(i), Gates: []string{fmt.Sprintf("written: `test -s p%d/a.txt`", i)}}
		if i > 1 {
			ph.Deps = []string{strconv.Itoa(i - 1)}
		}
		specs = append(specs, ph)
	}
	script := fakeapi.Script{Default: &fakeapi.Conversation{Name: "agent", React: c.react}}
	c.h = newHarness(t, script, specs, "retry_backoff: 100ms\nidle_timeout: 45s\n")
	// Keep the CLI's own retries short: a 529 burst then reaches debussy.
	c.h.Env = append(c.h.Env, "CLAUDE_CODE_MAX_RETRIES=2", "DEBUSSY_CHAOS_MARK="+c.mark)
	if kind == faultDiskFull {
		c.moveToSmallDisk()
	}
	c.userFiles = map[string]string{
		"notes/mine.txt": "the user's own notes\nkeep me\n",
		"scratch.log":    "half a thought\n",
	}
	for rel, content := range c.userFiles {
		c.h.write(rel, content)
	}
	c.base = c.h.git("rev-parse", "HEAD")
	return c
}

func (c *chaosRun) moment() string {
	return fmt.Sprintf("phase %d request %d +%s", c.targetPhase, c.targetTurn, c.delay)
}

// react is the fake model: every phase's agent writes lines in its own
// directory over three tool turns and signals done; a session that comes
// back after a fault does the same again (idempotent lines). It also
// injects the API faults.
func (c *chaosRun) react(r fakeapi.Request) (fakeapi.Turn, bool) {
	phase := 0
	for i := 1; i <= c.phases; i++ {
		if strings.Contains(r.FirstUser, phaseMatch(strconv.Itoa(i))) {
			phase = i
		}
	}
	if phase == 0 {
		return turn(5000, fakeapi.Text("ok")), true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	target := phase == c.targetPhase && r.Turn == c.targetTurn
	if target {
		c.fireOnce.Do(func() { close(c.fired) })
	}
	tr := c.agentTurn(phase, r.Turn, target)
	switch {
	case c.unauthorized:
		return fakeapi.Turn{Status: 401, ErrorMessage: "invalid x-api-key", Repeat: 1 << 20}, true
	case c.overloaded > 0:
		c.overloaded--
		return fakeapi.Turn{Status: 529, Repeat: 1 << 20}, true
	}
	if !target || c.apiFaulted {
		return tr, true
	}
	c.apiFaulted = true // once: a rerun's session passing the moment again is not hit again
	switch c.kind {
	case fault401:
		c.unauthorized = true
		return fakeapi.Turn{Status: 401, ErrorMessage: "invalid x-api-key", Repeat: 1 << 20}, true
	case fault529Burst:
		c.overloaded = 2 + c.rng.IntN(7) // the CLI tries 3 times per session
		c.overloaded--
		return fakeapi.Turn{Status: 529, Repeat: 1 << 20}, true
	case faultCutStream:
		tr.Cut = true
	}
	return tr, true
}

// agentTurn is phase's scripted answer to request n of a session.
func (c *chaosRun) agentTurn(phase, n int, target bool) fakeapi.Turn {
	dir := fmt.Sprintf("p%d", phase)
	add := func(file, line string) string {
		return fmt.Sprintf("{ grep -qxF '%s' %s/%s 2>/dev/null || echo '%s' >> %s/%s; }", line, dir, file, line, dir, file)
	}
	tokens := int64(20000 + 1000*n)
	switch n {
	case 0:
		return turn(tokens, fakeapi.Text("Starting part "+dir+"."),
			fakeapi.Bash(fmt.Sprintf("mkdir -p %s && printf '%s a 1\\n%s a 2\\n%s a 3\\n' > %s/a.txt && %s", dir, dir, dir, dir, dir, add("log.txt", dir+" t0"))))
	case 1:
		slow := pause("1")
		if target && c.kind == faultKillTool && !c.longServed {
			c.longServed = true
			slow = pause(longToolSeconds)
		}
		return turn(tokens, fakeapi.Bash(strings.Join([]string{
			add("log.txt", dir+" t1 1"), add("log.txt", dir+" t1 2"), slow, add("log.txt", dir+" t1 end"),
		}, " && ")))
	case 2:
		return turn(tokens, fakeapi.Bash(add("log.txt", dir+" t2")+" && "+fmt.Sprintf("debussy done --phase %d", phase)))
	default:
		return turn(tokens, fakeapi.Text("Part "+dir+" done."))
	}
}
