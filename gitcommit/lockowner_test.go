package gitcommit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A lock held by a debussy that died (kill -9 mid-commit) is removed by
// ReclaimLocks; one held by a live process, and one with no owner record
// (git's, the user's), stay. A commit leaves no record behind.
func TestReclaimLocks(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	r := mustOpen(t, dir)
	if _, err := r.CommitAll(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(dir, ".git", lockOwnersDir)
	if left, _ := os.ReadDir(records); len(left) != 0 {
		t.Fatalf("a commit left owner records: %v", left)
	}
	// While a lock is held its record names this process; released, it goes.
	l, err := r.acquireLock(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(l.owner)
	if want := strconv.Itoa(os.Getpid()) + "\n" + filepath.Join(dir, ".git", "index.lock") + "\n" + hostname() + "\n"; err != nil || string(rec) != want {
		t.Fatalf("owner record %q (%v), want %q", rec, err, want)
	}
	l.release()
	if left, _ := os.ReadDir(records); len(left) != 0 {
		t.Fatalf("a released lock left its record: %v", left)
	}

	// A dead process: one that has exited and been waited for.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	hold := func(path string, pid int, host string) {
		t.Helper()
		l, err := acquireLock(path) // without a record: written below as another process's
		if err != nil {
			t.Fatal(err)
		}
		rec := r.ownerPath(path + ".lock")
		if err := os.MkdirAll(filepath.Dir(rec), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rec, []byte(strconv.Itoa(pid)+"\n"+path+".lock\n"+host+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = l.f.Close() // the process "dies" holding it
	}
	index := filepath.Join(dir, ".git", "index")
	head := filepath.Join(dir, ".git", "HEAD")
	hold(index, dead.Process.Pid, hostname())
	hold(head, live.Process.Pid, hostname())
	orig := filepath.Join(dir, ".git", "ORIG_HEAD")
	hold(orig, dead.Process.Pid, "elsewhere") // another container's pid space
	userLock := filepath.Join(dir, ".git", "refs", "heads", "main.lock")
	if err := os.WriteFile(userLock, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := r.CommitAll(context.Background(), "blocked"); !errors.Is(err, ErrLocked) {
		t.Fatalf("commit under the dead lock: %v, want ErrLocked", err)
	}
	removed, err := r.ReclaimLocks()
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != index+".lock" {
		t.Errorf("removed %v, want only the dead process's index.lock", removed)
	}
	for _, p := range []string{head + ".lock", orig + ".lock", userLock} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
	if left, _ := os.ReadDir(records); len(left) != 2 {
		t.Errorf("records left: %d, want the live one's and the other host's", len(left))
	}
}
