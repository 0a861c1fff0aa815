package gitcommit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/ptytest"
)

// A hook may ask on the terminal, as under `git commit` typed in a shell:
// run from debussy in the foreground of its terminal, it reads the answer
// instead of stopping (SIGTTIN) in a process group of its own.
func TestHookReadsTheTerminal(t *testing.T) {
	if os.Getenv("GITCOMMIT_TERMINAL_DIR") != "" {
		t.Skip("the helper, not the test")
	}
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "a\n"})
	writeFiles(t, dir, map[string]string{
		".git/hooks/pre-commit": "#!/bin/sh\nexec < /dev/tty\nprintf 'Commit anyway? ' > /dev/tty\nread answer\necho \"$answer\" > .git/answer\n",
		"a.txt":                 "changed\n",
	})
	must(t, os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit"), 0o755))
	master, slave := ptytest.Open(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCommitOnTerminal$", "-test.v")
	cmd.Env = append(os.Environ(), "GITCOMMIT_TERMINAL_DIR="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	must(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	out := make(chan string, 100)
	go func() {
		rd := bufio.NewReader(master)
		for {
			s, err := rd.ReadString('?')
			if s != "" {
				out <- s
			}
			if err != nil {
				close(out)
				return
			}
		}
	}()
	var seen strings.Builder
	for asked := false; !asked; {
		select {
		case s, ok := <-out:
			seen.WriteString(s)
			if !ok {
				t.Fatalf("the terminal closed before the hook asked:\n%s", seen.String())
			}
			asked = strings.Contains(seen.String(), "Commit anyway?")
		case <-time.After(time.Minute):
			t.Fatalf("the hook never asked:\n%s", seen.String())
		}
	}
	if _, err := master.Write([]byte("yes\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the commit on the terminal: %v\n%s", err, seen.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the commit did not end after the hook's question was answered")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git/answer")); strings.TrimSpace(string(b)) != "yes" {
		t.Errorf("the hook read %q from the terminal", b)
	}
	if got := runGit(t, dir, "show", "HEAD:a.txt"); got != "changed" {
		t.Errorf("HEAD's a.txt = %q: the commit was not made", got)
	}
}

// TestHelperCommitOnTerminal is TestHookReadsTheTerminal's debussy: the
// foreground job of its own terminal, it commits once.
func TestHelperCommitOnTerminal(t *testing.T) {
	dir := os.Getenv("GITCOMMIT_TERMINAL_DIR")
	if dir == "" {
		t.Skip("run by TestHookReadsTheTerminal")
	}
	// Bounded: a hook stopped by SIGTTIN would wait for ever.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := mustOpen(t, dir).CommitAll(ctx, "asked"); err != nil {
		t.Fatal(err)
	}
}

// Ctrl-C (the context's end) cuts a hung hook and everything it started:
// CommitAll returns in seconds, the hook's processes are gone, nothing is
// committed and the index is as it was.
func TestInterruptedHookIsCut(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "a\n"})
	pids := filepath.Join(t.TempDir(), "pids")
	writeFiles(t, dir, map[string]string{
		".git/hooks/pre-commit": "#!/bin/sh\nsleep 120 &\necho $! >> " + pids + "\necho $$ >> " + pids + "\nwait\n",
		"a.txt":                 "changed\n",
	})
	must(t, os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit"), 0o755))
	index, err := os.ReadFile(filepath.Join(dir, ".git/index"))
	must(t, err)
	head := runGit(t, dir, "rev-parse", "HEAD")

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 600 {
			if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") >= 2 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err = mustOpen(t, dir).CommitAll(ctx, "never")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("CommitAll = %v, want the context's end", err)
	}
	t.Logf("CommitAll returned %s after it began", time.Since(start).Round(time.Millisecond))
	if got := runGit(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if after, err := os.ReadFile(filepath.Join(dir, ".git/index")); err != nil || string(after) != string(index) {
		t.Errorf("the index changed (%v)", err)
	}
	for _, f := range []string{".git/index.lock", ".git/index.lock.lock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left behind", f)
		}
	}
	b, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		for i := 0; ; i++ {
			if syscall.Kill(pid, 0) != nil || isZombie(pid) {
				break
			}
			if i == 100 {
				t.Errorf("the hook's process %d outlived the commit", pid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// isZombie says pid has exited and waits to be reaped (by init, here).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
