package state

import (
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/budget"
)

func TestEconomicsLedger(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), DirName))
	phase := &Economics{
		Tokens: 1_250_500, TokensByKind: budget.Tokens{Input: 50_000, Output: 500, CacheRead: 1_200_000},
		CostUSD: 1.23, ReportedCostUSD: 1.22, WallMs: 90_000, APITurns: 12,
		Limits: Limits{Tokens: 1_000_000}, Enforcement: "strict", UsedPct: 125.1, Dimension: "tokens",
		Level: "exhausted", Exhausted: true,
		Quarters: []budget.Quarter{{At: t0, UsedPct: 25, TasksDone: 1, TasksTotal: 4, Probability: 1, Decision: budget.Continue}},
		Progress: "acting",
	}
	l := &Ledger{Runs: []*Run{{
		ID: "r1", Plan: "/p/MASTER_PLAN.md", Status: StatusFailed, StartedAt: t0, ExitCode: 1,
		Phases: []*PhaseRecord{
			{ID: "1", Status: StatusFailed, Economics: phase},
			{ID: "2", Status: StatusPending},
			{ID: "3", Status: StatusCompleted, Economics: &Economics{Tokens: 10, CostUSD: 0.01, APITurns: 1, UnknownModels: []string{"x"}}},
		},
	}}}
	sum := l.Runs[0].SumPhases()
	l.Runs[0].Economics = &sum
	if err := s.Save(l); err != nil {
		t.Fatal(err)
	}
	back, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Runs[0].Phases[0].Economics; !reflect.DeepEqual(got, phase) {
		t.Errorf("phase economics round trip:\n got %+v\nwant %+v", got, phase)
	}
	if back.Runs[0].Phases[1].Economics != nil {
		t.Error("a phase that never ran has economics")
	}
	got := back.Runs[0].Economics
	if got.Tokens != 1_250_510 || got.APITurns != 13 || math.Abs(got.CostUSD-1.24) > 1e-9 || got.ReportedCostUSD != 1.22 ||
		got.TokensByKind.CacheRead != 1_200_000 || !reflect.DeepEqual(got.UnknownModels, []string{"x"}) {
		t.Errorf("run sum = %+v", got)
	}

	// status --json prints the run record: the figures status shows are
	// where jq expects them.
	b, err := json.Marshal(back.Runs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"economics":{"tokens":1250500,`, `"limits":{"tokens":1000000}`, `"level":"exhausted"`, `"used_pct":125.1`,
		`"quarters":[{"at":"2026-11-21T22:30:05Z","used_pct":25,"tasks_done":1,"tasks_total":4,"probability":1,"decision":"continue"}]`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("json lacks %s:\n%s", want, b)
		}
	}
	// A phase without a budget records no limits.
	b, _ = json.Marshal(Economics{Tokens: 1, WallMs: int64(time.Second / time.Millisecond)})
	if strings.Contains(string(b), "limits") || strings.Contains(string(b), "quarters") {
		t.Errorf("empty budget fields are written: %s", b)
	}
}
