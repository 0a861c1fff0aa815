package recorder

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/state"
)

type collected struct {
	mu    sync.Mutex
	names []string
}

func (c *collected) Fact(f Fact, _ *state.Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, f.Event.EventName())
}

func newRecorder(t *testing.T, subs ...Subscriber) (*Recorder, *state.Store, *state.Ledger) {
	t.Helper()
	store := state.New(filepath.Join(t.TempDir(), state.DirName))
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	n := 0
	now := func() time.Time { n++; return t0.Add(time.Duration(n) * time.Second) }
	earlier := &state.Run{ID: "dead", Plan: "/p", Status: state.StatusRunning, StartedAt: t0.Add(-time.Hour),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusRunning, Sessions: 1}}}
	l := &state.Ledger{Version: 1, Runs: []*state.Run{earlier}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	l, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	r := Start(Options{Store: store, Ledger: l, Run: &state.Run{ID: "r1"}, Now: now, Subscribers: subs})
	return r, store, l
}

func loadRun(t *testing.T, store *state.Store, id string) *state.Run {
	t.Helper()
	l, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	return l.Run(id)
}

// Facts change the ledger only once the run has started; a Sync writes
// even before (a leftover commit is listed before its branch moves), and
// after the start every durable fact is written without one.
func TestRecorderWritesTheProjection(t *testing.T) {
	sub := &collected{}
	r, store, _ := newRecorder(t, sub)
	r.Emit(record.StaleRun{Run: "dead", PID: 7, Phases: []record.StalePhase{{Phase: "1", Status: "interrupted", Reason: "killed"}}})
	r.Read(func(*state.Ledger, *state.Run) {})
	if got := loadRun(t, store, "dead"); got.Status != state.StatusRunning {
		t.Fatalf("a fact before the start was written: %s", got.Status)
	}
	r.Emit(record.CommitListed{Run: "dead", Phase: "1", Commit: "abc"})
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := loadRun(t, store, "dead"); got.Status != state.StatusInterrupted || got.Phase("1").Commits[0] != "abc" {
		t.Fatalf("after Sync the dead run is %s with commits %v", got.Status, got.Phase("1").Commits)
	}
	if loadRun(t, store, "r1") != nil {
		t.Fatal("the run joined the ledger before it started")
	}
	r.Emit(record.RunStarted{Plan: "/p", Phases: 2, Order: []record.PlannedPhase{{ID: "1", Title: "One"}, {ID: "2"}}})
	p := r.Phase("1")
	p.Emit(record.PhaseStarted{Phase: "1", Base: "b0", Attempt: 1})
	p.Emit(record.SessionSpawned{Phase: "1", Session: 1})
	p.Emit(record.CommitListed{Phase: "1", Commit: "c1"})
	p.Emit(record.CommitListed{Phase: "1", Commit: "c2"})
	p.Emit(record.CommitUnlisted{Phase: "1", Commit: "c2"})
	p.Emit(Spend{Phase: "1", Economics: state.Economics{Tokens: 10}, Tokens: 10, CostUSD: 0.5})
	p.Emit(record.BudgetExhausted{Phase: "1", Scope: "phase"})
	p.Emit(Spend{Phase: "1", Economics: state.Economics{Tokens: 12}, Tokens: 12, CostUSD: 0.6})
	p.Emit(record.Restart{Phase: "1", Restart: 1, Of: 3})
	p.Emit(record.PhaseEnded{Phase: "1", Status: "failed", Error: "boom", Reason: "failed (see debussy logs)"})
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	got := loadRun(t, store, "r1")
	if got == nil || got.Status != state.StatusRunning || len(got.Phases) != 2 {
		t.Fatalf("run: %+v", got)
	}
	want := p.Record()
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if js(got.Phase("1")) != js(want) {
		t.Fatalf("the ledger's record and the phase's copy differ:\nledger %s\nphase  %s", js(got.Phase("1")), js(want))
	}
	if want.Status != state.StatusFailed || want.Sessions != 1 || strings.Join(want.Commits, ",") != "c1" || want.Restarts != 1 ||
		want.Tokens != 12 || !want.Economics.Exhausted || want.LastError != "boom" || want.Attempts != 1 {
		t.Fatalf("phase record: %+v", want)
	}
	r.Emit(record.RunEnded{Status: "failed", ExitCode: 1})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := loadRun(t, store, "r1"); got.Status != state.StatusFailed || got.ExitCode != 1 || got.EndedAt.IsZero() {
		t.Fatalf("after Close: %+v", got)
	}
	if names := strings.Join(sub.names, " "); !strings.HasPrefix(names, "stale_run commit_listed run_started phase_started") {
		t.Fatalf("subscriber saw %s", names)
	}
	r.Emit(record.RunEnded{}) // after Close: dropped, no panic
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
}

