// Package runnertest reads recorded claude streams into runner events for
// the tests of the packages that consume them (estimator, checkpoint).
package runnertest

import (
	"bytes"
	"os"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// Events parses every non-blank line of a recorded stream-json file with
// runner.Parse; a line that does not parse fails the test with its line number.
func Events(t testing.TB, path string) []runner.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var evs []runner.Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ev, err := runner.Parse(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
