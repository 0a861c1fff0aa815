package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/tests/claudetest"
	"github.com/debussy-dev/debussy/tests/fakeapi"
)

// transcriptModel is the fake model of a plain Claude Code session: a
// response of three blocks (one message id on several lines), a
// subagent, a context the CLI compacts by itself (claude-sonnet-4-6 has a
// compaction point, 167K), and a turn after the compaction. reset starts
// the next session from the top.
func transcriptModel() (react func(fakeapi.Request) (fakeapi.Turn, bool), reset func()) {
	var mu sync.Mutex
	step := 0
	reset = func() {
		mu.Lock()
		step = 0
		mu.Unlock()
	}
	ctx := func(n int64) fakeapi.Usage {
		return fakeapi.Usage{Input: 3, CacheRead: n - 1003, CacheCreation: 1000, Output: 50}
	}
	return func(r fakeapi.Request) (fakeapi.Turn, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(r.FirstUser, "delegated check"):
			if r.Turn == 0 {
				return fakeapi.Turn{Usage: fakeapi.Usage{Input: 5, CacheCreation: 9000, Output: 30}, Blocks: []fakeapi.Block{fakeapi.Bash("echo sub")}}, true
			}
			return fakeapi.Turn{Usage: fakeapi.Usage{Input: 5, CacheRead: 9000, CacheCreation: 300, Output: 20}, Blocks: []fakeapi.Block{fakeapi.Text("sub ok")}}, true
		case strings.Contains(r.LastUser, "TEXT ONLY") || strings.Contains(r.LastUser, "detailed summary"):
			// The CLI's compaction request.
			return fakeapi.Turn{Usage: fakeapi.Usage{Input: 5, CacheRead: 171000, Output: 900}, Blocks: []fakeapi.Block{fakeapi.Text("<summary>the work so far</summary>")}}, true
		}
		step++
		switch step {
		case 1:
			return fakeapi.Turn{Usage: ctx(30000), Blocks: []fakeapi.Block{fakeapi.Text("Let me look."), fakeapi.Bash("echo one"), fakeapi.Bash("echo two")}}, true
		case 2:
			return fakeapi.Turn{Usage: ctx(40000), Blocks: []fakeapi.Block{{Tool: "Task", Input: map[string]any{"description": "check",
				"prompt": "delegated check: answer ok", "subagent_type": "general-purpose"}}}}, true
		case 3:
			return fakeapi.Turn{Usage: ctx(120000), Blocks: []fakeapi.Block{fakeapi.Bash("echo three")}}, true
		case 4:
			return fakeapi.Turn{Usage: ctx(171000), Blocks: []fakeapi.Block{fakeapi.Bash("echo four")}}, true
		case 5:
			return fakeapi.Turn{Usage: ctx(32000), Blocks: []fakeapi.Block{fakeapi.Bash("echo five")}}, true
		}
		return fakeapi.Turn{Usage: ctx(33000), Blocks: []fakeapi.Block{fakeapi.Text("all done")}}, true
	}, reset
}

// claudeSession runs one plain `claude -p` session in dir with env.
func claudeSession(t *testing.T, dir string, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claudetest.Bin(t), "-p", "--output-format", "stream-json", "--verbose",
		"--model", "claude-sonnet-4-6", "--dangerously-skip-permissions")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader("do the work")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins
		}
	}
	return v
}

// A new user's Claude Code session, read where the CLI keeps it for this
// repository (~/.claude/projects/<escaped path>, then $CLAUDE_CONFIG_DIR):
// one stream of six main-thread responses whatever the lines that carry
// them, the subagent's spend apart from the context, the CLI's compaction
// seen.
func TestTuneReadsClaudeTranscripts(t *testing.T) {
	claudetest.CLISensitive(t, "Claude Code's transcripts: where they are, subagent files, compaction lines")
	react, reset := transcriptModel()
	h := newHarness(t, fakeapi.Script{Default: &fakeapi.Conversation{Name: "cc", React: react}},
		[]phaseSpec{{ID: "1", Title: "Unused"}}, "")
	check := func(out tuneOut) {
		t.Helper()
		if len(out.Streams) != 1 {
			t.Fatalf("want one transcript read, got %+v (skipped %v)", out.Streams, out.Skipped)
		}
		s := out.Streams[0]
		if s.Source != "claude" || s.Turns != 6 || s.Compactions != 1 || s.SideTokens < 18000 || s.Window != 200_000 {
			t.Errorf("the transcript read as %+v: want 6 turns, 1 compaction, the subagent's ~18K tokens apart, a 200K window", s)
		}
		if c := out.Candidates[0]; len(c.RestartsBySession) != 1 {
			t.Errorf("restarts_by_session %v: want one entry for the transcript", c.RestartsBySession)
		}
	}
	claudeSession(t, h.Repo, h.Env)
	check(runTune(t, h, "--from-claude"))

	// CLAUDE_CONFIG_DIR moves the folder: the session above is no longer
	// this repository's, the one run now is.
	h.Env = append(h.Env, "CLAUDE_CONFIG_DIR="+filepath.Join(envValue(h.Env, "HOME"), "elsewhere"))
	reset()
	claudeSession(t, h.Repo, h.Env)
	check(runTune(t, h, "--from-claude"))
	if keep := os.Getenv("DEBUSSY_TUNE_KEEP"); keep != "" {
		// Testdata for package history: the transcripts as this CLI wrote them.
		if out, err := exec.Command("cp", "-a", filepath.Join(envValue(h.Env, "HOME"), "elsewhere", "projects"), keep).CombinedOutput(); err != nil {
			t.Fatalf("keep: %v %s", err, out)
		}
	}
}
