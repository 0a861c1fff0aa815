package commands

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/cijob"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/remote"
	"github.com/debussy-dev/debussy/state"
)

// pushJob pushes to origin, from clone, the record a CI job of phase
// would push: its run's record (every phase, its own as given) and its
// facts.
func pushJob(t *testing.T, clone, run, phase string, started time.Time, rec state.PhaseRecord, facts ...record.Event) {
	t.Helper()
	r := &state.Run{ID: run, Status: state.StatusCompleted, StartedAt: started, EndedAt: started.Add(time.Minute),
		Phases: []*state.PhaseRecord{{ID: "1", Title: "Base", Status: state.StatusPending}, {ID: "2", Title: "Next", Status: state.StatusPending}}}
	rec.ID = phase
	for i, p := range r.Phases {
		if p.ID == phase {
			rec.Title = p.Title
			r.Phases[i] = &rec
		}
	}
	if rec.Status != state.StatusCompleted {
		r.Status = rec.Status
	}
	js, _ := json.Marshal(r)
	var events []byte
	facts = append([]record.Event{record.RunStarted{Plan: "MASTER_PLAN.md", Phases: 2, Name: "Demo", ContextThreshold: 80}}, facts...)
	for i, f := range facts {
		line, err := state.EncodeEvent(started.Add(time.Duration(i)*time.Second), f)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, line...)
	}
	err := remote.Remote{Dir: clone, Name: "origin"}.PushRecord(context.Background(), remote.RecordRef("plan-demo", phase, run), "record",
		map[string][]byte{cijob.RecordRunFile: js, cijob.RecordEventsFile: events})
	if err != nil {
		t.Fatal(err)
	}
}

// status --from and report --from read what each CI job pushed as one run
// of the plan: every phase, the jobs that ran it (a retried one twice),
// their sessions, restarts and cost, why a job failed, the usage limits
// they met — from a remote's name, or a path outside any repository.
func TestStatusAndReportFrom(t *testing.T) {
	dir := gitRepo(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	for _, args := range [][]string{{"init", "-q", "--bare", origin}, {"-C", dir, "remote", "add", "origin", origin}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	resets := t0.Add(3 * time.Hour)
	pushJob(t, dir, "r1", "1", t0, state.PhaseRecord{Status: state.StatusInterrupted, Sessions: 1, Attempts: 1, Tokens: 1000, CostUSD: 0.25,
		Reason: "usage limit reached"},
		record.SessionSpawned{Phase: "1", Session: 1}, record.UsageLimit{Phase: "1", Limit: "five_hour", Resets: resets, Session: 1},
		record.PhaseEnded{Phase: "1", Status: "interrupted", Reason: "usage limit reached"})
	pushJob(t, dir, "r2", "1", t0.Add(4*time.Hour), state.PhaseRecord{Status: state.StatusCompleted, Sessions: 2, Restarts: 1, Attempts: 1,
		Tokens: 3000, CostUSD: 0.5},
		record.SessionSpawned{Phase: "1", Session: 1}, record.SessionEnded{Phase: "1", Session: 1, Outcome: "stopped", CostUSD: 0.2},
		record.SessionSpawned{Phase: "1", Session: 2}, record.SessionEnded{Phase: "1", Session: 2, Outcome: "completed", CostUSD: 0.3},
		record.PhaseEnded{Phase: "1", Status: "completed"})
	pushJob(t, dir, "r3", "2", t0.Add(5*time.Hour), state.PhaseRecord{Status: state.StatusFailed, Sessions: 1, Attempts: 2, Tokens: 500,
		CostUSD: 0.125, Reason: `phase 2 failed: gate 1 "test" failed (exit 1)`},
		record.SessionSpawned{Phase: "2", Session: 1}, record.PhaseEnded{Phase: "2", Status: "failed"})

	code, out, errOut := invoke(t, dir, nil, "status", "--from", "origin")
	if code != 0 {
		t.Fatalf("status --from: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"plan Demo (plan-demo) on origin: failed, 3 jobs",
		"1      completed  2     3         1         4K      $0.75  r2", `2      failed     1     1         0         500     $0.12  r3        phase 2 failed: gate 1 "test" failed (exit 1)`,
		"phase 1: job r1 met the 5-hour limit", "stopped until the reset (exit 75)",
		"across its jobs: 4 sessions, 1 restart, 4.5K tokens, $0.88"} {
		if !strings.Contains(out, want) {
			t.Errorf("status --from lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = invoke(t, dir, nil, "status", "--from", "origin", "--json")
	var js []acrossJSON
	if err := json.Unmarshal([]byte(out), &js); code != 0 || err != nil || len(js) != 1 || len(js[0].Phases) != 2 ||
		len(js[0].Phases[0].Jobs) != 2 || js[0].Phases[0].Jobs[0].Status != state.StatusInterrupted || len(js[0].Phases[0].Limits) != 1 ||
		js[0].Sessions != 4 {
		t.Fatalf("status --from --json (exit %d, %v):\n%s", code, err, out)
	}
	code, out, errOut = invoke(t, dir, nil, "report", "--from", "origin", "--md")
	if code != 0 || !strings.Contains(out, "| 1 | Base | completed | 2 | 1 | 3K | $0.50 |") ||
		!strings.Contains(out, "| 2 | Next | failed | 1 | 0 | 500 | $0.12 |") || !strings.Contains(out, "| 2 | completed | 0 | 0 % | 0 | 0 | 0 | 0 | $0.30 |") {
		t.Fatalf("report --from --md: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = invoke(t, dir, nil, "report", "--from", "origin")
	if path := strings.TrimSpace(out); code != 0 || !strings.HasSuffix(path, filepath.Join(".debussy", "from", "plan-demo.html")) {
		t.Fatalf("report --from: exit %d, %q", code, out)
	}
	// A path, from outside any repository.
	code, out, errOut = invoke(t, t.TempDir(), nil, "status", "--from", origin)
	if code != 0 || !strings.Contains(out, "3 jobs") {
		t.Fatalf("status --from PATH outside a repository: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = invoke(t, dir, nil, "status", "--from", "nowhere")
	if code != 2 {
		t.Fatalf("status --from an unknown remote: exit %d\n%s", code, out)
	}
}
