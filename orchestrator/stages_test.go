package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/state"
)

// hooks is what session n of phase 1 heard at its hooks, one answer a line.
func (f *fixture) hooks(n int) string {
	f.t.Helper()
	data, err := os.ReadFile(hooksPath(f.script, "1", n))
	if err != nil {
		f.t.Fatalf("session %d never started: %v", n, err)
	}
	return string(data)
}

// eventNames are the names in the run's events.jsonl, in order.
func (f *fixture) eventNames() []string {
	f.t.Helper()
	run := f.lastRun()
	data, err := os.ReadFile(filepath.Join(f.store.Dir, "runs", run.ID, "events.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal([]byte(line), &ev)
		out = append(out, ev.Event)
	}
	return out
}

// checkpointText is every checkpoint file the run wrote, concatenated.
func (f *fixture) checkpointText() string {
	f.t.Helper()
	run := f.lastRun()
	paths, _ := filepath.Glob(filepath.Join(f.store.Dir, "runs", run.ID, "phase-1", "checkpoint-*"))
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// Each stage of the session's budget, with the fake CLI asking at its
// hooks: what the agent hears, which tools run, how the session ends and
// what the next session is told. The fixture's threshold is 50 % of a
// 100K window, so the warning comes at 40 %.
func TestStages(t *testing.T) {
	t.Parallel()
	const secret = "sk-ant-api03-SECRETSECRETSECRET"
	tests := []struct {
		name   string
		set    func(c *config.Config)
		script script
		// hooks is checked per session (1-based index - 1): each string
		// must appear in that session's hook log; a "!" prefix must not.
		hooks      [][]string
		prompt2    []string // in session 2's prompt; "!" prefix: absent
		exists     []string // in the work tree; "!" prefix: absent
		sessions   int
		events     []string // in events.jsonl, as a subsequence
		check      func(t *testing.T, p *state.PhaseRecord)
		checkpoint []string // in the checkpoint files; "!" prefix: absent
	}{
		{
			name:     "warning at T-10, once",
			script:   script{"1": {{"usage 42000", "write a.txt", "write b.txt", "done", "result"}}},
			hooks:    [][]string{{"post Write note: debussy: your context is at 42% of the window", "debussy progress --phase 1", "!stop"}},
			exists:   []string{"a.txt", "b.txt"},
			sessions: 1,
			events:   []string{"context_warning", "note"},
		},
		{
			name: "handoff at T: other tools refused, the write ends the session, the next prompt embeds it",
			script: script{"1": {
				{"write a.txt", "usage 55000", "write b.txt", "progress noted", "handoff ## Completed\\nMARKER-7f3a wrote a.txt"},
				{"done", "result"},
			}},
			hooks: [][]string{{"pre Write deny: debussy: context 55 % of 100K ≥ 50 %", "/handoff-1.md`", "## Completed",
				"post Write stop: context 55 % of 100K ≥ 50 %", "!pre Bash deny"}},
			prompt2:  []string{"MARKER-7f3a wrote a.txt"},
			exists:   []string{"a.txt", "!b.txt"},
			sessions: 2,
			events:   []string{"trigger", "handoff_requested", "tool_denied", "handoff_written", "hook_stop", "session_ended", "commit", "checkpoint"},
			// The refused write is debussy's doing, not a failure to look into.
			checkpoint: []string{"b.txt` — refused by debussy (handoff requested: context 55 % of 100K ≥ 50 %); it did not run",
				"!— failed", "!Failed commands", "!Find out why"},
			check: func(t *testing.T, p *state.PhaseRecord) {
				if len(p.Handoffs) != 1 || !strings.HasSuffix(p.Handoffs[0], "handoff-1.md") || p.Emergencies != 0 || p.Restarts != 1 {
					t.Errorf("record: handoffs %v, emergencies %d, restarts %d", p.Handoffs, p.Emergencies, p.Restarts)
				}
			},
		},
		{
			name: "a secret copied into the handoff reaches no prompt and no checkpoint",
			script: script{"1": {
				{"echo OPENAI_API_KEY=" + secret, "usage 55000", "write x.txt", "handoff the key is " + secret + " and API_TOKEN=hunter2hunter2"},
				{"done", "result"},
			}},
			prompt2:    []string{"the key is", "[redacted]", "!" + secret, "!hunter2hunter2"},
			sessions:   2,
			checkpoint: []string{"the key is", "!" + secret, "!hunter2hunter2"},
		},
		{
			name: "a handoff naming a file that does not exist is contradicted in the next prompt",
			script: script{"1": {
				{"write a.txt", "usage 55000", "write b.txt", "handoff ## Completed\\nwrote `a.txt` and `gone.txt`; see README.md"},
				{"done", "result"},
			}},
			prompt2:  []string{"wrote `a.txt` and `gone.txt`", "names `gone.txt`, which does not exist", "!names `a.txt`", "!names `README.md`"},
			sessions: 2,
		},
		{
			name:     "emergency: no handoff within the grace calls",
			set:      func(c *config.Config) { c.HandoffGraceCalls = 2 },
			script:   script{"1": {{"usage 55000", "write a.txt", "write b.txt", "write c.txt", "write d.txt"}, {"done", "result"}}},
			hooks:    [][]string{{"pre Write deny", "post Write stop"}},
			prompt2:  []string{"within 2 tool calls"},
			exists:   []string{"!a.txt", "!b.txt", "c.txt", "!d.txt"},
			sessions: 2,
			events:   []string{"handoff_requested", "tool_denied", "tool_denied", "emergency_stop", "hook_stop"},
			check: func(t *testing.T, p *state.PhaseRecord) {
				if p.Emergencies != 1 || len(p.Handoffs) != 0 {
					t.Errorf("emergencies %d, handoffs %v", p.Emergencies, p.Handoffs)
				}
			},
		},
		{
			name:     "emergency: no handoff within the grace time, no tool comes",
			set:      func(c *config.Config) { c.HandoffGraceTime = config.Duration(100 * time.Millisecond) },
			script:   script{"1": {{"usage 55000"}, {"done", "result"}}},
			prompt2:  []string{"did not write its handoff within 100ms"},
			sessions: 2,
			events:   []string{"handoff_requested", "emergency_stop"},
		},
		{
			name:     "emergency: the agent stops twice without a handoff",
			script:   script{"1": {{"usage 55000", "result"}, {"done", "result"}}},
			hooks:    [][]string{{"stop block: debussy: context 55 % of 100K ≥ 50 %", "/handoff-1.md`"}},
			prompt2:  []string{"ended its turn again without writing its handoff"},
			sessions: 2,
			events:   []string{"handoff_requested", "stop_blocked", "emergency_stop"},
		},
		{
			name:     "emergency at 98 %, before any handoff",
			script:   script{"1": {{"usage 99000", "write a.txt", "write b.txt"}, {"done", "result"}}},
			hooks:    [][]string{{"post Write stop", "!deny"}},
			exists:   []string{"a.txt", "!b.txt"},
			sessions: 2,
			events:   []string{"emergency_stop", "hook_stop"},
		},
		{
			name:     "handoff disabled: a plain stop after the running tool",
			set:      func(c *config.Config) { c.Handoff = false },
			script:   script{"1": {{"usage 55000", "write a.txt", "write b.txt"}, {"done", "result"}}},
			hooks:    [][]string{{"post Write stop", "!deny", "!handoff"}},
			exists:   []string{"a.txt", "!b.txt"},
			prompt2:  []string{"a.txt"},
			sessions: 2,
		},
		{
			name:     "a turn ending without debussy done continues in the same session",
			script:   script{"1": {{"write a.txt", "result", "done", "result"}}},
			hooks:    [][]string{{"stop block: debussy: you ended your turn without `debussy done`. Run `debussy done --phase 1`"}},
			sessions: 1,
			events:   []string{"stop_blocked", "session_ended", "commit", "phase_ended"},
		},
		{
			name:     "a second stop without a signal starts the remediation",
			script:   script{"1": {{"write a.txt", "result"}, {"done", "result"}}},
			hooks:    [][]string{{"stop block"}, {"!stop block"}},
			prompt2:  []string{"without running `debussy done --phase 1`"},
			sessions: 2,
			events:   []string{"stop_blocked", "session_ended", "remediation"},
		},
		{
			name:     "doom loop: the third identical call is nudged, not the first two",
			script:   script{"1": {{"echo same", "echo same", "echo same", "done", "result"}}},
			hooks:    [][]string{{"post Bash note: debussy: you have called Bash with the same arguments 3 times"}},
			sessions: 1,
			events:   []string{"nudge", "note"},
			check: func(t *testing.T, p *state.PhaseRecord) {
				if len(p.Nudges) != 1 || p.Nudges[0].Kind != "doom_loop" || p.Nudges[0].Count != 3 || p.Nudges[0].Tool != "Bash" {
					t.Errorf("nudges %+v", p.Nudges)
				}
			},
		},
		{
			name:     "doom loop: the fifth identical call restarts with it to avoid",
			set:      func(c *config.Config) { c.NudgeCooldown = 0 },
			script:   script{"1": {{"echo same", "echo same", "echo same", "echo same", "echo same", "echo never"}, {"done", "result"}}},
			hooks:    [][]string{{"post Bash stop: doom loop", "!never"}},
			prompt2:  []string{"echo same"},
			sessions: 2,
		},
		{
			name: "exploration: reads without an edit are nudged",
			set:  func(c *config.Config) { c.NudgeExploreReads = 3 },
			script: script{"1": {{"read README.md", "read plan/phase-1.md", "read plan/MASTER_PLAN.md",
				"write a.txt", "done", "result"}}},
			hooks:    [][]string{{"post Read note: debussy: 3 reads in a row without an edit"}},
			sessions: 1,
			events:   []string{"nudge"},
		},
		{
			name: "yellow zone: a note; red zone: the handoff",
			set: func(c *config.Config) {
				c.ZoneToolCallsYellow, c.ZoneToolCallsRed, c.ZoneAction = 2, 4, config.ZoneActionHandoff
			},
			script:   script{"1": {{"echo one", "echo two", "echo three", "echo four", "handoff RED-ZONE-HANDOFF"}, {"done", "result"}}},
			hooks:    [][]string{{"post Bash note: debussy: this session is in the yellow zone", "pre Bash deny: debussy: red zone", "post Write stop"}},
			prompt2:  []string{"RED-ZONE-HANDOFF"},
			sessions: 2,
			events:   []string{"zone", "zone"},
			check: func(t *testing.T, p *state.PhaseRecord) {
				if len(p.Zones) != 2 || p.Zones[0] != "red" || p.Zone != "green" {
					t.Errorf("zones %v, zone %q", p.Zones, p.Zone)
				}
			},
		},
		{
			name: "the agent's own handoff after a task: its PostToolUse stops, the next session starts from it",
			script: script{"1": {
				{"write a.txt", "usage 42000", "write b.txt", "agenthandoff ## Completed\\nMARKER-9a1 a.txt b.txt", "write never.txt"},
				{"done", "result"},
			}},
			hooks:    [][]string{{"post Write note: debussy: your context is at 42% of the window", "run `debussy handoff --phase 1`", "post Bash stop: the agent handed off at a task boundary", "!deny"}},
			prompt2:  []string{"MARKER-9a1", "The agent handed off at a task boundary", "(restart 1 of"},
			exists:   []string{"a.txt", "b.txt", "!never.txt"},
			sessions: 2,
			events:   []string{"context_warning", "handoff_written", "agent_handoff", "stop_decided", "commit", "checkpoint"},
			check: func(t *testing.T, p *state.PhaseRecord) {
				if p.Restarts != 1 || len(p.Handoffs) != 1 || filepath.Base(p.Handoffs[0]) != "handoff-1.md" {
					t.Errorf("restarts %d, handoffs %v", p.Restarts, p.Handoffs)
				}
			},
		},
		{
			name:     "the CLI's compaction is blocked",
			script:   script{"1": {{"precompact", "done", "result"}}},
			hooks:    [][]string{{"compact block: debussy restarts this session"}},
			sessions: 1,
			events:   []string{"compaction_blocked"},
		},
		{
			name:     "allow_compaction lets it compact without a restart",
			set:      func(c *config.Config) { c.AllowCompaction = true },
			script:   script{"1": {{"precompact", "done", "result"}}},
			hooks:    [][]string{{"!compact block"}},
			sessions: 1,
			events:   []string{"compaction"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.script)
			f.cfg.Handoff = true
			// A stop waits this long for the next PostToolUse; the race
			// detector on a busy machine can take longer than the fixture's.
			f.cfg.StopGrace = config.Duration(3 * time.Second)
			if tt.set != nil {
				tt.set(&f.cfg)
			}
			if err := f.run(context.Background()); err != nil {
				t.Fatalf("run: %v\n%s", err, f.log)
			}
			rec := f.lastRun().Phase("1")
			if rec.Sessions != tt.sessions {
				t.Errorf("sessions = %d, want %d\n%s", rec.Sessions, tt.sessions, f.log)
			}
			for i, want := range tt.hooks {
				contains(t, "session "+string(rune('1'+i))+" hooks", f.hooks(i+1), want)
			}
			if len(tt.prompt2) > 0 {
				contains(t, "session 2 prompt", f.prompt("1", 2), tt.prompt2)
			}
			if len(tt.checkpoint) > 0 {
				contains(t, "checkpoints", f.checkpointText(), tt.checkpoint)
			}
			for _, e := range tt.exists {
				name, absent := strings.CutPrefix(e, "!")
				_, err := os.Stat(filepath.Join(f.root, name))
				if absent != (err != nil) {
					t.Errorf("%s: exists %v, want %v", name, err == nil, !absent)
				}
			}
			if got := f.eventNames(); !subsequence(got, tt.events) {
				t.Errorf("events %v\ndo not contain in order %v", got, tt.events)
			}
			if tt.check != nil {
				tt.check(t, rec)
			}
		})
	}
}

func contains(t *testing.T, what, got string, want []string) {
	t.Helper()
	for _, w := range want {
		s, absent := strings.CutPrefix(w, "!")
		if strings.Contains(got, s) == absent {
			t.Errorf("%s: contains %q = %v, want %v\n%s", what, s, absent, !absent, got)
		}
	}
}

func subsequence(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
