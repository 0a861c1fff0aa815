package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The folder names the CLI made for these paths (2.1.197 and 2.1.332,
// TestTuneReadsClaudeTranscripts and a run in each kind of directory).
func TestProjectFolder(t *testing.T) {
	long := strings.Repeat("abcdefghij_", 22) + "/café ü"
	tests := []struct{ path, want string }{
		{"/tmp/TestTuneReadsClaudeTranscripts218172763/001", "-tmp-TestTuneReadsClaudeTranscripts218172763-001"},
		{"/tmp/TestZZTranscript659243091/001/my.repo_name with space", "-tmp-TestZZTranscript659243091-001-my-repo-name-with-space"},
		{"/tmp/TestZZEscape475628105/002/sub.dir", "-tmp-TestZZEscape475628105-002-sub-dir"},
		{"/tmp/TestZZEscape475628105/001/" + long, "-tmp-TestZZEscape475628105-001-" + strings.Repeat("abcdefghij-", 16)[:169] + "-tgzb1r"},
		{"/tmp/TestZZEscape106334372/001/" + long, "-tmp-TestZZEscape106334372-001-" + strings.Repeat("abcdefghij-", 16)[:169] + "-nnjfm2"},
	}
	for _, tt := range tests {
		if got := ProjectFolder(tt.path); got != tt.want {
			t.Errorf("ProjectFolder(%q)\n got %q\nwant %q", tt.path, got, tt.want)
		}
	}
	if got := ProjectDir("/cfg", "/nonexistent/x.y"); got != "/cfg/projects/-nonexistent-x-y" {
		t.Errorf("ProjectDir with a config dir: %s", got)
	}
}

// Transcripts of three CLI versions and the inline side-chain layout read
// alike: six main-thread responses (the first on three lines), the
// subagent's two apart, the CLI's compaction before the fifth.
func TestTranscripts(t *testing.T) {
	for _, dir := range []string{"2.1.112", "2.1.197", "2.1.332", "inline-sidechain"} {
		t.Run(dir, func(t *testing.T) {
			res := Transcripts(filepath.Join("testdata", "claude", dir), nil)
			if len(res.Streams) != 1 || len(res.Skipped) > 0 {
				t.Fatalf("streams %d, skipped %v", len(res.Streams), res.Skipped)
			}
			st := res.Streams[0]
			turns := st.Sessions[0].Turns
			var ctx []int64
			var calls []int
			for _, tr := range turns {
				ctx = append(ctx, tr.Context())
				calls = append(calls, len(tr.Calls))
			}
			if want := []int64{30000, 40000, 120000, 171000, 32000, 33000}; !slices.Equal(ctx, want) {
				t.Errorf("contexts %v, want %v", ctx, want)
			}
			if want := []int{2, 1, 1, 1, 1, 0}; !slices.Equal(calls, want) {
				t.Errorf("calls per turn %v, want %v", calls, want)
			}
			if !turns[4].Compacted || slices.ContainsFunc(turns[:4], func(t Turn) bool { return t.Compacted }) {
				t.Errorf("the compaction is not before the fifth turn alone")
			}
			if side := st.Sessions[0].Side; side.CacheWrite != 9300 || side.CacheRead != 9000 {
				t.Errorf("the subagent's spend: %+v", side)
			}
			if c := turns[0].Calls[0]; c.Command != "echo one" || c.Result != "one" || c.NoResult {
				t.Errorf("the first call and its result: %+v", c)
			}
			if st.Model != "claude-sonnet-4-6" || st.Window != 200_000 || st.Version == "" || st.Started.IsZero() {
				t.Errorf("model %q window %d version %q started %v", st.Model, st.Window, st.Version, st.Started)
			}
		})
	}
}

// A transcript that cannot be read is named and skipped, a line that
// cannot is counted, debussy's own sessions are left to its runs.
func TestTranscriptsSkip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "claude", "2.1.197")
	entries, _ := os.ReadDir(src)
	var id string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			id = strings.TrimSuffix(e.Name(), ".jsonl")
			data, _ := os.ReadFile(filepath.Join(src, e.Name()))
			os.WriteFile(filepath.Join(dir, "a.jsonl"), append([]byte("{not json\n"), data...), 0o644)
			os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o644)
		}
	}
	os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "gone.jsonl"))
	res := Transcripts(dir, map[string]bool{id: true})
	if len(res.Streams) != 1 || !strings.HasSuffix(res.Streams[0].Path, "a.jsonl") {
		t.Errorf("streams: %+v", res.Streams)
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "gone.jsonl") {
		t.Errorf("skipped: %v", res.Skipped)
	}
	notes := strings.Join(res.Notes, "\n")
	if !strings.Contains(notes, "a.jsonl: 1 unreadable lines skipped") || !strings.Contains(notes, "1 transcripts in") {
		t.Errorf("notes: %v", res.Notes)
	}
	if res := Transcripts(filepath.Join(dir, "none"), nil); len(res.Skipped) != 1 {
		t.Errorf("a missing folder: %v", res.Skipped)
	}
}

