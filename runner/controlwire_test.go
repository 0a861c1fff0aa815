package runner

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/internal/golden"
)

// What the CLI gets on stdin for every kind of hook answer and control
// response, and the kept form of an input over MaxInputBytes, byte for
// byte (testdata/controlwire.golden was taken when they were maps).
func TestControlWire(t *testing.T) {
	var b bytes.Buffer
	for _, tt := range []struct {
		ev HookEvent
		a  HookAnswer
	}{
		{HookPreToolUse, HookAnswer{}},
		{HookPreToolUse, HookAnswer{Deny: "debussy (phase budget): Refused <&> \"quoted\""}},
		{HookPreToolUse, HookAnswer{Allow: "the handoff"}},
		{HookPostToolUse, HookAnswer{}},
		{HookPostToolUse, HookAnswer{Note: "context at 70 %"}},
		{HookPostToolUse, HookAnswer{StopReason: "threshold"}},
		{HookPostToolUse, HookAnswer{Note: "n", StopReason: "s"}},
		{HookStop, HookAnswer{}},
		{HookStop, HookAnswer{Block: "write the handoff"}},
		{HookPreCompact, HookAnswer{Block: compactBlockReason}},
	} {
		b.Write(hookResponse("req_7", tt.ev, tt.a))
	}
	b.Write(controlErrorResponse("req_8", "unsupported control request can_use_tool"))
	for _, in := range []toolInput{
		{size: MaxInputBytes + 1, command: "go test <./...>", filePath: "/r/a.go", path: "/r"},
		{size: MaxInputBytes + 2},
	} {
		b.Write(in.kept())
		b.WriteByte('\n')
	}
	golden.Check(t, filepath.Join("testdata", "controlwire.golden"), b.Bytes())
}
