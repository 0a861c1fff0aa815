package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// LedgerFile writes what Save writes, byte for byte, while it encodes only
// the runs that changed: a change it was not told of stays out of the file
// (the proof that it did not encode that run again).
func TestLedgerFileWritesWhatSaveWrites(t *testing.T) {
	saved := &Store{Dir: filepath.Join(t.TempDir(), DirName)}
	written := &Store{Dir: filepath.Join(t.TempDir(), DirName)}
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	old := &Run{ID: "old", Plan: "/p", Status: StatusCompleted, StartedAt: t0, Phases: []*PhaseRecord{
		{ID: "1", Status: StatusCompleted, LastError: "token ghp_0123456789abcdefghijABCDEFGHIJ leaked"}}}
	cur := &Run{ID: "cur", Plan: "/p", Status: StatusRunning, StartedAt: t0.Add(time.Hour), Phases: []*PhaseRecord{{ID: "1", Status: StatusPending}}}
	same := func(l *Ledger) {
		t.Helper()
		if err := saved.Save(l); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(saved.ledgerPath())
		b, _ := os.ReadFile(written.ledgerPath())
		if !bytes.Equal(a, b) {
			t.Fatalf("LedgerFile wrote\n%s\nSave wrote\n%s", b, a)
		}
		if bytes.Contains(b, []byte("ghp_0123")) {
			t.Fatalf("a secret reached the ledger:\n%s", b)
		}
	}
	w := written.NewLedgerFile()
	for _, l := range []*Ledger{{}, {Runs: []*Run{}}, {Version: 1, Runs: []*Run{old}}} {
		if err := w.Write(l); err != nil {
			t.Fatal(err)
		}
		same(l)
	}
	l := &Ledger{Version: 1, Runs: []*Run{old, cur}}
	if err := w.Write(l, cur); err != nil {
		t.Fatal(err)
	}
	same(l)
	cur.Phases[0].Status, cur.Phases[0].Sessions = StatusRunning, 1
	if err := w.Write(l, cur); err != nil {
		t.Fatal(err)
	}
	same(l)

	old.Status = StatusFailed // not told: the file keeps what it encoded
	if err := w.Write(l, cur); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(written.ledgerPath()); !bytes.Contains(b, []byte(`"status": "completed"`)) {
		t.Fatalf("the run not named as changed was encoded again:\n%s", b)
	}
	if err := w.Write(l, old); err != nil {
		t.Fatal(err)
	}
	same(l)
	if fi, err := os.Stat(written.ledgerPath()); err != nil || fi.Mode().Perm() != FileMode {
		t.Fatalf("ledger mode: %v %v", fi, err)
	}
}

// The cost of one write of a ledger with 50 earlier runs as a run goes on:
// Save encodes and redacts every run, LedgerFile only the one that changed.
//
//	go test -run '^$' -bench Ledger ./state/
func BenchmarkLedgerSave(b *testing.B)      { benchLedger(b, false) }
func BenchmarkLedgerFileWrite(b *testing.B) { benchLedger(b, true) }

func benchLedger(b *testing.B, incremental bool) {
	store := &Store{Dir: filepath.Join(b.TempDir(), DirName)}
	l := &Ledger{Version: 1}
	for i := range 51 {
		r := &Run{ID: fmt.Sprintf("r%d", i), Plan: "/p", Status: StatusCompleted}
		for p := range 8 {
			r.Phases = append(r.Phases, &PhaseRecord{ID: fmt.Sprint(p), Status: StatusCompleted, Sessions: 3,
				Commits: []string{"0123456789abcdef0123456789abcdef01234567"}, LastError: "gate 1 failed: exit 1"})
		}
		l.Runs = append(l.Runs, r)
	}
	cur := l.Runs[50]
	w := store.NewLedgerFile()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cur.Phases[0].Sessions = i
		var err error
		if incremental {
			err = w.Write(l, cur)
		} else {
			err = store.Save(l)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
