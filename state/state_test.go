package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/debussy-dev/debussy/record"
)

var t0 = time.Date(2026, 11, 21, 22, 30, 5, 0, time.UTC)

func TestNewRunID(t *testing.T) {
	if got := NewRunID(t0, bytes.NewReader([]byte{0x4f, 0x2c})); got != "20261121-2230-4f2c" {
		t.Errorf("NewRunID = %q", got)
	}
	got := NewRunID(t0, iotest.ErrReader(errors.New("no entropy")))
	if !regexp.MustCompile(`^20261121-2230-[0-9a-f]{4}$`).MatchString(got) {
		t.Errorf("NewRunID with failing reader = %q", got)
	}
}

func TestPaths(t *testing.T) {
	s := New("/r/.debussy")
	tests := []struct{ got, want string }{
		{s.RunDir("20261121-2230-4f2c"), "/r/.debussy/runs/20261121-2230-4f2c"},
		{s.PhaseDir("r1", "2.1"), "/r/.debussy/runs/r1/phase-2.1"},
		{s.PhaseDir("r1", "../../x"), "/r/.debussy/runs/r1/phase-%2E.%2F..%2Fx"},
		{s.PhaseDir("..", "a b"), "/r/.debussy/runs/%2E./phase-a%20b"},
		{s.signalPath("r1", "3"), "/r/.debussy/runs/r1/signals/3.json"},
		{s.EventsPath("r1"), "/r/.debussy/runs/r1/events.jsonl"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestLedgerSaveLoad(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), DirName))
	l, err := s.Load()
	if err != nil || l.Version != LedgerVersion || len(l.Runs) != 0 {
		t.Fatalf("missing ledger: %+v, %v", l, err)
	}
	l.Runs = append(l.Runs, &Run{
		ID: "r1", Plan: "/p/MASTER_PLAN.md", Status: StatusRunning, StartedAt: t0, PID: 42,
		Phases: []*PhaseRecord{{
			ID: "1", Title: "Setup", Status: StatusCompleted, Attempts: 1, Sessions: 2, Restarts: 1,
			Tokens: 1234, CostUSD: 0.5, Commits: []string{"abc"}, StartedAt: t0, EndedAt: t0.Add(time.Minute),
			StopLatencyMs: []int64{1200}, RestartTurnaroundMs: []int64{3400},
		}},
	})
	for range 3 { // repeated saves replace the file
		if err := s.Save(l); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "state.json" {
		t.Errorf("state dir holds %v, want only state.json", entries)
	}
	back, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, l) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back.Runs[0], l.Runs[0])
	}
	data, _ := os.ReadFile(filepath.Join(s.Dir, "state.json"))
	for _, want := range []string{`"started_at"`, `"stop_latency_ms"`, `"cost_usd"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("state.json lacks %s", want)
		}
	}
	if strings.Contains(string(data), `"ended_at": "0001`) {
		t.Error("zero ended_at written")
	}
}

