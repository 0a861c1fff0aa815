package commands

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/state"
)

// ledgerWith saves a ledger of one run whose phases have these statuses.
func ledgerWith(t *testing.T, dir string, statuses map[string]state.Status) *state.Store {
	t.Helper()
	store := state.New(filepath.Join(dir, ".debussy"))
	run := &state.Run{ID: "20261127-0100-abcd", Plan: filepath.Join(dir, "plan", "MASTER_PLAN.md"), Status: state.StatusBlocked,
		StartedAt: time.Now().Add(-time.Hour)}
	for _, id := range []string{"1", "2", "3"} {
		if s, ok := statuses[id]; ok {
			run.Phases = append(run.Phases, &state.PhaseRecord{ID: id, Status: s, Sessions: 1, Attempts: 1, Question: "needs key " + id})
		}
	}
	if err := store.Save(&state.Ledger{Runs: []*state.Run{run}}); err != nil {
		t.Fatal(err)
	}
	return store
}

func TestAnswer(t *testing.T) {
	tests := []struct {
		name     string
		statuses map[string]state.Status
		args     []string
		wantCode int
		wantOut  string // in stdout+stderr
		answered string // the phase whose answer is recorded
	}{
		{"the named blocked phase", map[string]state.Status{"1": state.StatusCompleted, "2": state.StatusBlocked},
			[]string{"--phase", "2", "use", "vault"}, 0, "answer recorded for phase 2", "2"},
		{"the only blocked phase", map[string]state.Status{"1": state.StatusBlocked}, []string{"use vault"}, 0, "phase 1", "1"},
		{"a phase that is not blocked", map[string]state.Status{"1": state.StatusCompleted, "2": state.StatusBlocked},
			[]string{"--phase", "1", "x"}, 2, "phase 1 is not blocked", ""},
		{"a phase that never ran", map[string]state.Status{"1": state.StatusBlocked}, []string{"--phase", "9", "x"}, 2, "phase 9 has not run", ""},
		{"two blocked, none named", map[string]state.Status{"1": state.StatusBlocked, "2": state.StatusBlocked}, []string{"x"}, 2, "phases 1, 2 are blocked", ""},
		{"nothing blocked", map[string]state.Status{"1": state.StatusFailed}, []string{"x"}, 2, "no phase is blocked", ""},
		{"no text", map[string]state.Status{"1": state.StatusBlocked}, []string{"--phase", "1"}, 2, "missing TEXT", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := gitRepo(t)
			store := ledgerWith(t, dir, tt.statuses)
			code, out, stderr := invoke(t, dir, nil, append([]string{"answer"}, tt.args...)...)
			if code != tt.wantCode || !strings.Contains(out+stderr, tt.wantOut) {
				t.Fatalf("exit %d, want %d with %q\n%s%s", code, tt.wantCode, tt.wantOut, out, stderr)
			}
			if tt.answered == "" {
				return
			}
			a, err := store.ReadAnswer("20261127-0100-abcd", tt.answered)
			if err != nil || a == nil || a.Text != "use vault" || a.Question != "needs key "+tt.answered {
				t.Errorf("answer recorded: %+v (%v)", a, err)
			}
			// status shows it answered.
			_, st, _ := invoke(t, dir, nil, "status")
			if !strings.Contains(st, "answered: use vault") {
				t.Errorf("status does not show the answer:\n%s", st)
			}
		})
	}
}

// status names a blocked phase's question and the command that answers it.
func TestStatusBlocked(t *testing.T) {
	dir := gitRepo(t)
	ledgerWith(t, dir, map[string]state.Status{"1": state.StatusBlocked})
	_, out, _ := invoke(t, dir, nil, "status")
	for _, want := range []string{"phase 1 is blocked: needs key 1", `answer with: debussy answer --phase 1 "…"`} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	_, js, _ := invoke(t, dir, nil, "status", "--json")
	if !strings.Contains(js, `"answer_command": "debussy answer --phase 1 \"…\""`) {
		t.Errorf("status --json lacks the answer command:\n%s", js)
	}
}

// A second answer is added after the first, never put in its place (the
// same text twice is recorded once); after a rerun that found the phase
// unanswered and left it blocked without a session, the answer still goes
// to the run whose session asked, which the next run resumes from, and
// status shows it there.
func TestAnswerAppendsAndFollowsTheQuestion(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, ".debussy"))
	plan := filepath.Join(dir, "plan", "MASTER_PLAN.md")
	asked := &state.Run{ID: "20261127-0100-abcd", Plan: plan, Status: state.StatusBlocked, StartedAt: time.Now().Add(-2 * time.Hour),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusBlocked, Sessions: 1, Attempts: 1, Question: "which key?"}}}
	again := &state.Run{ID: "20261127-0200-abcd", Plan: plan, Status: state.StatusBlocked, StartedAt: time.Now().Add(-time.Hour),
		Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusBlocked, Question: "which key?"}}}
	if err := store.Save(&state.Ledger{Runs: []*state.Run{asked, again}}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"answer", "the staging one"}, {"answer", "--phase", "1", "in vault"}, {"answer", "in vault"}} {
		if code, out, stderr := invoke(t, dir, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	a, err := store.ReadAnswer(asked.ID, "1")
	if err != nil || a == nil || a.Text != "the staging one\n\nin vault" {
		t.Fatalf("the asking run's answer: %+v (%v); want both answers, in order, once each", a, err)
	}
	if b, _ := store.ReadAnswer(again.ID, "1"); b != nil {
		t.Errorf("the answer went to the run that asked nothing: %+v", b)
	}
	if l, err := store.Load(); err != nil {
		t.Fatal(err)
	} else if run, _ := l.LastUnfinished(plan, "1"); run == nil || run.ID != asked.ID {
		t.Errorf("the next run resumes from %v, not from the run the answer went to", run)
	}
	_, st, _ := invoke(t, dir, nil, "status")
	if !strings.Contains(st, "answered: the staging one in vault") {
		t.Errorf("status does not show the answer:\n%s", st)
	}
}

// status has the summary's columns, sessions included, in its order.
func TestStatusSessionsColumn(t *testing.T) {
	dir := gitRepo(t)
	store := state.New(filepath.Join(dir, ".debussy"))
	run := &state.Run{ID: "20261127-0100-abcd", Plan: filepath.Join(dir, "plan", "MASTER_PLAN.md"), Status: state.StatusFailed,
		StartedAt: time.Now().Add(-time.Hour), Phases: []*state.PhaseRecord{{ID: "1", Status: state.StatusFailed, Sessions: 4, Restarts: 2, Attempts: 2}}}
	if err := store.Save(&state.Ledger{Runs: []*state.Run{run}}); err != nil {
		t.Fatal(err)
	}
	_, out, _ := invoke(t, dir, nil, "status")
	header, row := "", ""
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "PHASE"):
			header = strings.Join(strings.Fields(l), " ")
		case strings.HasPrefix(l, "1 "):
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	if !strings.HasPrefix(header, "PHASE STATUS SESSIONS RESTARTS ATTEMPTS TOKENS") || !strings.HasPrefix(row, "1 failed 4 2 2 ") {
		t.Errorf("status table:\n%s", out)
	}
}
