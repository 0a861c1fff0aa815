package commands

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/term"
)

// debussy's own lines start a line of their own: an error after output
// left mid-line (a prompt, an error printed without its newline) does not
// run on with it, and check's warnings and problems each start a line.
func TestStderrLinesStartALine(t *testing.T) {
	dir := gitRepo(t)
	var buf bytes.Buffer
	stderr := &lineEnd{w: &buf}
	_, _ = stderr.Write([]byte("claude: exec: \"x\": executable file not found in $PATH")) // no newline
	e := &Env{Stdout: &bytes.Buffer{}, Stderr: stderr, Dir: dir, Hard: make(chan struct{}),
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil }}
	if code := e.Run(context.Background(), []string{"debussy", "check", "plan/NO_SUCH_PLAN.md"}); code == 0 {
		t.Fatalf("check of a missing plan: exit 0\n%s", buf.String())
	}
	got := buf.String()
	if !strings.Contains(got, "in $PATH\ndebussy: ") {
		t.Errorf("the error does not start its own line:\n%q", got)
	}
	for i, line := range strings.Split(strings.TrimRight(got, "\n"), "\n")[1:] {
		if !strings.HasPrefix(line, "debussy: ") && !strings.HasPrefix(line, "warning: ") && !strings.HasPrefix(line, "error: ") {
			t.Errorf("line %d runs on: %q", i+2, line)
		}
	}
	// The wrapper keeps stderr's terminal: the live view and the budget
	// question look at its descriptor.
	if f := (&lineEnd{w: os.Stderr}); f.Fd() != os.Stderr.Fd() || term.IsTerminal((&lineEnd{w: &buf}).Fd()) {
		t.Error("lineEnd hides or invents a terminal")
	}
}
