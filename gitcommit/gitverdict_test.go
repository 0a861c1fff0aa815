package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A divergence planted in debussy's staging (an edit dropped, a new file
// left out, an ignored one added) never reaches the branch: git's verdict
// replaces it, the paths are reported, and Verify, replaying git, agrees.
func TestGitVerdictReplacesPlantedDivergence(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "one\n", ".gitignore": "*.log\n"})
	oldA := runGit(t, dir, "rev-parse", "HEAD:a.txt")
	writeFiles(t, dir, map[string]string{"a.txt": "two\n", "b.txt": "new\n", "x.log": "noise\n"})

	plantStaging = func(es []*index.Entry) []*index.Entry {
		es = slices.DeleteFunc(es, func(e *index.Entry) bool { return e.Name == "b.txt" })
		for _, e := range es {
			if e.Name == "a.txt" {
				e.Hash = plumbing.NewHash(oldA)
			}
		}
		return append(es, &index.Entry{Name: "x.log", Mode: 0o100644, Hash: plumbing.NewHash(runGit(t, dir, "hash-object", "-w", "x.log"))})
	}
	t.Cleanup(func() { plantStaging = nil })

	twin := copyTree(t, dir)
	runGit(t, twin, "add", "-A")
	runGit(t, twin, "commit", "-q", "-m", "git")

	r := mustOpen(t, dir)
	c, err := r.CommitAll("debussy")
	if err != nil {
		t.Fatalf("CommitAll: %v", err)
	}
	if got, want := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("branch tree %s, git's %s:\n%s", got, want, runGit(t, dir, "ls-tree", "-r", "HEAD"))
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after the commit:\n%s", st)
	}
	var paths []string
	for _, pd := range c.GitReplaced {
		paths = append(paths, pd.Path)
	}
	if want := []string{"a.txt", "b.txt", "x.log"}; !slices.Equal(paths, want) {
		t.Errorf("GitReplaced = %v, want %v", c.GitReplaced, want)
	}
	repro, err := r.WriteRepro(t.TempDir(), c.Hash, c.GitReplaced)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(repro); !strings.Contains(string(b), "b.txt: committed absent") {
		t.Errorf("reproduction %s:\n%s", repro, b)
	}
	if !c.StagedByGit {
		t.Error("Commit.StagedByGit is false")
	}
	d, err := Verify(context.Background(), dir, c.Hash, VerifyOptions{})
	if err != nil || len(d.Paths) > 0 {
		t.Errorf("Verify = %+v, %v; want agreement", d, err)
	}
}

// A `git add -A` that fails means git would not commit: neither does
// debussy (a refusal git alone makes is simulated with a bad option).
func TestGitVerdictRefusesWhereGitAddFails(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "1\n"})
	writeFiles(t, dir, map[string]string{"a.txt": "2\n"})
	head := runGit(t, dir, "rev-parse", "HEAD")
	verdictArgs = []string{"--no-such-option"}
	t.Cleanup(func() { verdictArgs = nil })
	_, err := mustOpen(t, dir).CommitAll("debussy")
	if !errors.Is(err, ErrGitRefused) || !strings.Contains(err.Error(), "no-such-option") {
		t.Fatalf("CommitAll = %v, want git's refusal", err)
	}
	if now := runGit(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("HEAD moved to %s", now)
	}
}

// git's stat check works in whole seconds: a same-size edit with its mtime
// put back, within the second of the entry's ctime, is not staged by git.
// debussy commits it, and its verdict keeps that (the documented case).
func TestGitVerdictKeepsAnEditGitsStatCheckMisses(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	f := filepath.Join(dir, "a.txt")
	for attempt := 0; ; attempt++ {
		// Start early in a second, so the add and the edit share it.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		writeFiles(t, dir, map[string]string{"a.txt": "one\n"})
		if err := os.Chtimes(f, past, past); err != nil {
			t.Fatal(err)
		}
		runGit(t, dir, "add", "a.txt")
		writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
		if err := os.Chtimes(f, past, past); err != nil {
			t.Fatal(err)
		}
		if time.Now().Nanosecond() < 900_000_000 {
			break
		}
		if attempt == 3 {
			t.Skip("the machine is too slow to edit within one second")
		}
	}
	if out := runGit(t, dir, "diff", "--name-only"); out != "" {
		t.Fatalf("git sees the edit (%s): the case did not arise", out)
	}
	c, err := mustOpen(t, dir).CommitAll("debussy")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "show", "HEAD:a.txt"); got != "two" {
		t.Errorf("committed %q, want the edit", got)
	}
	if len(c.GitReplaced) > 0 {
		t.Errorf("GitReplaced = %v", c.GitReplaced)
	}
}

