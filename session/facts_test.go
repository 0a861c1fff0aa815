package session

import (
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// The watcher reads the signals `debussy done` and `debussy handoff` write
// through package state, which a session may not import: this pins it to
// state's paths and format, so a change there fails here rather than
// leaving the agent's commands unheard.
func TestWatcherReadsStateSignals(t *testing.T) {
	store := state.New(filepath.Join(t.TempDir(), state.DirName))
	w := newWatcher(Facts{SignalPath: store.SignalPath("r1", "2"), HandoffSignalPath: store.HandoffSignalPath("r1", "2"),
		HandoffPath: store.HandoffPath("r1", "2", 3)}, 3, false)
	defer w.close()
	if w.signalled() || w.handedOff() || w.handoffSize() != 0 {
		t.Fatal("facts before any command")
	}
	if err := store.WriteSignal("r1", state.Signal{Phase: "2", Status: state.StatusCompleted, Session: 2}); err != nil {
		t.Fatal(err)
	}
	if w.signalled() {
		t.Error("another session's done signal taken for this one's")
	}
	if err := store.WriteSignal("r1", state.Signal{Phase: "2", Status: state.StatusCompleted, Session: 3}); err != nil {
		t.Fatal(err)
	}
	if !w.signalled() {
		t.Error("`debussy done`'s signal not seen")
	}
	if err := store.ClearSignal("r1", "2"); err != nil {
		t.Fatal(err)
	}
	if w.signalled() {
		t.Error("a cleared signal still seen")
	}
	if err := store.WriteSignal("r1", state.Signal{Phase: "2", Status: state.StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if !w.signalled() {
		t.Error("a done signal naming no session not seen")
	}
	if _, err := store.WriteHandoff("r1", state.HandoffSignal{Phase: "2", Session: 2}, "an earlier session's"); err != nil {
		t.Fatal(err)
	}
	if w.handedOff() {
		t.Error("another session's handoff signal taken for this one's")
	}
	if _, err := store.WriteHandoff("r1", state.HandoffSignal{Phase: "2", Session: 3}, "## Done\n"); err != nil {
		t.Fatal(err)
	}
	if !w.handedOff() || w.handoffSize() == 0 {
		t.Errorf("this session's handoff not seen: signal %v, %d bytes", w.handedOff(), w.handoffSize())
	}
}