// A volatile fact changes the ledger within FlushEvery without a write of
// its own and stays out of events.jsonl.
func TestRecorderVolatileFacts(t *testing.T) {
	defer func(d time.Duration) { FlushEvery = d }(FlushEvery)
	FlushEvery = 50 * time.Millisecond
	store := state.New(filepath.Join(t.TempDir(), state.DirName))
	events, err := store.OpenEvents("r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := Start(Options{Store: store, Run: &state.Run{ID: "r1"},
		Subscribers: []Subscriber{EventsLog{Events: events}, NewLogger(log, "r1", "")}})
	r.Emit(record.RunStarted{Plan: "/p", Phases: 1, Name: "Plan", Order: []record.PlannedPhase{{ID: "1"}}})
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	p := r.Phase("1")
	p.Emit(Spend{Phase: "1", Tokens: 42})
	p.Emit(record.CommitNothing{Phase: "1", Kind: "restart"})
	deadline := time.Now().Add(5 * time.Second)
	for loadRun(t, store, "r1").Phase("1").Tokens != 42 {
		if time.Now().After(deadline) {
			t.Fatal("the volatile change never reached the ledger")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	lines, _ := os.ReadFile(store.EventsPath("r1"))
	if bytes.Contains(lines, []byte("spend")) || bytes.Contains(lines, []byte("commit_nothing")) || !bytes.Contains(lines, []byte("run_started")) {
		t.Fatalf("events.jsonl:\n%s", lines)
	}
	if !strings.Contains(logs.String(), "run started") || !strings.Contains(logs.String(), "nothing to commit") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

// The log says each fact once, in the words it always used: a resumed
// phase when its checkpoint counts the files, a phase's end by how it
// ended, nothing for a fact the log has no line for.
func TestLoggerLines(t *testing.T) {
	var logs bytes.Buffer
	l := NewLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), "r1", "/repo")
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	run := &state.Run{ID: "r1", Phases: []*state.PhaseRecord{{ID: "1", Sessions: 2, Restarts: 1, WaitingUntil: t0.Add(time.Hour)}}}
	for _, ev := range []record.Event{
		record.PhaseResumed{Phase: "1", Run: "r0"},
		record.Checkpoint{Phase: "1", Kind: "resume", Files: 3},
		record.Checkpoint{Phase: "1", Kind: "restart", Files: 4},
		record.PhaseEnded{Phase: "1", Status: "completed"},
		record.PhaseEnded{Phase: "1", Status: "interrupted", Error: "phase 1: 5-hour limit reached", Reason: "usage limit reached"},
		record.PhaseEnded{Phase: "1", Status: "failed", Error: "boom"},
		record.Worktree{Phase: "1", Path: "/repo/.debussy/worktrees/r1/phase-1", Branch: "b"},
		Spend{Phase: "1", Tokens: 5},
		Log{Phase: "1", Level: slog.LevelWarn, Msg: "nudge", Args: []any{"phase", "1", "kind", "doom_loop"}},
	} {
		l.Fact(Fact{At: t0, Event: ev}, run)
	}
	want := []string{
		`level=INFO msg="resuming the phase from a checkpoint" phase=1 run=r0 files_changed=3`,
		`level=INFO msg="phase completed" phase=1 sessions=2 restarts=1`,
		`level=WARN msg="phase 1: 5-hour limit reached" resets=2026-12-05T10:00:00Z`,
		`level=ERROR msg="phase ended" phase=1 status=failed err=boom`,
		`level=INFO msg="phase worktree" phase=1 branch=b path=.debussy/worktrees/r1/phase-1 resumed=false`,
		`level=WARN msg=nudge phase=1 kind=doom_loop`,
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		_, rest, _ := strings.Cut(line, " ") // time=…
		got = append(got, rest)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