// BenchmarkVerdict20k reports what git's verdict adds to a commit of 20
// edited files on a 20,000-file tree: the same edits committed with the
// verdict and without it, alternately, on one repository.
func BenchmarkVerdict20k(b *testing.B) {
	dir, plain := bench20kRepo(b, withoutVerdict())
	judged, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	var dur, cpu [2]time.Duration // without, with
	b.ResetTimer()
	for i := range b.N {
		for side, r := range []*Repo{plain, judged} {
			for k := range 20 {
				rel := fmt.Sprintf("d%03d/f001.txt", (i*20+k)%200)
				if err := os.WriteFile(filepath.Join(dir, rel), []byte(fmt.Sprintf("edit %d %d %d\n", i, side, k)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			t0, c0 := time.Now(), cpuTime(b)
			c, err := r.CommitAll("edit")
			if err != nil || len(c.GitReplaced) > 0 {
				b.Fatalf("CommitAll: %v %v", c.GitReplaced, err)
			}
			dur[side] += time.Since(t0)
			cpu[side] += cpuTime(b) - c0
		}
	}
	b.ReportMetric(float64(dur[0].Milliseconds())/float64(b.N), "commit-ms/op")
	b.ReportMetric(float64(dur[1].Milliseconds())/float64(b.N), "with-verdict-ms/op")
	b.ReportMetric(float64(dur[1]-dur[0])/float64(dur[0]), "verdict/commit")
	b.ReportMetric(float64(cpu[1]-cpu[0])/float64(cpu[0]), "verdict/commit-cpu")
}

// A user's untracked file under working-tree-encoding is listed at start
// and kept out of the commits like any other (it was refused).
func TestUntrackedWorkingTreeEncodingIsListed(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{".gitattributes": "*.u16 working-tree-encoding=UTF-16LE\n"})
	writeFiles(t, dir, map[string]string{"notes.u16": "n\x00\n\x00"})
	r := mustOpen(t, dir)
	user, err := r.Untracked()
	if _, ok := user["notes.u16"]; err != nil || !ok {
		t.Fatalf("Untracked = %v, %v", user, err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	if _, err := r.CommitAll("agent", Exclude(user, nil)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(treeFiles(t, dir), " "); got != ".gitattributes a.txt" {
		t.Errorf("committed %s", got)
	}
}

// git's verdict writes no object for what debussy leaves out by design:
// the user's untracked files and .debussy/ (a log appended to at every
// commit would otherwise be stored again each time).
func TestGitVerdictStoresNothingOfOwnPaths(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "a\n"})
	writeFiles(t, dir, map[string]string{"mine[1].txt": "the user's own\n", ".debussy/runs/r/events.jsonl": "{}\n"})
	r := mustOpen(t, dir)
	user, err := r.Untracked()
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "b\n"})
	c, err := r.CommitAll("agent", Exclude(user, nil))
	if err != nil || len(c.GitReplaced) > 0 {
		t.Fatalf("CommitAll: %v %v", c.GitReplaced, err)
	}
	for _, f := range []string{"mine[1].txt", ".debussy/runs/r/events.jsonl"} {
		h := runGit(t, dir, "hash-object", "--", f)
		if _, err := gitOutput(dir, "cat-file", "-e", h); err == nil {
			t.Errorf("%s was stored as an object", f)
		}
	}
}
