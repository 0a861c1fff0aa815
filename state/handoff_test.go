package state

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The agent's handoff lands at its session's path, redacted and private,
// and its signal never shares a file with a phase's done signal.
func TestWriteHandoff(t *testing.T) {
	s := New(t.TempDir())
	if got, err := s.ReadHandoffSignal("r1", "1"); got != nil || err != nil {
		t.Fatalf("no signal yet: %+v, %v", got, err)
	}
	if _, err := s.WriteHandoff("r1", HandoffSignal{Phase: "1"}, "x"); err == nil {
		t.Error("accepted a handoff without a session")
	}
	path, err := s.WriteHandoff("r1", HandoffSignal{Phase: "1", Session: 2, At: time.Now()}, "## Completed\nkey AKIAIOSFODNN7EXAMPLE\n")
	if err != nil {
		t.Fatal(err)
	}
	if path != s.HandoffPath("r1", "1", 2) || !strings.HasSuffix(path, "phase-1/handoff-2.md") {
		t.Errorf("handoff at %s", path)
	}
	data, err := os.ReadFile(path)
	if err != nil || strings.Contains(string(data), "AKIAIOSFODNN7EXAMPLE") || !strings.Contains(string(data), "## Completed") {
		t.Errorf("handoff %q, %v", data, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != FileMode {
		t.Errorf("handoff's mode: %v", err)
	}
	sig, err := s.ReadHandoffSignal("r1", "1")
	if err != nil || sig == nil || sig.Session != 2 || sig.Path != path {
		t.Errorf("signal %+v, %v", sig, err)
	}
	// A phase whose id looks like the signal's name is another file.
	if err := s.WriteSignal("r1", Signal{Phase: "handoff", Status: StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if sig, err := s.ReadHandoffSignal("r1", "1"); err != nil || sig == nil || sig.Session != 2 {
		t.Errorf("after a done signal: %+v, %v", sig, err)
	}
}
