package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

const handoffPath = "/repo/.debussy/runs/r/phase-1/handoff-1.md"

func testConfig() Config {
	return Config{
		Phase: "1", ContextThreshold: 80,
		Zones:             estimator.ZoneConfig{ToolCallsYellow: 150, ToolCallsRed: 250},
		ZoneAction:        ZoneNote,
		Nudges:            estimator.NudgeConfig{Repeat: 3, RepeatWindow: 20, RepeatRestart: 5, ExploreReads: 10, Cooldown: 5},
		Handoff:           true,
		HandoffPath:       handoffPath,
		HandoffGraceCalls: 5,
		MaxRestarts:       3,
		RequireDoneSignal: true,
		Root:              "/repo",
	}
}

// step is one input to a policy; the harness applies it and checks what
// it wants.
type step struct {
	snap   *estimator.Snapshot // Observe with an empty event and this snapshot
	pre    *Call               // PreToolUse
	budget string              // the budget's refusal for pre
	post   *Call               // PostToolUse
	stop   *bool               // Stop hook with stop_hook_active
	signal bool                // the done signal is on disk (Stop)
	note   string              // a note from a budget level
	stopFr estimator.Trigger   // StopFor with this trigger
	grace  bool                // GraceExpired
	ended  *[2]bool            // Signals(done, handedOff) as the stream ends

	// wants, checked after the step
	state  State
	deny   string // substring of the PreToolUse denial; "-" none
	stopAt string // substring of the PostToolUse StopReason; "-" none
	noteIn string // substring of the PostToolUse note; "-" none
	block  string // substring of the Stop hook's block; "-" none
}

func ctx(pct float64) *estimator.Snapshot {
	return &estimator.Snapshot{Tokens: int64(pct * 2000), Window: 200_000, Percent: pct}
}

func bashCall(cmd, result string) *Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return &Call{Tool: "Bash", Input: in, Command: cmd, Response: result}
}

func writeCall(path string) *Call {
	in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
	return &Call{Tool: "Write", Input: in, FilePath: path, Response: "ok"}
}

func doneCall() *Call {
	c := bashCall("debussy done --phase 1", "phase 1: completed")
	c.Signalled = true
	return c
}

// chainedHandoff is how agents write and signal a handoff in one line.
const chainedHandoff = "mkdir -p notes && printf '## Done\\nall\\n' > notes/handoff.md && debussy handoff --phase 1 --file notes/handoff.md"

