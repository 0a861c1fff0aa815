package state

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/golden"
	"github.com/debussy-dev/debussy/record"
)

// Every event the orchestrator records, typed (Record) and as the map it
// passes today (Append): the same bytes, and testdata/events.golden holds
// them. A record type whose key drifts from today's map fails here.
func TestRecordBytesAsMaps(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 17, 0, 0, 123, time.UTC)
	resets := t0.Add(time.Hour)
	cmd, code, out, dur, head := "go test ./...", 1, "FAIL", int64(1234), "abc123"
	zero := 0
	turn := 7
	sess := record.Session{Phase: "1", Session: 2}
	tests := []struct {
		ev   record.Event
		want map[string]any // nil: typed only (no map form today)
	}{
		{record.RunStarted{Plan: "/r/MASTER_PLAN.md", Phases: 3, ContextThreshold: 80, ContextWindow: 200000},
			map[string]any{"plan": "/r/MASTER_PLAN.md", "phases": 3, "context_threshold": 80, "context_window": 200000}},
		{record.RunEnded{Status: "completed"}, map[string]any{"status": "completed"}},
		{record.PhaseStarted{Phase: "1", Title: "Set <up> & go", Base: "abc"}, map[string]any{"phase": "1", "title": "Set <up> & go", "base": "abc"}},
		{record.PhaseEnded{Phase: "1", Status: "failed", Error: "boom"}, map[string]any{"phase": "1", "status": "failed", "error": "boom"}},
		{record.PhaseEnded{Phase: "1", Status: "failed", Error: "setup", Sessions: &zero},
			map[string]any{"phase": "1", "status": "failed", "error": "setup", "sessions": 0}},
		{record.ResumeDiscarded{Phase: "1", Run: "r1", Why: "reset"}, map[string]any{"phase": "1", "run": "r1", "why": "reset"}},
		{record.Remediation{Phase: "1", Attempt: 2, Problem: "gate"}, map[string]any{"phase": "1", "attempt": 2, "problem": "gate"}},
		{record.Answered{Phase: "1", Run: "r1", Attempt: 2}, map[string]any{"phase": "1", "run": "r1", "attempt": 2}},
		{record.AfterFailure{Phase: "1", Running: []string{"2", "3"}, FailFast: true},
			map[string]any{"phase": "1", "running": []string{"2", "3"}, "fail_fast": true}},
		{record.SessionSpawned{Phase: "1", Session: 2, PromptChars: 900}, map[string]any{"phase": "1", "session": 2, "prompt_chars": 900}},
		{record.SessionEnded{Phase: "1", Session: 2, Outcome: "stopped", Reason: "threshold", ExitCode: 0, Failure: "",
			ContextTokens: 160000, Percent: 80.00000000000001, ToolCalls: 12, Zone: "red", PolicyState: "ended", Trigger: "context",
			StopReason: "context 80 %", Done: false, Tokens: 597500, CostUSD: 0.27780000000000005, ReportedCostUSD: 0.3, APITurns: 9,
			HookLatencyMs: map[string]record.HookLatency{"PreToolUse": {Max: 0.26, N: 4, P50: 0.1, P99: 0.25}}},
			map[string]any{"phase": "1", "session": 2, "outcome": "stopped", "reason": "threshold", "exit_code": 0, "failure": "",
				"context_tokens": int64(160000), "percent": 80.00000000000001, "tool_calls": 12, "zone": "red", "policy_state": "ended",
				"trigger": "context", "stop_reason": "context 80 %", "done": false, "tokens": int64(597500), "cost_usd": 0.27780000000000005,
				"reported_cost_usd": 0.3, "api_turns": 9,
				"hook_latency_ms": map[string]any{"PreToolUse": map[string]any{"n": 4, "p50": 0.1, "p99": 0.25, "max": 0.26}}}},
		{record.SessionRetry{Phase: "1", Why: "overloaded", Failure: "transient", WaitMs: 5000, Retry: 1},
			map[string]any{"phase": "1", "why": "overloaded", "failure": "transient", "wait_ms": int64(5000), "retry": 1}},
		{record.Commit{Phase: "1", Commit: head, Files: 3, Kind: "restart"}, map[string]any{"phase": "1", "commit": head, "files": 3, "kind": "restart"}},
		{record.CommitFailed{Phase: "1", Error: "x"}, map[string]any{"phase": "1", "error": "x"}},
		{record.CommitRejected{Phase: "1", Hook: "pre-commit", ExitCode: 1, Output: "lint", Kind: "end"},
			map[string]any{"phase": "1", "hook": "pre-commit", "exit_code": 1, "output": "lint", "kind": "end"}},
		{record.Checkpoint{Phase: "1", Path: "cp/1.md", Kind: "restart", Files: 4}, map[string]any{"phase": "1", "path": "cp/1.md", "kind": "restart", "files": 4}},
		{record.Gate{Phase: "1", Gate: "test", Unchecked: true}, map[string]any{"phase": "1", "gate": "test", "unchecked": true}},
		{record.Gate{Phase: "1", Gate: "test", Command: &cmd, ExitCode: &code, TimedOut: new(bool), DurationMs: &dur, OutputTail: &out},
			map[string]any{"phase": "1", "gate": "test", "command": cmd, "exit_code": code, "timed_out": false, "duration_ms": dur, "output_tail": out}},
		{record.Worktree{Phase: "1", Path: "/w", Branch: "b", Resumed: true}, map[string]any{"phase": "1", "path": "/w", "branch": "b", "resumed": true}},
		{record.WorktreeSetup{Phase: "1", Command: "make", ExitCode: 0, TimedOut: false, DurationMs: 10, Log: "/l"},
			map[string]any{"phase": "1", "command": "make", "exit_code": 0, "timed_out": false, "duration_ms": int64(10), "log": "/l"}},
		{record.Merge{Phase: "1", Branch: "b", Commit: head, Files: 2}, map[string]any{"phase": "1", "branch": "b", "commit": head, "files": 2}},
		{record.MergeFailed{Phase: "1", Branch: "b", Error: "conflict"}, map[string]any{"phase": "1", "branch": "b", "error": "conflict"}},
		{record.BaseMerge{Phase: "2", Dependency: "1", Branch: "b", Commit: head}, map[string]any{"phase": "2", "dependency": "1", "branch": "b", "commit": head}},
		{record.RemoteResume{Phase: "1", Branch: "b", Commit: head}, map[string]any{"phase": "1", "branch": "b", "commit": head}},
		{record.Push{Phase: "1", Branch: "b", Remote: "origin", Commit: &head}, map[string]any{"phase": "1", "branch": "b", "remote": "origin", "commit": head}},
		{record.Push{Phase: "1", Branch: "b", Remote: "origin"}, map[string]any{"phase": "1", "branch": "b", "remote": "origin"}},
		{record.PushFailed{Phase: "1", Branch: "b", Remote: "origin", Error: "denied"}, map[string]any{"phase": "1", "branch": "b", "remote": "origin", "error": "denied"}},
		{record.NotifyFailed{Kind: "webhook", To: "example.com", Notification: "run_ended", Error: "503"},
			map[string]any{"kind": "webhook", "to": "example.com", "notification": "run_ended", "error": "503"}},
		{record.BudgetExtension{Phase: "1", Scope: "phase", Spent: "$2", By: "cost", Granted: true, Extension: 1, MaxExtensions: 2},
			map[string]any{"phase": "1", "scope": "phase", "spent": "$2", "by": "cost", "granted": true, "extension": 1, "max_extensions": 2}},
		{record.BudgetWindow{Phase: "1", UsedPct: 33.333333333333336}, map[string]any{"phase": "1", "used_pct": 33.333333333333336}},
		{record.FallbackModel{Phase: "1", Limit: "seven_day_opus", From: "opus", To: "sonnet", Resets: resets},
			map[string]any{"phase": "1", "limit": "seven_day_opus", "from": "opus", "to": "sonnet", "resets": resets}},
		{record.UsageLimit{Phase: "1", Limit: "five_hour", Resets: resets}, map[string]any{"phase": "1", "limit": "five_hour", "resets": resets, "waiting": false}},
		{record.UsageLimit{Phase: "1", Limit: "five_hour", Resets: resets, Waiting: true, Until: &resets},
			map[string]any{"phase": "1", "limit": "five_hour", "resets": resets, "waiting": true, "until": resets}},
		{record.UsageLimitHold{Phase: "1", Limit: "five_hour", Resets: resets, Commit: head, ByPhase: "2"},
			map[string]any{"phase": "1", "limit": "five_hour", "resets": resets, "commit": head, "by_phase": "2"}},
		{record.UsageLimitReset{Phase: "1", Limit: "five_hour"}, map[string]any{"phase": "1", "limit": "five_hour"}},
		// The runner's stop timeline, as the session records it.
		{record.Mark{Name: "tool_drained", Session: sess, MarkFields: record.MarkFields{Waited: ptr(time.Second), TimedOut: ptr(false)}},
			map[string]any{"phase": "1", "session": 2, "waited": time.Second, "timed_out": false}},
		{record.Mark{Name: "tool_drained", Session: sess, MarkFields: record.MarkFields{Waited: ptr(time.Second), TimedOut: ptr(true),
			InFlight: &record.InFlight{N: 2, IDs: []string{"t1", "t2"}}}},
			map[string]any{"phase": "1", "session": 2, "waited": time.Second, "timed_out": true, "in_flight": []string{"t1", "t2"}}},
		{record.Mark{Name: "stop_requested", Session: sess, MarkFields: record.MarkFields{Kind: ptr("stopped"), Reason: ptr(""),
			InFlight: &record.InFlight{N: 0}, By: ptr("hook")}},
			map[string]any{"phase": "1", "session": 2, "kind": "stopped", "reason": "", "in_flight": 0, "by": "hook"}},
		{record.Mark{Name: "sigkill", Session: sess, MarkFields: record.MarkFields{By: ptr("cancel_grace"), PGID: ptr(4242), Err: ptr("no such process")}},
			map[string]any{"phase": "1", "session": 2, "by": "cancel_grace", "pgid": 4242, "err": "no such process"}},
		{record.Mark{Name: "idle_timeout", Session: sess, MarkFields: record.MarkFields{LastLine: &t0}},
			map[string]any{"phase": "1", "session": 2, "last_line": t0}},
		{record.Mark{Name: "exited", Session: sess, MarkFields: record.MarkFields{ExitCode: ptr(-1), Status: ptr("was killed by killed")}},
			map[string]any{"phase": "1", "session": 2, "exit_code": -1, "status": "was killed by killed"}},
		{record.Mark{Name: "group_killed", Session: sess}, map[string]any{"phase": "1", "session": 2}},
		{record.Mark{Name: "result_received", Session: sess, MarkFields: record.MarkFields{Subtype: ptr("success"), IsError: ptr(false), TerminalReason: ptr("")}},
			map[string]any{"phase": "1", "session": 2, "subtype": "success", "is_error": false, "terminal_reason": ""}},
		// What a session records.
		{record.BudgetLevel{Session: record.Session{Phase: "1", Session: 2, Turn: &turn}, Scope: "phase", Level: "warn", UsedPct: 80.5,
			Dimension: "cost", Enforcement: "hard", Left: "$1"}, nil},
		{record.Interrupt{Session: record.Session{Phase: "1", Session: 2}, FailFast: true}, nil},
		{record.Policy{Name: "tool_denied", Session: record.Session{Phase: "1", Session: 2, Turn: &turn},
			Fields: record.Fields{Tool: &cmd, ToolUseID: &head, Why: "budget"}}, nil},
	}
	dir := t.TempDir()
	store := &Store{Dir: dir}
	typed, err := store.OpenEvents("typed", func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	maps, err := store.OpenEvents("maps", func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		if err := typed.Record(tt.ev); err != nil {
			t.Fatalf("%s: %v", tt.ev.EventName(), err)
		}
		if tt.want == nil {
			continue // typed only: the session's (last in the table)
		}
		if err := maps.Append(tt.ev.EventName(), tt.want); err != nil {
			t.Fatal(err)
		}
	}
	if err := typed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := maps.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(store.EventsPath("typed"))
	fromMaps, _ := os.ReadFile(store.EventsPath("maps"))
	gl, ml := bytes.Split(got, []byte("\n")), bytes.Split(fromMaps, []byte("\n"))
	for i := range ml {
		if len(ml[i]) > 0 && !bytes.Equal(gl[i], ml[i]) {
			t.Errorf("line %d:\ntyped %s\nmap   %s", i+1, gl[i], ml[i])
		}
	}
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