// A real run's record: its settings, three sessions joined by two
// restarts, each crossing turn refused and the handoff turn after it, the
// done signal.
func TestRuns(t *testing.T) {
	res := Runs(filepath.Join("testdata", "run"), RunFilter{})
	if len(res.Streams) != 1 || len(res.Skipped) > 0 || len(res.Notes) > 0 {
		t.Fatalf("streams %d, skipped %v, notes %v", len(res.Streams), res.Skipped, res.Notes)
	}
	st := res.Streams[0]
	if st.Source != SourceRun || st.Phase != "1" || st.Threshold != 70 || st.Settings == nil || st.Settings.MaxRestarts != 5 ||
		st.Window != 200_000 || st.WindowFrom != "cli" || st.Model != "claude-sonnet-4-5" {
		t.Errorf("stream %+v settings %+v", st, st.Settings)
	}
	var ends []Ending
	var turns, triggers []int
	for _, s := range st.Sessions {
		ends, turns, triggers = append(ends, s.End), append(turns, len(s.Turns)), append(triggers, s.TriggerTurn)
		if s.TriggerTurn >= 0 {
			if tr := s.Turns[s.TriggerTurn]; !tr.Refused || tr.Handoff || !s.Turns[s.TriggerTurn+1].Handoff {
				t.Errorf("session %d: the crossing turn %d refused %v, the next the handoff's %v", s.N, s.TriggerTurn, tr.Refused, s.Turns[s.TriggerTurn+1].Handoff)
			}
		}
	}
	if want := []Ending{EndRestart, EndRestart, EndLast}; !slices.Equal(ends, want) {
		t.Errorf("ends %v, want %v", ends, want)
	}
	if want := []int{2, 25, 11}; !slices.Equal(turns, want) {
		t.Errorf("turns per session %v, want %v", turns, want)
	}
	if want := []int{0, 23, -1}; !slices.Equal(triggers, want) {
		t.Errorf("crossing turns %v, want %v", triggers, want)
	}
	if !st.Sessions[2].Turns[9].Done {
		t.Errorf("the done signal is not on session 3's tenth turn")
	}
	if len(res.SessionIDs) != 3 {
		t.Errorf("the CLI's session ids: %v", res.SessionIDs)
	}
	if res := Runs(filepath.Join("testdata", "run"), RunFilter{IDs: []string{"nope"}}); len(res.Streams) != 0 || len(res.Skipped) != 1 {
		t.Errorf("an unknown run: %+v", res)
	}
	if res := Runs(filepath.Join("testdata", "run"), RunFilter{Plan: "/elsewhere/MASTER_PLAN.md"}); len(res.Streams) != 0 {
		t.Errorf("another plan's run was read")
	}
}

// A session log that cannot be read is named and skipped (the stream goes
// on afresh after it); a bad events line is counted.
func TestRunsSkip(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Join("testdata", "run", "runs"), dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "phase-1", "session-2.jsonl"))
	os.Remove(logs[0])
	events, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "events.jsonl"))
	data, _ := os.ReadFile(events[0])
	os.WriteFile(events[0], append([]byte("{torn\n"), data...), 0o600)
	res := Runs(dir, RunFilter{})
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0], "session-2.jsonl") {
		t.Errorf("skipped %v", res.Skipped)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "1 unreadable lines skipped") {
		t.Errorf("notes %v", res.Notes)
	}
	if len(res.Streams) != 1 || len(res.Streams[0].Sessions) != 2 || res.Streams[0].Sessions[0].End != EndRetry {
		t.Errorf("streams %+v", res.Streams)
	}
}