// handoffCmd is the agent's `debussy handoff`, its signal on disk or not.
func handoffCmd(signalled bool) *Call {
	c := bashCall("debussy handoff --phase 1", "debussy: handoff recorded")
	c.HandedOff = signalled
	return c
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func run(t *testing.T, p *Policy, steps []step) {
	t.Helper()
	for i, s := range steps {
		var ans runner.HookAnswer
		switch {
		case s.snap != nil:
			p.Observe(runner.Event{}, *s.snap)
		case s.pre != nil:
			ans = p.PreToolUse(*s.pre, s.budget)
		case s.post != nil:
			ans = p.PostToolUse(*s.post)
		case s.stop != nil:
			ans = p.Stop(*s.stop, s.signal)
		case s.note != "":
			p.Note(s.note)
		case s.stopFr != "":
			p.StopFor(s.stopFr, string(s.stopFr)+" reason")
		case s.grace:
			p.GraceExpired("2m0s")
		case s.ended != nil:
			p.Signals(s.ended[0], s.ended[1])
		}
		if s.state != "" && p.State() != s.state {
			t.Fatalf("step %d: state %s, want %s", i, p.State(), s.state)
		}
		checkSub(t, i, "deny", ans.Deny, s.deny)
		checkSub(t, i, "stop reason", ans.StopReason, s.stopAt)
		checkSub(t, i, "note", ans.Note, s.noteIn)
		checkSub(t, i, "block", ans.Block, s.block)
	}
}

func checkSub(t *testing.T, i int, what, got, want string) {
	t.Helper()
	switch {
	case want == "":
	case want == "-" && got != "":
		t.Fatalf("step %d: %s %q, want none", i, what, got)
	case want != "-" && !strings.Contains(got, want):
		t.Fatalf("step %d: %s %q, want it to contain %q", i, what, got, want)
	}
}

// Transitions in sequences, with the hook answers and the outcome they
// lead to (TestTransitionTable plays each row of Transitions on its own).
func TestTransitions(t *testing.T) {
	handoff := writeCall(handoffPath)
	handoff.HandoffBytes = 120
	tests := []struct {
		name  string
		cfg   func(c *Config)
		steps []step
		out   Outcome // Trigger, Done, Handoff and NoHandoff are compared
	}{
		{
			name:  "working → warned at threshold−10: one note",
			steps: []step{{snap: ctx(71), state: Warned}, {post: bashCall("ls", "a"), noteIn: "at 71% of the window"}, {snap: ctx(72)}, {post: bashCall("ls", "b"), noteIn: "-"}},
		},
		{
			name: "warned → handoff_requested at the threshold; other tools refused with the path; the write stops",
			steps: []step{
				{snap: ctx(81), state: HandoffRequested},
				{pre: bashCall("go test ./...", ""), deny: handoffPath},
				{pre: writeCall(handoffPath), deny: "-"},
				{post: handoff, state: Stopping, stopAt: "context 81 %"},
			},
			out: Outcome{Trigger: estimator.TriggerContext, Handoff: handoffPath},
		},
		{
			name: "without handoffs the threshold stops at the next PostToolUse",
			cfg:  func(c *Config) { c.Handoff = false },
			steps: []step{
				{snap: ctx(85), state: Stopping}, {pre: bashCall("ls", ""), deny: "-"}, {post: bashCall("ls", "x"), stopAt: "context 85 %"},
			},
			out: Outcome{Trigger: estimator.TriggerContext},
		},
		{
			name:  "max_restarts 0: a threshold only warns",
			cfg:   func(c *Config) { c.MaxRestarts = 0 },
			steps: []step{{snap: ctx(90), state: Working}, {post: bashCall("ls", "x"), stopAt: "-"}},
		},
		{
			name:  "emergency at 98 %, handoff or not",
			steps: []step{{snap: ctx(81), state: HandoffRequested}, {snap: ctx(98.5), state: Stopping}, {post: bashCall("ls", "x"), stopAt: "98 %"}},
			out:   Outcome{Trigger: estimator.TriggerContext, NoHandoff: "no handoff was written: context 98 % of 200K ≥ 98 %"},
		},
		{
			name: "the handoff's calls run out: the next call runs and its PostToolUse stops",
			cfg:  func(c *Config) { c.HandoffGraceCalls = 2 },
			steps: []step{
				{snap: ctx(82)}, {pre: bashCall("a", ""), deny: "handoff"}, {pre: bashCall("b", ""), deny: "handoff"},
				{pre: bashCall("c", ""), deny: "-", state: Stopping}, {post: bashCall("c", "x"), stopAt: "within 2 tool calls"},
			},
			out: Outcome{Trigger: estimator.TriggerContext, NoHandoff: "no handoff was written: the agent did not write its handoff within 2 tool calls"},
		},
		{
			name:  "the handoff's time runs out",
			steps: []step{{snap: ctx(82)}, {grace: true, state: Stopping}},
			out:   Outcome{Trigger: estimator.TriggerContext, NoHandoff: "no handoff was written: the agent did not write its handoff within 2m0s"},
		},
		{
			name: "the Stop hook asks for the handoff once, then stops",
			steps: []step{
				{snap: ctx(82)}, {stop: no(), block: handoffPath}, {stop: yes(), block: "-", state: Stopping},
			},
			out: Outcome{Trigger: estimator.TriggerContext, NoHandoff: "no handoff was written: the agent ended its turn again without writing its handoff"},
		},
		{
			name:  "the Stop hook asks for `debussy done` once",
			steps: []step{{stop: no(), block: "debussy done --phase 1"}, {stop: no(), block: "-"}},
		},
		{
			name:  "the Stop hook lets a signalled agent go",
			steps: []step{{stop: no(), signal: true, block: "-", state: Done}},
			out:   Outcome{Done: true},
		},
		{
			name:  "a red zone is a note by default",
			cfg:   func(c *Config) { c.Zones = estimator.ZoneConfig{ToolCallsYellow: 2, ToolCallsRed: 3} },
			steps: []step{{snap: &estimator.Snapshot{ToolCalls: 3}, state: Working}, {post: bashCall("ls", "x"), noteIn: "red zone"}},
		},
		{
			name: "zone_action handoff: a red zone asks for the handoff",
			cfg: func(c *Config) {
				c.Zones, c.ZoneAction = estimator.ZoneConfig{ToolCallsYellow: 2, ToolCallsRed: 3}, ZoneHandoff
			},
			steps: []step{{snap: &estimator.Snapshot{ToolCalls: 3}, state: HandoffRequested}, {pre: bashCall("ls", ""), deny: "red zone"}},
		},
		{
			name:  "with exact usage many tool calls never stop a session",
			steps: []step{{snap: &estimator.Snapshot{Tokens: 30_000, Window: 200_000, Percent: 15, ToolCalls: 400}, state: Working}},
		},
		{
			name:  "without usage the tool-call fallback applies",
			steps: []step{{snap: &estimator.Snapshot{Estimated: true, ToolCalls: FallbackToolCalls}, state: HandoffRequested}},
		},
		{
			name:  "a tool_call_threshold the user set applies with usage too",
			cfg:   func(c *Config) { c.ToolCallThreshold = 40 },
			steps: []step{{snap: &estimator.Snapshot{Tokens: 30_000, Window: 200_000, Percent: 15, ToolCalls: 40}, state: HandoffRequested}},
		},
		{
			name:  "a compaction the policy did not allow stops",
			steps: []step{{snap: &estimator.Snapshot{Trigger: estimator.TriggerCompaction, Reason: "compacted"}, state: Stopping}},
			out:   Outcome{Trigger: estimator.TriggerCompaction},
		},
		{
			name: "five identical calls with identical results restart, with the call to avoid",
			steps: []step{
				{post: bashCall("go test ./...", "FAIL x 0.1s")}, {post: bashCall("go test ./...", "FAIL x 0.2s")},
				{post: bashCall("go test ./...", "FAIL x 0.3s"), noteIn: "same result"}, {post: bashCall("go test ./...", "FAIL x 0.4s")},
				{post: bashCall("go test ./...", "FAIL x 0.5s"), state: Stopping, stopAt: "doom loop"},
			},
			out: Outcome{Trigger: TriggerDoomLoop},
		},
		{
			name: "working, warned → stopping: the agent's `debussy handoff` ends the session at its PostToolUse",
			steps: []step{
				{snap: ctx(72), state: Warned}, {post: bashCall("ls", "a"), noteIn: "run `debussy handoff --phase 1`"},
				{pre: handoffCmd(true), deny: "-"},
				{post: handoffCmd(true), state: Stopping, stopAt: AgentHandoffReason, noteIn: "-"},
			},
			out: Outcome{Trigger: TriggerAgentHandoff, Handoff: handoffPath},
		},
		{
			name:  "`debussy handoff` without its signal on disk (the command failed) changes nothing",
			steps: []step{{post: handoffCmd(false), state: Working, stopAt: "-"}},
		},
		{
			name: "signals are facts: a chained `debussy handoff` with its signal on disk ends the session",
			steps: []step{{post: func() *Call {
				c := bashCall(chainedHandoff, "debussy: handoff recorded")
				c.HandedOff = true
				return c
			}(), state: Stopping, stopAt: AgentHandoffReason}},
			out: Outcome{Trigger: TriggerAgentHandoff, Handoff: handoffPath},
		},
		{
			name: "signals are facts: the done signal seen after any tool (`X=1 debussy done`, a script) is done",
			steps: []step{{post: func() *Call {
				c := bashCall("X=1 debussy done --phase 1", "marked")
				c.Signalled = true
				return c
			}(), state: Done}},
			out: Outcome{Done: true},
		},
		{
			name:  "a handoff left for the session and seen only as the stream ends restarts from it",
			steps: []step{{post: bashCall("ls", "a"), state: Working}, {ended: &[2]bool{false, true}, state: Stopping}},
			out:   Outcome{Trigger: TriggerAgentHandoff, Handoff: handoffPath},
		},
		{
			name:  "the done signal seen as the stream ends beats the handoff",
			steps: []step{{ended: &[2]bool{true, true}, state: Done}},
			out:   Outcome{Done: true},
		},
		{
			name:  "the handoff stage lets a chained `debussy handoff` through",
			steps: []step{{snap: ctx(81), state: HandoffRequested}, {pre: bashCall(chainedHandoff, ""), deny: "-"}},
		},
		{
			name:  "max_restarts 0: the agent's handoff still ends the session (the phase then fails for restarts)",
			cfg:   func(c *Config) { c.MaxRestarts = 0 },
			steps: []step{{post: handoffCmd(true), state: Stopping, stopAt: AgentHandoffReason}},
			out:   Outcome{Trigger: TriggerAgentHandoff, Handoff: handoffPath},
		},
		{
			name: "the same command with changing results is progress",
			steps: []step{
				{post: bashCall("go test ./...", "FAIL a")}, {post: bashCall("go test ./...", "FAIL b")}, {post: bashCall("go test ./...", "FAIL c")},
				{post: bashCall("go test ./...", "FAIL d")}, {post: bashCall("go test ./...", "ok"), noteIn: "-", state: Working},
			},
		},
	}
	for _, tt := range tests {
		runCase(t, tt.name, tt.cfg, tt.steps, tt.out)
	}
}

// Two conditions on one response: which one wins.
func TestPrecedence(t *testing.T) {
	handoff := writeCall(handoffPath)
	handoff.HandoffBytes = 50
	tests := []struct {
		name  string
		cfg   func(c *Config)
		steps []step
		out   Outcome
	}{
		{
			name: "done + threshold (handoff stage): done lets the session end by itself",
			steps: []step{
				{snap: ctx(85), state: HandoffRequested}, {pre: doneCall(), deny: "-"}, {post: doneCall(), stopAt: "-", state: Done},
				{stop: no(), block: "-"},
			},
			out: Outcome{Done: true},
		},
		{
			name: "done + threshold without handoffs: the stop still ends the session, as done",
			cfg:  func(c *Config) { c.Handoff = false },
			steps: []step{
				{snap: ctx(85), state: Stopping}, {pre: doneCall(), deny: "-"}, {post: doneCall(), stopAt: "context 85 %", state: Done},
			},
			out: Outcome{Done: true, Trigger: estimator.TriggerContext},
		},
		{
			name:  "done + budget stop: done",
			steps: []step{{stopFr: TriggerBudget, state: Stopping}, {post: doneCall(), stopAt: "budget", state: Done}},
			out:   Outcome{Done: true, Trigger: TriggerBudget},
		},
		{
			name:  "done first, then a threshold: no handoff, no stop",
			steps: []step{{post: doneCall(), state: Done}, {snap: ctx(90), state: Done}, {post: bashCall("ls", "x"), stopAt: "-"}},
			out:   Outcome{Done: true},
		},
		{
			name:  "agent handoff, then done on the same response: done",
			steps: []step{{post: handoffCmd(true), state: Stopping}, {post: doneCall(), state: Done, stopAt: AgentHandoffReason}},
			out:   Outcome{Done: true, Trigger: TriggerAgentHandoff},
		},
		{
			name:  "done, then the agent's handoff: done, no stop",
			steps: []step{{post: doneCall(), state: Done}, {post: handoffCmd(true), state: Done, stopAt: "-"}},
			out:   Outcome{Done: true},
		},
		{
			name: "the agent's handoff in the handoff stage: the threshold's stop, with the handoff",
			steps: []step{
				{snap: ctx(81), state: HandoffRequested}, {pre: handoffCmd(true), deny: "-"},
				{post: handoffCmd(true), state: Stopping, stopAt: "context 81 %"},
			},
			out: Outcome{Trigger: estimator.TriggerContext, Handoff: handoffPath},
		},
		{
			name:  "a budget's stop decided first holds over the agent's handoff",
			steps: []step{{stopFr: TriggerBudget, state: Stopping}, {post: handoffCmd(true), stopAt: "budget reason"}},
			out:   Outcome{Trigger: TriggerBudget},
		},
		{
			name: "handoff + budget refusal: the handoff's request (with its path) is the refusal",
			steps: []step{
				{snap: ctx(81)}, {pre: bashCall("cat x", ""), budget: "debussy (phase budget): no exploring", deny: handoffPath},
			},
		},
		{
			name:  "a budget refusal alone",
			steps: []step{{pre: bashCall("cat x", ""), budget: "debussy (phase budget): no exploring", deny: "no exploring"}},
		},
		{
			name: "stop + note: the note is not delivered and stays for the next session",
			steps: []step{
				{note: "debussy: budget 70 %"}, {stopFr: TriggerBudget}, {post: bashCall("ls", "x"), stopAt: "budget", noteIn: "-"},
			},
			out: Outcome{Trigger: TriggerBudget},
		},
		{
			name:  "compaction + threshold: the compaction's stop",
			steps: []step{{snap: &estimator.Snapshot{Tokens: 170_000, Window: 200_000, Percent: 85, Trigger: estimator.TriggerCompaction, Reason: "compacted"}, state: Stopping}},
			out:   Outcome{Trigger: estimator.TriggerCompaction},
		},
		{
			name: "emergency + budget stop: the emergency's trigger, so no extension hides it",
			steps: []step{
				{stopFr: TriggerBudget, state: Stopping}, {snap: ctx(99)},
			},
			out: Outcome{Trigger: estimator.TriggerContext, NoHandoff: "no handoff was written: context 99 % of 200K ≥ 98 %"},
		},
		{
			name: "loop + handoff stage: the loop stops at once",
			steps: []step{
				{snap: ctx(81)},
				{post: bashCall("make", "same")}, {post: bashCall("make", "same")}, {post: bashCall("make", "same")},
				{post: bashCall("make", "same")}, {post: bashCall("make", "same"), state: Stopping, stopAt: "doom loop"},
			},
			out: Outcome{Trigger: TriggerDoomLoop, NoHandoff: "the session was stopped in a loop before the agent wrote its handoff"},
		},
		{
			name: "the first stop's reason holds",
			steps: []step{
				{stopFr: TriggerAdaptive}, {stopFr: TriggerBudget}, {post: bashCall("ls", "x"), stopAt: "adaptive reason"},
			},
			out: Outcome{Trigger: TriggerAdaptive},
		},
		{
			name: "a write to the handoff's path before anyone asked for it is no handoff",
			steps: []step{
				{post: writeCall(handoffPath), state: Working, stopAt: "-"},
			},
		},
	}
	for _, tt := range tests {
		tt.out.Handoff = "-" // not compared
		runCase(t, tt.name, tt.cfg, tt.steps, tt.out)
	}
}

// runCase plays steps on a policy with the test config changed by cfg and
// compares its outcome's trigger, done, handoff ("-": any) and no-handoff.
func runCase(t *testing.T, name string, cfg func(*Config), steps []step, want Outcome) {
	t.Run(name, func(t *testing.T) {
		c := testConfig()
		if cfg != nil {
			cfg(&c)
		}
		p := New(c, nil)
		run(t, p, steps)
		o := p.Outcome()
		if o.Trigger != want.Trigger || o.Done != want.Done || (want.Handoff != "-" && o.Handoff != want.Handoff) || o.NoHandoff != want.NoHandoff {
			t.Fatalf("outcome %+v, want %+v", o, want)
		}
	})
}

func TestUndeliveredNotesCarryOver(t *testing.T) {
	p := New(testConfig(), nil)
	p.Note("debussy: budget 70 % used")
	p.StopFor(TriggerBudget, "budget exhausted")
	if a := p.PostToolUse(*bashCall("ls", "x")); a.Note != "" || a.StopReason == "" {
		t.Fatalf("stopping answer %+v", a)
	}
	carried := p.Outcome().Undelivered
	if len(carried) != 1 {
		t.Fatalf("undelivered %v", carried)
	}
	next := New(testConfig(), carried)
	if a := next.PostToolUse(*bashCall("ls", "y")); !strings.Contains(a.Note, "budget 70 %") {
		t.Fatalf("next session's first note %q", a.Note)
	}
	if len(next.Outcome().Undelivered) != 0 {
		t.Fatal("a delivered note is still undelivered")
	}
}

func TestHandoffHint(t *testing.T) {
	p := New(testConfig(), nil)
	first := p.HandoffHint("TEMPLATE")
	if !strings.Contains(first, handoffPath) || !strings.Contains(first, "TEMPLATE") {
		t.Fatalf("first hint %q", first)
	}
	if again := p.HandoffHint("TEMPLATE"); strings.Contains(again, "TEMPLATE") || !strings.Contains(again, handoffPath) {
		t.Fatalf("second hint %q", again)
	}
	// Told: the write is recorded as the handoff, and the session goes on.
	w := writeCall(handoffPath)
	w.HandoffBytes = 10
	if !p.WantsHandoffSize() {
		t.Fatal("a told handoff's size is not asked for")
	}
	if a := p.PostToolUse(*w); a.StopReason != "" {
		t.Fatalf("a budget's handoff stopped the session: %+v", a)
	}
	if p.Outcome().Handoff != handoffPath || p.WantsHandoffSize() {
		t.Fatalf("outcome %+v", p.Outcome())
	}
}

func TestPreCompact(t *testing.T) {
	if a := New(testConfig(), nil).PreCompact("auto"); a.Block == "" {
		t.Fatal("compaction not blocked")
	}
	c := testConfig()
	c.AllowCompaction = true
	if a := New(c, nil).PreCompact("auto"); a.Block != "" {
		t.Fatal("allowed compaction blocked")
	}
}

func TestIsHandoffCall(t *testing.T) {
	p := New(testConfig(), nil)
	for _, tt := range []struct {
		c    Call
		want bool
	}{
		{*writeCall(handoffPath), true},
		{*writeCall(".debussy/runs/r/phase-1/handoff-1.md"), true},
		{*writeCall("/repo/other.md"), false},
		{Call{Tool: "Read", FilePath: handoffPath}, true},
		{*bashCall("debussy progress --phase 1 \"x\"", ""), true},
		{*bashCall("debussy done --phase 1", ""), true},
		{*bashCall("debussy doneX", ""), false},
		{*handoffCmd(true), true},
		{*bashCall("cat > $DIR/handoff-1.md <<EOF", ""), true},
		{*bashCall("go test ./...", ""), false},
		{Call{Tool: "Grep"}, false},
	} {
		if got := p.IsHandoffCall(tt.c); got != tt.want {
			t.Errorf("%s %s%s: %v, want %v", tt.c.Tool, tt.c.FilePath, tt.c.Command, got, tt.want)
		}
	}
}

// Effects carry the records the ledger needs.
func TestEffects(t *testing.T) {
	c := testConfig()
	c.Zones = estimator.ZoneConfig{ToolCallsYellow: 1, ToolCallsRed: 2}
	p := New(c, nil)
	p.Observe(runner.Event{}, estimator.Snapshot{ToolCalls: 1})
	p.Observe(runner.Event{}, *ctx(81))
	w := writeCall(handoffPath)
	w.HandoffBytes = 5
	p.PostToolUse(*w)
	var kinds []string
	for _, e := range p.Effects() {
		kinds = append(kinds, fmt.Sprintf("%s/%s", e.Kind, e.Event))
	}
	want := "zone/zone zone/zone /trigger /handoff_requested handoff_written/handoff_written stop/stop_decided /hook_stop"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("effects %s\nwant    %s", got, want)
	}
	if len(p.Effects()) != 0 {
		t.Fatal("effects not forgotten")
	}
}

