package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestVerifyAgreesWithCommitAll(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{
		".gitignore": "*.log\nbuild/\n", "a.txt": "a\n", "src/b.go": "package b\n",
		"x.log": "ignored\n", "build/out": "ignored\n", ".debussy/state.json": "{}",
	})
	mustCommitAll(t, dir, "first")
	writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "new/c.txt": "c\n"})
	must(t, os.Remove(filepath.Join(dir, "src/b.go")))
	c := mustCommitAll(t, dir, "second")

	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	must(t, err)
	fiBefore, err := os.Stat(index)
	must(t, err)
	d, err := Verify(context.Background(), dir, c.Hash, VerifyOptions{ReproDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if len(d.Paths) != 0 || d.Repro != "" {
		t.Errorf("Verify found a disagreement on CommitAll's own commit: %+v", d)
	}
	after, err := os.ReadFile(index)
	must(t, err)
	fiAfter, err := os.Stat(index)
	must(t, err)
	if !bytes.Equal(before, after) || !fiBefore.ModTime().Equal(fiAfter.ModTime()) {
		t.Error("Verify wrote the user's index")
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "?? .debussy/" { // never committed, by design
		t.Errorf("git status after Verify:\n%s", st)
	}
}

// A commit git would not have made: an ignored file forced in, a new file
// left out, a mode flipped. Verify names each with both sides and writes a
// reproduction holding the ignore rule that decides.
func TestVerifyReportsDisagreements(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{".gitignore": "*.secret\n", "a.sh": "#!/bin/sh\n", "keep.txt": "k\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "first")
	writeFiles(t, dir, map[string]string{"id.secret": "password\n", "left-out.txt": "new\n"})
	must(t, os.Chmod(filepath.Join(dir, "a.sh"), 0o755))
	runGit(t, dir, "add", "-f", "id.secret")
	runGit(t, dir, "commit", "-q", "-m", "bad")
	head := runGit(t, dir, "rev-parse", "HEAD")

	repro := t.TempDir()
	d, err := Verify(context.Background(), dir, head, VerifyOptions{ReproDir: repro})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	var got []string
	for _, p := range d.Paths {
		got = append(got, p.String())
	}
	want := []string{
		"a.sh: committed 100644 " + runGit(t, dir, "rev-parse", "HEAD:a.sh") + ", git would commit 100755 " + runGit(t, dir, "rev-parse", "HEAD:a.sh"),
		"id.secret: committed 100644 " + runGit(t, dir, "rev-parse", "HEAD:id.secret") + ", git would commit absent",
		"left-out.txt: committed absent, git would commit 100644 " + runGit(t, dir, "hash-object", "left-out.txt"),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Verify paths:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, err := os.ReadFile(d.Repro)
	if err != nil {
		t.Fatalf("reproduction: %v", err)
	}
	for _, s := range []string{"id.secret: committed", ".gitignore:1:*.secret\tid.secret", "git version"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("reproduction lacks %q:\n%s", s, b)
		}
	}
	if filepath.Dir(d.Repro) != repro {
		t.Errorf("reproduction written to %s, want under %s", d.Repro, repro)
	}

	// Limited to some paths and the commit's own: a.sh is not looked at.
	d, err = Verify(context.Background(), dir, head, VerifyOptions{Paths: []string{"left-out.txt", "no-such-file"}})
	if err != nil || len(d.Paths) != 2 || d.Paths[0].Path != "id.secret" || d.Paths[1].Path != "left-out.txt" {
		t.Errorf("Verify with Paths: %+v, %v", d, err)
	}
	// Excluded (the user's untracked files) and changed after the commit.
	d, err = Verify(context.Background(), dir, head, VerifyOptions{Exclude: []string{"left-out.txt"}, Since: time.Now().Add(-time.Hour)})
	if err != nil || len(d.Paths) != 0 || fmt.Sprint(d.Skipped) != "[a.sh id.secret]" {
		t.Errorf("Verify with Exclude and Since: %+v, %v", d, err)
	}
}

func TestVerifyWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Verify(context.Background(), t.TempDir(), "HEAD", VerifyOptions{}); !errors.Is(err, ErrNoGit) {
		t.Errorf("Verify without git: %v, want ErrNoGit", err)
	}
}

// BenchmarkVerify20k reports Verify's cost against the CommitAll it checks,
// on a 20,000-file tree with 20 files changed per commit (ratio:
// verify/commit), checking the whole tree or only the agent's paths.
func BenchmarkVerify20k(b *testing.B) {
	b.Run("whole-tree", func(b *testing.B) { benchVerify(b, false) })
	b.Run("agent-paths", func(b *testing.B) { benchVerify(b, true) })
}

func benchVerify(b *testing.B, limit bool) {
	// debussy's own commits, so that Verify replays them with git.
	dir, r := bench20kRepo(b, withoutGit())
	var commitDur, verifyDur, commitCPU, verifyCPU time.Duration
	b.ResetTimer()
	for i := range b.N {
		var touched []string
		for k := range 20 {
			rel := fmt.Sprintf("d%03d/f000.txt", (i*20+k)%200)
			touched = append(touched, rel)
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(fmt.Sprintf("edit %d %d\n", i, k)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		t0, c0 := time.Now(), cpuTime(b)
		c, err := r.CommitAll(context.Background(), "edit")
		if err != nil {
			b.Fatal(err)
		}
		var opts VerifyOptions
		if limit {
			opts.Paths, opts.Ignored = touched, c.Ignored
		}
		t1, c1 := time.Now(), cpuTime(b)
		d, err := Verify(context.Background(), dir, c.Hash, opts)
		if err != nil || len(d.Paths) != 0 {
			b.Fatalf("Verify: %+v %v", d, err)
		}
		commitDur += t1.Sub(t0)
		verifyDur += time.Since(t1)
		commitCPU += c1 - c0
		verifyCPU += cpuTime(b) - c1
	}
	b.ReportMetric(float64(commitDur.Milliseconds())/float64(b.N), "commit-ms/op")
	b.ReportMetric(float64(verifyDur.Milliseconds())/float64(b.N), "verify-ms/op")
	b.ReportMetric(float64(verifyDur)/float64(commitDur), "verify/commit")
	// On a shared machine the wall clock mostly measures the queue for a
	// core; CPU time (ours and git's) is the cost itself.
	b.ReportMetric(float64(verifyCPU)/float64(commitCPU), "verify/commit-cpu")
}

// bench20kRepo is a committed repository of 20,000 files in 200
// directories, with an ignored node_modules and a log.
func bench20kRepo(b *testing.B, opts ...Option) (string, *Repo) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := filepath.Join(b.TempDir(), "repo")
	if out, err := gitOutput(b.TempDir(), "init", "-q", "-b", "main", dir); err != nil {
		b.Fatal(out, err)
	}
	for _, kv := range [][2]string{{"user.name", "B"}, {"user.email", "b@example.com"}} {
		if out, err := gitOutput(dir, "config", kv[0], kv[1]); err != nil {
			b.Fatal(out, err)
		}
	}
	for d := range 200 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("file %d %d\n", d, f)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Ignored files as in most projects: a dependency directory and logs.
	for f := range 500 {
		writeBenchFile(b, filepath.Join(dir, "node_modules", fmt.Sprintf("dep%02d", f%50), fmt.Sprintf("m%03d.js", f)), "x\n")
	}
	writeBenchFile(b, filepath.Join(dir, ".gitignore"), "node_modules/\n*.log\n")
	writeBenchFile(b, filepath.Join(dir, "d000", "run.log"), "log\n")
	r, err := Open(dir, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.CommitAll(context.Background(), "initial"); err != nil {
		b.Fatal(err)
	}
	return dir, r
}

func writeBenchFile(b *testing.B, path, content string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the user and system time of this process and its waited-for
// children (git) so far.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// The first commit (no parent) and a commit of an empty tree verify too.
func TestVerifyRootAndEmptyCommits(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	c := mustCommitAll(t, dir, "root")
	if d, err := Verify(context.Background(), dir, c.Hash, VerifyOptions{}); err != nil || len(d.Paths) != 0 {
		t.Errorf("root commit: %+v, %v", d, err)
	}
	must(t, os.Remove(filepath.Join(dir, "a.txt")))
	c = mustCommitAll(t, dir, "empty")
	if d, err := Verify(context.Background(), dir, c.Hash, VerifyOptions{}); err != nil || len(d.Paths) != 0 {
		t.Errorf("empty tree: %+v, %v", d, err)
	}
}
