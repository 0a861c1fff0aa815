package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/record"
)

// Every event debussy records, as Record writes it: testdata/events.golden
// holds the bytes the maps wrote before events were typed (a merge's files
// are a count, as they always were on disk). A record type whose key drifts
// fails here; so does a line that no longer reads back as its type.
func TestRecordBytes(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 17, 0, 0, 123, time.UTC)
	resets := t0.Add(time.Hour)
	cmd, code, out, dur, head := "go test ./...", 1, "FAIL", int64(1234), "abc123"
	zero := 0
	turn := 7
	sess := record.Session{Phase: "1", Session: 2}
	events := []record.Event{
		record.RunStarted{Plan: "/r/MASTER_PLAN.md", Phases: 3, ContextThreshold: 80, ContextWindow: 200000},
		record.RunEnded{Status: "completed"},
		record.PhaseStarted{Phase: "1", Title: "Set <up> & go", Base: "abc"},
		record.PhaseEnded{Phase: "1", Status: "failed", Error: "boom"},
		record.PhaseEnded{Phase: "1", Status: "failed", Error: "setup", Sessions: &zero},
		record.ResumeDiscarded{Phase: "1", Run: "r1", Why: "reset"},
		record.Remediation{Phase: "1", Attempt: 2, Problem: "gate"},
		record.Answered{Phase: "1", Run: "r1", Attempt: 2},
		record.AfterFailure{Phase: "1", Running: []string{"2", "3"}, FailFast: true},
		record.SessionSpawned{Phase: "1", Session: 2, PromptChars: 900},
		record.SessionEnded{Phase: "1", Session: 2, Outcome: "stopped", Reason: "threshold", ExitCode: 0, Failure: "",
			ContextTokens: 160000, Percent: 80.00000000000001, ToolCalls: 12, Zone: "red", PolicyState: "ended", Trigger: "context",
			StopReason: "context 80 %", Done: false, Tokens: 597500, CostUSD: 0.27780000000000005, ReportedCostUSD: 0.3, APITurns: 9,
			HookLatencyMs: map[string]record.HookLatency{"PreToolUse": {Max: 0.26, N: 4, P50: 0.1, P99: 0.25}}},
		record.SessionRetry{Phase: "1", Why: "overloaded", Failure: "transient", WaitMs: 5000, Retry: 1},
		record.Commit{Phase: "1", Commit: head, Files: 3, Kind: "restart"},
		record.CommitFailed{Phase: "1", Error: "x"},
		record.CommitRejected{Phase: "1", Hook: "pre-commit", ExitCode: 1, Output: "lint", Kind: "end"},
		record.Checkpoint{Phase: "1", Path: "cp/1.md", Kind: "restart", Files: 4},
		record.Gate{Phase: "1", Gate: "test", Unchecked: true},
		record.Gate{Phase: "1", Gate: "test", Command: &cmd, ExitCode: &code, TimedOut: new(bool), DurationMs: &dur, OutputTail: &out},
		record.Worktree{Phase: "1", Path: "/w", Branch: "b", Resumed: true},
		record.WorktreeSetup{Phase: "1", Command: "make", ExitCode: 0, TimedOut: false, DurationMs: 10, Log: "/l"},
		record.Merge{Phase: "1", Branch: "b", Commit: head, Files: 2},
		record.MergeFailed{Phase: "1", Branch: "b", Error: "conflict"},
		record.BaseMerge{Phase: "2", Dependency: "1", Branch: "b", Commit: head},
		record.RemoteResume{Phase: "1", Branch: "b", Commit: head},
		record.Push{Phase: "1", Branch: "b", Remote: "origin", Commit: &head},
		record.Push{Phase: "1", Branch: "b", Remote: "origin"},
		record.PushFailed{Phase: "1", Branch: "b", Remote: "origin", Error: "denied"},
		record.NotifyFailed{Kind: "webhook", To: "example.com", Notification: "run_ended", Error: "503"},
		record.BudgetExtension{Phase: "1", Scope: "phase", Spent: "$2", By: "cost", Granted: true, Extension: 1, MaxExtensions: 2},
		record.BudgetWindow{Phase: "1", UsedPct: 33.333333333333336},
		record.FallbackModel{Phase: "1", Limit: "seven_day_opus", From: "opus", To: "sonnet", Resets: resets},
		record.UsageLimit{Phase: "1", Limit: "five_hour", Resets: resets},
		record.UsageLimit{Phase: "1", Limit: "five_hour", Resets: resets, Waiting: true, Until: &resets},
		record.UsageLimitHold{Phase: "1", Limit: "five_hour", Resets: resets, Commit: head, ByPhase: "2"},
		record.UsageLimitReset{Phase: "1", Limit: "five_hour"},
		// The runner's stop timeline, as the session records it.
		record.Mark{Name: "tool_drained", Session: sess, MarkFields: record.MarkFields{Waited: ptr(time.Second), TimedOut: ptr(false)}},
		record.Mark{Name: "tool_drained", Session: sess, MarkFields: record.MarkFields{Waited: ptr(time.Second), TimedOut: ptr(true),
			InFlight: &record.InFlight{N: 2, IDs: []string{"t1", "t2"}}}},
		record.Mark{Name: "stop_requested", Session: sess, MarkFields: record.MarkFields{Kind: ptr("stopped"), Reason: ptr(""),
			InFlight: &record.InFlight{N: 0}, By: ptr("hook")}},
		record.Mark{Name: "sigkill", Session: sess, MarkFields: record.MarkFields{By: ptr("cancel_grace"), PGID: ptr(4242), Err: ptr("no such process")}},
		record.Mark{Name: "idle_timeout", Session: sess, MarkFields: record.MarkFields{LastLine: &t0}},
		record.Mark{Name: "exited", Session: sess, MarkFields: record.MarkFields{ExitCode: ptr(-1), Status: ptr("was killed by killed")}},
		record.Mark{Name: "group_killed", Session: sess},
		record.Mark{Name: "result_received", Session: sess, MarkFields: record.MarkFields{Subtype: ptr("success"), IsError: ptr(false), TerminalReason: ptr("")}},
		// What a session records.
		record.BudgetLevel{Session: record.Session{Phase: "1", Session: 2, Turn: &turn}, Scope: "phase", Level: "warn", UsedPct: 80.5,
			Dimension: "cost", Enforcement: "hard", Left: "$1"},
		record.Interrupt{Session: record.Session{Phase: "1", Session: 2}, FailFast: true},
		record.Policy{Name: "tool_denied", Session: record.Session{Phase: "1", Session: 2, Turn: &turn},
			Fields: record.Fields{Tool: &cmd, ToolUseID: &head, Why: "budget"}},
	}
	dir := t.TempDir()
	store := &Store{Dir: dir}
	typed, err := store.OpenEvents("typed", func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := typed.Record(ev); err != nil {
			t.Fatalf("%s: %v", ev.EventName(), err)
		}
	}
	if err := typed.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(store.EventsPath("typed"))
	golden.Check(t, filepath.Join("testdata", "events.golden"), got)

	// Read back, typed.
	lines, err := ReadLog(store.EventsPath("typed"))
	if err != nil {
		t.Fatal(err)
	}
	var ended record.SessionEnded
	var denied record.Policy
	var merged record.Merge
	for _, l := range lines {
		if e, ok := record.As[record.Merge](l); ok {
			merged = e // its files are a count, as the orchestrator writes them
		}
		if e, ok := record.As[record.SessionEnded](l); ok {
			ended = e
		}
		if l.Event == "tool_denied" {
			if err := l.Decode(&denied); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ended.Tokens != 597500 || ended.CostUSD != 0.2778 || ended.HookLatencyMs["PreToolUse"].N != 4 || !lines[0].TS.Equal(t0) {
		t.Errorf("session_ended read back as %+v", ended)
	}
	if merged.Files != 2 || merged.Commit != head {
		t.Errorf("merge read back as %+v", merged)
	}
	if denied.Phase != "1" || denied.ToolUseID == nil || *denied.ToolUseID != head || denied.Why != "budget" || *denied.Turn != turn {
		t.Errorf("tool_denied read back as %+v", denied)
	}
}

func ptr[T any](v T) *T { return &v }