// Every hook call gets exactly one answer, whatever the state: a property
// over random sequences of inputs.
func TestEveryCallAnswered(t *testing.T) {
	calls := []*Call{bashCall("ls", "a"), bashCall("ls", "a"), writeCall(handoffPath), writeCall("/repo/x"), doneCall(), bashCall("go test", "FAIL"), handoffCmd(true)}
	snaps := []*estimator.Snapshot{ctx(10), ctx(75), ctx(81), ctx(99), {Trigger: estimator.TriggerCompaction}, {Estimated: true, ToolCalls: 200}}
	seed := uint64(1)
	rnd := func(n int) int { // xorshift: a fixed sequence without math/rand's state
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for run := 0; run < 300; run++ {
		c := testConfig()
		c.HandoffGraceCalls = rnd(4)
		c.Handoff = rnd(2) == 0
		c.MaxRestarts = rnd(2)
		p := New(c, nil)
		for i := 0; i < 40; i++ {
			switch rnd(6) {
			case 0:
				p.Observe(runner.Event{}, *snaps[rnd(len(snaps))])
			case 1:
				a := p.PreToolUse(*calls[rnd(len(calls))], [2]string{"", "budget says no"}[rnd(2)])
				if a.Note != "" || a.Block != "" || a.StopReason != "" {
					t.Fatalf("run %d: PreToolUse answered %+v", run, a)
				}
			case 2:
				a := p.PostToolUse(*calls[rnd(len(calls))])
				if a.Deny != "" || a.Block != "" || (a.StopReason != "" && a.Note != "") {
					t.Fatalf("run %d: PostToolUse answered %+v", run, a)
				}
				if a.StopReason != "" && p.State() != Stopping && p.State() != Done {
					t.Fatalf("run %d: stop in state %s", run, p.State())
				}
			case 3:
				a := p.Stop(rnd(2) == 0, rnd(3) == 0)
				if a.Deny != "" || a.Note != "" || a.StopReason != "" {
					t.Fatalf("run %d: Stop answered %+v", run, a)
				}
			case 4:
				p.StopFor([]estimator.Trigger{TriggerBudget, TriggerAdaptive}[rnd(2)], "r")
			case 5:
				p.GraceExpired("1s")
			}
			p.Effects()
		}
	}
}

// An emergency stop says it is one: the session logs it as such, not as
// "threshold crossed".
func TestEmergencyStopIsMarked(t *testing.T) {
	p := New(testConfig(), nil)
	p.Observe(runner.Event{}, *ctx(85))
	p.Effects()
	p.GraceExpired("2m0s")
	var stop *StopDecision
	for _, e := range p.Effects() {
		if e.Kind == EffStop {
			stop = e.Stop
		}
	}
	if stop == nil || !stop.Emergency || !strings.Contains(stop.Reason, "did not write its handoff") {
		t.Errorf("stop %+v, want an emergency", stop)
	}
}

// The sandbox's refusal denies the call before it runs, with its sentence,
// recorded as the boundary's; a call it lets through runs; the handoff's
// request still comes first.
func TestBoundaryRefusal(t *testing.T) {
	c := testConfig()
	c.Boundary = func(call Call) string {
		if call.FilePath == "/etc/x" {
			return "debussy sandbox: /etc/x is outside the places this run may write"
		}
		return ""
	}
	p := New(c, nil)
	if a := p.PreToolUse(*writeCall("/etc/x"), ""); !strings.Contains(a.Deny, "outside the places") {
		t.Fatalf("answer %+v, want the boundary's refusal", a)
	}
	var denied *Effect
	for _, e := range p.Effects() {
		if e.Event == "tool_denied" {
			denied = &e
		}
	}
	if denied == nil || denied.Fields.Why != "boundary" || denied.Fields.Reason == nil || !strings.Contains(*denied.Fields.Reason, "/etc/x") ||
		!strings.Contains(denied.Log, "sandbox boundary refused") {
		t.Fatalf("effect %+v, want a tool_denied of the boundary's", denied)
	}
	if a := p.PreToolUse(*writeCall("/repo/a.go"), ""); a.Deny != "" {
		t.Fatalf("a call inside: %+v", a)
	}
	p.Observe(runner.Event{}, *ctx(81))
	if a := p.PreToolUse(*writeCall("/etc/x"), ""); !strings.Contains(a.Deny, handoffPath) {
		t.Fatalf("during the handoff stage: %+v, want the handoff's request", a)
	}
}
