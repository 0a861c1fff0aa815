package gitcommit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCommitWithUserFiles is one commit of a run (10 edited files in
// a 20,000-file tree, the agent's `git status` before it) with no
// untracked files of the user's at the start, and with 20,000: in
// directories of their own, or half of them beside tracked files. What the user's files cost per commit is the ratio of
// the ns/op (issue 55: at most 1.2 times); cpu-ms/op, the CPU time of
// debussy and its git processes, is steadier on a shared machine. Run it
// with -benchtime=8x; it is never a timed assertion.
func BenchmarkCommitWithUserFiles(b *testing.B) {
	const tracked, perDir = 20000, 100
	for _, bc := range []struct {
		name          string
		users         int
		besideTracked bool
	}{{"none", 0, false}, {"20000-in-own-dirs", 20000, false}, {"20000-half-beside-tracked", 20000, true}} {
		users := bc.users
		b.Run("user-files="+bc.name, func(b *testing.B) {
			isolateB(b)
			dir := filepath.Join(b.TempDir(), "repo")
			for i := range tracked {
				writeB(b, filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", i/perDir), fmt.Sprintf("f%03d.go", i%perDir)), fmt.Sprintf("package p\n\nconst X%d = %d\n", i, i))
			}
			for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=B", "-c", "user.email=b@x", "-c", "gc.auto=0", "commit", "-q", "-m", "init"}, {"gc", "-q"}} {
				if out, err := gitCmd(dir, args...).CombinedOutput(); err != nil {
					b.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			for i := range users {
				p := filepath.Join(dir, "notes", fmt.Sprintf("d%03d", i/perDir), fmt.Sprintf("n%03d.txt", i%perDir))
				if bc.besideTracked && i%2 == 1 {
					p = filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", (i/2)%(tracked/perDir)), fmt.Sprintf("mine%05d.txt", i))
				}
				writeB(b, p, fmt.Sprintf("the user's note %d\n", i))
			}
			time.Sleep(1500 * time.Millisecond) // the user's files are older than the run
			r, err := Open(dir, WithEnv(append(os.Environ(), "GIT_AUTHOR_NAME=B", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=B", "GIT_COMMITTER_EMAIL=b@x")))
			if err != nil {
				b.Fatal(err)
			}
			files, err := r.Untracked(context.Background())
			if err != nil || len(files) != users {
				b.Fatalf("Untracked: %d files, %v", len(files), err)
			}
			var cpu time.Duration // in CommitAll
			commit := func(round int) {
				for k := range 10 {
					i := (round*10 + k) * 1999 % tracked
					writeB(b, filepath.Join(dir, "src", fmt.Sprintf("pkg%03d", i/perDir), fmt.Sprintf("f%03d.go", i%perDir)), fmt.Sprintf("package p\n\n// round %d\n", round))
				}
				// The agent's `git status` between commits, as agents do: it
				// rewrites the index (fresher stat data).
				b.StopTimer()
				if out, err := gitCmd(dir, "status", "--porcelain").CombinedOutput(); err != nil {
					b.Fatalf("git status: %v\n%s", err, out)
				}
				b.StartTimer()
				before := cpuTime()
				if _, err := r.CommitAll(context.Background(), "bench", Exclude(files, nil)); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - before
			}
			commit(0) // the first commit of a run reads the user's files once
			// CPU time (debussy's and its git processes'), steadier than
			// wall time on a shared machine.
			cpu = 0
			b.ResetTimer()
			for i := range b.N {
				commit(i + 1)
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

func isolateB(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func writeB(b *testing.B, p, content string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the user and system time of this process and its reaped
// children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
