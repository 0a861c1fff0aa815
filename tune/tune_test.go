package tune

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/debussy-dev/debussy/budget"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/history"
)

// linear is a one-session transcript of n turns, the first at start and
// each adding step, each making one Bash call with its own result.
func linear(n int, start, step int64) history.Stream {
	s := history.Session{N: 1, TriggerTurn: -1}
	for i := range n {
		ctx := start + int64(i)*step
		s.Turns = append(s.Turns, history.Turn{
			Usage: budget.Tokens{Input: 3, CacheWrite: min(step, ctx-3), CacheRead: ctx - 3 - min(step, ctx-3), Output: 200},
			Calls: []history.Call{{ID: fmt.Sprintf("t%d", i), Name: "Bash", Command: fmt.Sprintf("go test ./p%d", i),
				Input: fmt.Appendf(nil, `{"command":"go test ./p%d"}`, i), Result: fmt.Sprintf("ok p%d", i), ResultLen: 5}},
		})
	}
	return history.Stream{Source: history.SourceClaude, Path: "t.jsonl", Model: "claude-sonnet-4-5", Sessions: []history.Session{s}}
}

// Restarts counted by hand: with no restart recorded, a restart prompt is
// the first context plus 3K; a session crosses at the first turn at or
// above the limit, refuses its calls, writes its handoff on the next turn,
// and the next session redoes the refused turn from the restart prompt.
func TestReplayByHand(t *testing.T) {
	tests := []struct {
		name     string
		stream   history.Stream
		window   int64
		set      func(c *config.Config)
		restarts []int
		out      bool
		peak     int64
		sessions int
	}{
		{name: "50 % of 200K: at 100K, then 23K + 8 turns of 10K (the handoff turn 5K above)", stream: linear(20, 20_000, 10_000), window: 200_000,
			set: func(c *config.Config) { c.ContextThreshold = 50 }, restarts: []int{8, 16}, peak: 108_000, sessions: 3},
		{name: "90 %", stream: linear(20, 20_000, 10_000), window: 200_000,
			set: func(c *config.Config) { c.ContextThreshold = 90 }, restarts: []int{16}, peak: 185_000, sessions: 2},
		{name: "max_restarts 1 runs out", stream: linear(20, 20_000, 10_000), window: 200_000,
			set: func(c *config.Config) { c.ContextThreshold, c.MaxRestarts = 50, 1 }, restarts: []int{8}, out: true, peak: 108_000, sessions: 2},
		{name: "handoff off: the crossing turn's calls run, the next session begins after it", stream: linear(20, 20_000, 10_000), window: 200_000,
			set: func(c *config.Config) { c.ContextThreshold, c.Handoff = 50, false }, restarts: []int{9, 18}, peak: 103_000, sessions: 3},
		{name: "a 1M window, the 200K cap", stream: linear(20, 100_000, 20_000), window: 1_000_000,
			set: func(c *config.Config) { c.ContextMaxTokens = 200_000 }, restarts: []int{5, 10, 15}, peak: 208_000, sessions: 4},
		{name: "a 1M window, no cap", stream: linear(20, 100_000, 20_000), window: 1_000_000,
			set: func(c *config.Config) { c.ContextMaxTokens = 0 }, restarts: nil, peak: 480_000, sessions: 1},
		{name: "max_restarts 0: a threshold only warns", stream: linear(20, 20_000, 10_000), window: 200_000,
			set: func(c *config.Config) { c.ContextThreshold, c.MaxRestarts = 50, 0 }, restarts: nil, peak: 210_000, sessions: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.stream
			st.Window = tt.window
			w := layout(&st)
			m := measure([]*work{w})
			m.Handoff = 5_000 // the handoff turn: 5K more than the crossing
			cfg := config.Defaults()
			tt.set(&cfg)
			out := replay(w, cfg, tt.window, &m)
			var peak int64
			for _, tr := range out.turns {
				peak = max(peak, tr.ctx)
			}
			if !slices.Equal(out.restarts, tt.restarts) || out.outOfRestarts != tt.out || out.sessions != tt.sessions || peak != tt.peak {
				t.Errorf("restarts at %v (out of restarts %v), %d sessions, peak %d; want %v (%v), %d, %d",
					out.restarts, out.outOfRestarts, out.sessions, peak, tt.restarts, tt.out, tt.sessions, tt.peak)
			}
		})
	}
}

// A real run's record replayed at its own settings makes its restarts
// where it made them; the current settings come first.
func TestSelfCheck(t *testing.T) {
	res := history.Runs(filepath.Join("..", "history", "testdata", "run"), history.RunFilter{})
	rep, err := Tune(res.Streams, Options{Config: config.Defaults(), Thresholds: []int{60, 70}})
	if err != nil {
		t.Fatal(err)
	}
	sc := rep.SelfCheck
	if !sc.Exact || len(sc.Sessions) != 1 || !slices.Equal(sc.Sessions[0].RecordedAt, []int{0, 23}) || !sc.Sessions[0].SettingsRecorded {
		t.Errorf("self-check %+v", sc)
	}
	if d := sc.CostUSD/sc.RecordedCostUSD - 1; d > 0.05 || d < -0.05 {
		t.Errorf("the recording replayed costs $%.4f, the run recorded $%.4f", sc.CostUSD, sc.RecordedCostUSD)
	}
	if c := rep.Candidates[0]; !c.Current || c.ContextThreshold != 80 || c.MaxRestarts != 3 {
		t.Errorf("the current settings are not first: %+v", c)
	}
	for _, c := range rep.Candidates {
		if c.ContextThreshold == 70 && c.MaxRestarts == 3 && !slices.Equal(c.RestartsBySession, []int{2}) {
			t.Errorf("at 70 %% (the run's threshold) the prediction is %v, the run restarted twice", c.RestartsBySession)
		}
	}
	if rep.Model.BaseFrom != "measured" || rep.Model.HandoffFrom != "measured" {
		t.Errorf("the restart prompt and the handoff turn are not measured from the run's restarts: %+v", rep.Model)
	}
}

func TestRecommend(t *testing.T) {
	cands := []Candidate{
		{Current: true, ContextThreshold: 80, CostUSD: 10, TurnsOver200K: 5, PeakTokens: 300_000},
		{ContextThreshold: 70, CostUSD: 9, TurnsOver200K: 3, PeakTokens: 250_000},
		{ContextThreshold: 60, CostUSD: 9.3, TurnsOver200K: 1, PeakTokens: 210_000},
		{ContextThreshold: 50, CostUSD: 11, TurnsOver200K: 0, PeakTokens: 150_000},
		{ContextThreshold: 40, CostUSD: 5, OutOfRestarts: 1},
	}
	for obj, want := range map[string]int{ObjectiveCost: 70, ObjectiveBalanced: 60, ObjectiveContext: 50} {
		if got := recommend(cands, obj); got.ContextThreshold != want {
			t.Errorf("%s picks %d %%, want %d %% (%s)", obj, got.ContextThreshold, want, got.Why)
		}
	}
}
