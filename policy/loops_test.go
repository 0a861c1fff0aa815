package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// A failed call gets no PostToolUse: its is_error result in the stream is
// judged, and the same failing test after each edit ends the session with
// the call to avoid. A silent successful check between edits never does.
func TestLoopsFromTheStream(t *testing.T) {
	use := func(id, tool, in string) runner.Event {
		return runner.Event{Kind: runner.KindAssistant, Assistant: &runner.Assistant{MessageID: "m" + id,
			ToolUses: []runner.ToolUse{{ID: id, Name: tool, Input: []byte(in)}}}}
	}
	failed := func(id, out string) runner.Event {
		return runner.Event{Kind: runner.KindToolResult, ToolResults: []runner.ToolResult{{ToolUseID: id, IsError: true, Content: out}}}
	}
	editIn := func(i int) string {
		return fmt.Sprintf(`{"file_path":"/repo/a.go","old_string":"v%d","new_string":"v%d"}`, i, i+1)
	}
	t.Run("failing test after each edit", func(t *testing.T) {
		p := New(testConfig(), nil)
		for i := range 5 {
			id := string(rune('a' + i))
			p.Observe(use("e"+id, "Edit", editIn(i)), estimator.Snapshot{})
			p.PostToolUse(Call{Tool: "Edit", ToolUseID: "e" + id, Input: []byte(editIn(i)), Response: "ok"})
			p.Observe(use("t"+id, "Bash", `{"command":"go test ./..."}`), estimator.Snapshot{})
			p.Observe(failed("t"+id, "Exit code 1\nFAIL x"), estimator.Snapshot{})
		}
		o := p.Outcome()
		if p.State() != Stopping || o.Trigger != TriggerDoomLoop || len(o.Avoid) != 1 || !strings.Contains(o.Avoid[0], "go test ./...") {
			t.Errorf("state %s outcome %+v", p.State(), o)
		}
	})
	t.Run("silent build after each edit", func(t *testing.T) {
		p := New(testConfig(), nil)
		for i := range 30 {
			id := string(rune('a' + i))
			p.Observe(use("e"+id, "Edit", editIn(i)), estimator.Snapshot{})
			p.PostToolUse(Call{Tool: "Edit", ToolUseID: "e" + id, Input: []byte(editIn(i)), Response: "ok"})
			p.Observe(use("b"+id, "Bash", `{"command":"go build ./..."}`), estimator.Snapshot{})
			if ans := p.PostToolUse(Call{Tool: "Bash", ToolUseID: "b" + id, Input: []byte(`{"command":"go build ./..."}`), Command: "go build ./..."}); ans.Note != "" {
				t.Fatalf("build %d: note %q", i, ans.Note)
			}
		}
		if p.State() != Working {
			t.Errorf("state %s", p.State())
		}
	})
}