func TestSaveFailureLeavesNoTemp(t *testing.T) {
	s := New(t.TempDir())
	// A non-empty directory where state.json should go makes the rename fail.
	if err := os.MkdirAll(filepath.Join(s.Dir, "state.json", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Ledger{}); err == nil {
		t.Fatal("save over a directory succeeded")
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Errorf("temp file left behind: %v", entries)
	}
}

func TestCorruptLedger(t *testing.T) {
	tests := []struct{ name, content string }{
		{"garbage", "{not json"},
		{"truncated", `{"version":1,"runs":[{"id":"r1"`},
		{"null run", `{"version":1,"runs":[null]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(t.TempDir())
			path := filepath.Join(s.Dir, "state.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load()
			if !errors.Is(err, ErrCorruptLedger) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want ErrCorruptLedger naming %s", err, path)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Error("corrupt ledger was modified")
			}
		})
	}
	s := New(t.TempDir())
	_ = os.WriteFile(filepath.Join(s.Dir, "state.json"), []byte(`{"version":99}`), 0o644)
	if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer version: %v", err)
	}
}

func TestLedgerQueries(t *testing.T) {
	const plan = "/p/MASTER_PLAN.md"
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	run := func(id, plan string, status Status, start int, phases ...*PhaseRecord) *Run {
		return &Run{ID: id, Plan: plan, Status: status, StartedAt: at(start), Phases: phases}
	}
	ph := func(id string, status Status) *PhaseRecord {
		rec := &PhaseRecord{ID: id, Status: status}
		if status != StatusPending && status != StatusSkipped {
			rec.Sessions = 1
		}
		return rec
	}
	l := &Ledger{Runs: []*Run{
		run("a", plan, StatusFailed, 0, ph("1", StatusCompleted), ph("2", StatusFailed), ph("3", StatusPending)),
		run("b", plan, StatusInterrupted, 10, ph("1", StatusSkipped), ph("2", StatusInterrupted), ph("3", StatusPending)),
		run("other", "/q/plan.md", StatusCompleted, 20, ph("2", StatusCompleted), ph("3", StatusFailed)),
		run("c", plan+"/", StatusRunning, 5, ph("2", StatusCompleted), ph("4", StatusRunning)), // older than b despite position
	}}

	if r := l.Latest(); r.ID != "other" {
		t.Errorf("Latest = %s", r.ID)
	}
	var order []string
	for _, r := range l.NewestFirst() {
		order = append(order, r.ID)
	}
	if got := strings.Join(order, " "); got != "other b c a" {
		t.Errorf("NewestFirst = %s, want other b c a", got)
	}
	if r := l.Run("b"); r == nil || r.Phase("2").Status != StatusInterrupted || r.Phase("9") != nil {
		t.Errorf("Run/Phase lookup: %+v", r)
	}
	if l.Run("zz") != nil || (&Ledger{}).Latest() != nil {
		t.Error("lookups of missing runs not nil")
	}

	tests := []struct {
		name, phase      string
		completed        string // run id or ""
		unfinished       string
		unfinishedStatus Status
	}{
		{"completed in the first run", "1", "a", "", ""},
		{"interrupted after completing", "2", "c", "b", StatusInterrupted},
		{"never started", "3", "", "", ""},
		{"running in a dead run", "4", "", "c", StatusRunning},
		{"unknown phase", "9", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, p := l.LastCompleted(plan, tt.phase)
			if id(r) != tt.completed || (r != nil) != (p != nil) {
				t.Errorf("LastCompleted = %s, want %q", id(r), tt.completed)
			}
			r, p = l.LastUnfinished(plan, tt.phase)
			if id(r) != tt.unfinished || (p != nil && p.Status != tt.unfinishedStatus) {
				t.Errorf("LastUnfinished = %s %+v, want %q", id(r), p, tt.unfinished)
			}
		})
	}

	// The newest started record completed: nothing to resume.
	// A newer run that ended phase 4 before any session (a spent budget):
	// the dead run's work is still what to resume from.
	l.Runs = append(l.Runs, run("e", plan, StatusFailed, 25, &PhaseRecord{ID: "4", Status: StatusFailed}))
	if r, _ := l.LastUnfinished(plan, "4"); id(r) != "c" {
		t.Errorf("LastUnfinished past a record without sessions = %s, want c", id(r))
	}

	// A rerun that skipped every phase ran no session: the run before it
	// is the latest that worked.
	l.Runs = append(l.Runs, run("f", plan, StatusCompleted, 26, ph("1", StatusSkipped), ph("2", StatusSkipped)))
	if r := l.LatestWorked(); id(r) != "other" || l.Latest().ID != "f" || l.Run("f").Worked() {
		t.Errorf("LatestWorked = %s (Latest %s), want other", id(r), l.Latest().ID)
	}
	if (&Ledger{}).LatestWorked() != nil {
		t.Error("LatestWorked of an empty ledger not nil")
	}

	l.Runs = append(l.Runs, run("d", plan, StatusCompleted, 30, ph("2", StatusCompleted)))
	if r, _ := l.LastUnfinished(plan, "2"); r != nil {
		t.Errorf("LastUnfinished after a later completion = %s", r.ID)
	}
}

func id(r *Run) string {
	if r == nil {
		return ""
	}
	return r.ID
}

func TestSignals(t *testing.T) {
	s := New(t.TempDir())
	if sig, err := s.ReadSignal("r1", "1"); sig != nil || err != nil {
		t.Fatalf("no signal yet: %v, %v", sig, err)
	}
	want := Signal{Phase: "1", Status: StatusCompleted, Reason: "all tasks done", At: t0}
	if err := s.WriteSignal("r1", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadSignal("r1", "1")
	if err != nil || got == nil || *got != want {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if other, _ := s.ReadSignal("r1", "2"); other != nil {
		t.Errorf("signal leaked to phase 2: %+v", other)
	}
	blocked := Signal{Phase: "1", Status: StatusBlocked, Reason: "needs a key", At: t0.Add(time.Second)}
	if err := s.WriteSignal("r1", blocked); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReadSignal("r1", "1"); *got != blocked {
		t.Errorf("replaced signal = %+v", got)
	}
	if err := s.ClearSignal("r1", "1"); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearSignal("r1", "1"); err != nil {
		t.Errorf("clear twice: %v", err)
	}
	if got, _ := s.ReadSignal("r1", "1"); got != nil {
		t.Errorf("after clear: %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(s.RunDir("r1"), "signals"))
	if len(entries) != 0 {
		t.Errorf("signals dir not empty: %v", entries)
	}

	for _, bad := range []Signal{{Phase: "1", Status: "done"}, {Status: StatusCompleted}} {
		if err := s.WriteSignal("r1", bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
	if err := os.WriteFile(s.signalPath("r1", "7"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadSignal("r1", "7"); err == nil || !strings.Contains(err.Error(), s.signalPath("r1", "7")) {
		t.Errorf("corrupt signal: %v", err)
	}
}

func TestProgressConcurrentAppends(t *testing.T) {
	s := New(t.TempDir())
	const writers, lines = 8, 50
	long := strings.Repeat("x", 3000) // longer than PIPE_BUF
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				p := Progress{Phase: fmt.Sprint(w % 2), Message: fmt.Sprintf("w%d-%d %s\nsecond line", w, i, long), At: t0}
				if err := s.AppendProgress("r1", p); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()

	all, err := s.ReadProgress("r1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*lines {
		t.Fatalf("%d lines, want %d", len(all), writers*lines)
	}
	seen := map[string]bool{}
	for _, p := range all {
		head, _, _ := strings.Cut(p.Message, " ")
		if !strings.HasSuffix(p.Message, long+"\nsecond line") || seen[head] {
			t.Fatalf("damaged or duplicated line %q", head)
		}
		seen[head] = true
	}
	phase1, err := s.ReadProgress("r1", "1")
	if err != nil || len(phase1) != writers*lines/2 {
		t.Errorf("phase filter: %d lines, %v", len(phase1), err)
	}
	if none, err := s.ReadProgress("nope", ""); none != nil || err != nil {
		t.Errorf("missing file: %v, %v", none, err)
	}
}

func TestEventLog(t *testing.T) {
	s := New(t.TempDir())
	var mu sync.Mutex
	tick := t0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Millisecond)
		return tick
	}
	log, err := s.OpenEvents("r1", clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Record(record.RunStarted{Plan: "/p/MASTER_PLAN.md", Phases: 3}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 25 {
				if err := log.Record(testEvent{G: g, I: i}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := log.Record(reservedEvent{TS: 1}); err == nil {
		t.Error("reserved field accepted")
	}
	if err := log.Record(unencodableEvent{Ch: make(chan int)}); err == nil {
		t.Error("unencodable field accepted")
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if err := log.Record(record.RunEnded{}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("record after close: %v", err)
	}

	path := s.EventsPath("r1")
	data, _ := os.ReadFile(path)
	first, _, _ := strings.Cut(string(data), "\n")
	if want := `{"ts":"2026-11-21T22:30:05.001Z","event":"run_started","context_threshold":0,"context_window":0,"phases":3,"plan":"/p/MASTER_PLAN.md"}`; first != want {
		t.Errorf("first line\n got %s\nwant %s", first, want)
	}
	lines, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 101 {
		t.Fatalf("%d events, want 101", len(lines))
	}
	seen := map[testEvent]bool{}
	for _, l := range lines {
		if l.TS.IsZero() || l.Event == "" {
			t.Fatalf("bad event %+v", l)
		}
		if e, ok := record.As[testEvent](l); ok {
			seen[e] = true
		}
	}
	if len(seen) != 100 {
		t.Errorf("%d distinct progress events read back, want 100", len(seen))
	}

	// Reopening appends; a torn last line is dropped, a bad middle line is not.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"ts":"2026-11-21T22:31:00Z","event":"tor`)
	_ = f.Close()
	if lines, err := ReadLog(path); err != nil || len(lines) != 101 {
		t.Errorf("torn tail: %d events, %v", len(lines), err)
	}
	_ = os.WriteFile(path, []byte("{}\nnot json\n{}\n"), 0o644)
	if _, err := ReadLog(path); err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Errorf("bad middle line: %v", err)
	}
}

// testEvent is an event of the test's own, from several goroutines.
type testEvent struct {
	G int `json:"g"`
	I int `json:"i"`
}

// reservedEvent has a key the log writes itself.
type reservedEvent struct {
	TS int `json:"ts"`
}

// unencodableEvent has a field JSON cannot write.
type unencodableEvent struct {
	Ch chan int `json:"ch"`
}

func (testEvent) EventName() string        { return "progress" }
func (reservedEvent) EventName() string    { return "bad" }
func (unencodableEvent) EventName() string { return "bad" }

func TestFindActive(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	store := New(filepath.Join(repo, DirName))
	l := &Ledger{Runs: []*Run{
		{ID: "old-running", Status: StatusRunning, StartedAt: t0},
		{ID: "new-running", Status: StatusRunning, StartedAt: t0.Add(time.Hour)},
		{ID: "newest-done", Status: StatusCompleted, StartedAt: t0.Add(2 * time.Hour)},
	}}
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	release, _, err := store.Lock(LockInfo{PID: os.Getpid(), RunID: "new-running", Started: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	noEnv := func(string) string { return "" }

	// Submodule / worktree: .git is a file.
	sub := filepath.Join(repo, "sub")
	_ = os.MkdirAll(filepath.Join(sub, "x"), 0o755)
	_ = os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../.git/modules/sub\n"), 0o644)

	envStateDir := t.TempDir()
	tests := []struct {
		name      string
		env       map[string]string
		cwd       string
		wantDir   string
		wantRun   string
		wantNoRun bool
	}{
		{name: "walk up to the git root", cwd: deep, wantDir: store.Dir, wantRun: "new-running"},
		{name: "from the root itself", cwd: repo, wantDir: store.Dir, wantRun: "new-running"},
		{
			name: "environment wins", cwd: deep,
			env:     map[string]string{EnvStateDir: envStateDir, EnvRunID: "env-run"},
			wantDir: envStateDir, wantRun: "env-run",
		},
		{name: "run id only", cwd: deep, env: map[string]string{EnvRunID: "env-run"}, wantDir: store.Dir, wantRun: "env-run"},
		{name: "state dir only, no running run", cwd: deep, env: map[string]string{EnvStateDir: envStateDir}, wantNoRun: true},
		{name: "state dir missing", cwd: deep, env: map[string]string{EnvStateDir: filepath.Join(repo, "nope"), EnvRunID: "x"}, wantNoRun: true},
		{name: ".git file marks a nested root without state", cwd: filepath.Join(sub, "x"), wantNoRun: true},
		{name: "not in a repository", cwd: t.TempDir(), wantNoRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := noEnv
			if tt.env != nil {
				env = func(k string) string { return tt.env[k] }
			}
			a, err := FindActive(env, tt.cwd)
			if tt.wantNoRun {
				if !errors.Is(err, ErrNoActiveRun) {
					t.Fatalf("err = %v, want ErrNoActiveRun", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Store.Dir != tt.wantDir || a.RunID != tt.wantRun {
				t.Errorf("got %s %s, want %s %s", a.Store.Dir, a.RunID, tt.wantDir, tt.wantRun)
			}
		})
	}
}

// JSON keeps costs as full-precision numbers without the noise of float
// sums, in the ledger, status --json and the events log.
func TestJSONNumbersWithoutFloatNoise(t *testing.T) {
	noisy := 0.1 + 0.2 // 0.30000000000000004
	rec := &PhaseRecord{ID: "1", Status: StatusCompleted, CostUSD: noisy,
		Economics: &Economics{CostUSD: 0.2778 + 0.13, ReportedCostUSD: 0.27780000000000005, UsedPct: 100.0 / 3, Limits: Limits{CostUSD: noisy}}}
	data, err := json.Marshal(&Run{ID: "r", Phases: []*PhaseRecord{rec}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cost_usd":0.3,`, `"cost_usd":0.4078,`, `"reported_cost_usd":0.2778,`, `"used_pct":33.3333333333}`, `"limits":{"cost_usd":0.3}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
	var back Run
	if err := json.Unmarshal(data, &back); err != nil || back.Phases[0].CostUSD != 0.3 || back.Phases[0].Economics.Tokens != 0 {
		t.Errorf("round trip: %+v, %v", back.Phases, err)
	}
	raw, err := recordFields(record.SessionEnded{CostUSD: noisy, Tokens: 597500})
	if err != nil {
		t.Fatal(err)
	}
	line, err := encodeRaw(t0, "session_ended", raw)
	if err != nil || !strings.Contains(string(line), `"cost_usd":0.3,`) {
		t.Errorf("event %s, %v", line, err)
	}
	if Clean(1234.56789) != 1234.56789 || Clean(0) != 0 {
		t.Error("Clean changed a clean figure")
	}
}
