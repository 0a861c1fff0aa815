package state

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/record"
)

// Every writer under .debussy/ makes its files 0600 and its directories
// 0700, and the next run's lock tightens what an earlier version left
// 0644 or 0755 — but not the phases' worktrees, which are checkouts.
func TestPrivateModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), DirName)
	s := New(dir)
	// An earlier version's .debussy/: readable by all.
	old := filepath.Join(s.PhaseDir("r0", "1"), "checkpoint-1.md")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("# Checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(dir, "worktrees", "r0", "phase-1", "build.sh")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	release, _, err := s.Lock(LockInfo{PID: os.Getpid(), RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := s.Save(&Ledger{Runs: []*Run{{ID: "r1", Status: StatusRunning}}}); err != nil {
		t.Fatal(err)
	}
	ev, err := s.OpenEvents("r1", func() time.Time { return time.Unix(0, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.Record(record.RunEnded{}); err != nil {
		t.Fatal(err)
	}
	_ = ev.Close()
	if err := s.WriteSignal("r1", Signal{Phase: "1", Status: StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendProgress("r1", Progress{Phase: "1", Message: "half way"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(s.PhaseDir("r1", "1"), "checkpoint-1.json"), []byte("{}")); err != nil {
		t.Fatal(err)
	}

	files := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(dir, "worktrees") {
			return fs.SkipDir
		}
		info, _ := d.Info()
		want := FileMode
		if d.IsDir() {
			want = DirMode
		} else {
			files++
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %#o, want %#o", path, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 6 {
		t.Errorf("%d files written, want 6 or more", files)
	}
	if info, err := os.Stat(tool); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("a worktree's script lost its mode: %v %v", info.Mode(), err)
	}
}
