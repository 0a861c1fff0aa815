package checkpoint

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/debussy-dev/debussy/internal/fuzzguard"
	"github.com/debussy-dev/debussy/runner"
)

// FuzzCheckpoint reads a session the way the orchestrator does — stream
// lines into the Recorder, the agent's handoff, Build — and a checkpoint
// JSON file as written to disk: no panic, the prompt ends with the phase
// prompt, and what Build embeds is bounded.
func FuzzCheckpoint(f *testing.F) {
	var cpJSON []byte
	for _, dir := range []string{"testdata", "/work/shared/fixtures/claude-stream"} {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				// The first lines: whole recordings make each input slow
				// to run and to mutate.
				data = firstLines(data, 24)
				rec := NewRecorder()
				feed(rec, data)
				cpJSON, _ = json.Marshal(Build(Input{PhaseID: "1", Handoff: HandoffTemplate()}, rec))
				f.Add(data, HandoffTemplate(), cpJSON)
			}
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"a.go"}}]}}`),
		"## Completed\n- `a.go` written\n```\nAPI_KEY=abc123def456\n```", []byte(`{"phase_id":"1","tool_calls":[{}],"tasks":[{"text":"x"}]}`))
	f.Fuzz(func(t *testing.T, stream []byte, handoff string, cpJSON []byte) {
		fuzzguard.Within(t, func() {
			rec := NewRecorder()
			feed(rec, stream)
			cp := Build(Input{PhaseID: "1", Kind: KindRestart, Handoff: handoff, Exists: func(string) bool { return false }}, rec)
			if got := cp.Prompt("PHASE-PROMPT"); !strings.HasSuffix(got, "PHASE-PROMPT") {
				t.Fatalf("the prompt does not end with the phase prompt:\n%s", got)
			}
			if n := utf8.RuneCountInString(cp.Handoff); n > handoffRunes+100 {
				t.Errorf("embedded handoff is %d runes, over %d", n, handoffRunes)
			}
			var back Checkpoint
			if json.Unmarshal(cpJSON, &back) == nil {
				_ = back.Markdown()
				_ = back.Prompt("p")
			}
		})
	})
}

func feed(rec *Recorder, stream []byte) {
	for _, line := range bytes.Split(stream, []byte("\n")) {
		if ev, err := runner.Parse(line); err == nil {
			rec.Observe(ev)
		}
	}
}

func firstLines(data []byte, n int) []byte {
	for i, c := range data {
		if c == '\n' {
			if n--; n == 0 {
				return data[:i+1]
			}
		}
	}
	return data
}
