package gitcommit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// resolveSplit reads git's own split indexes as git does: deletions,
// replacements (their names stripped) and additions, in index versions 2
// and 3, give the entries `git update-index --no-split-index` writes.
func TestResolveSplitMatchesGit(t *testing.T) {
	for _, version := range []string{"2", "3"} {
		t.Run("v"+version, func(t *testing.T) {
			isolate(t)
			files := map[string]string{}
			for i := range 300 {
				files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
			}
			dir := committedRepo(t, files)
			git := func(args ...string) string {
				return runGit(t, dir, append([]string{"-c", "splitIndex.maxPercentChange=100", "-c", "index.version=" + version}, args...)...)
			}
			git("update-index", "--split-index")
			writeFiles(t, dir, map[string]string{"d0/f000.txt": "changed\n", "d3/f010.txt": "changed too\n", "a-new.txt": "new\n", "d5/new.txt": "new\n", "zz/new.txt": "new\n", "ita.txt": "intent\n"})
			// Older than the index git writes next, so that no entry is
			// racy and smudged by git's rewrite below.
			old := time.Now().Add(-time.Hour)
			_ = filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error {
				if strings.Contains(p, ".git") {
					return nil
				}
				return os.Chtimes(p, old, old)
			})
			git("rm", "-q", "--cached", "d1/f001.txt", "d2/f002.txt")
			git("add", "d0", "d3", "a-new.txt", "d5/new.txt", "zz")
			if version == "3" {
				git("add", "-N", "ita.txt")
			}

			split, err := loadIndex(filepath.Join(dir, ".git", "index"))
			if err != nil || !split.isSplit() {
				t.Fatalf("git's index: split %v, %v", split.isSplit(), err)
			}
			got, shared, err := resolveSplit(filepath.Join(dir, ".git"), split.parsedIndex, nil)
			if err != nil || shared == "" {
				t.Fatalf("resolveSplit: %v (shared %q)", err, shared)
			}
			whole := filepath.Join(t.TempDir(), "whole")
			copyFile(t, filepath.Join(dir, ".git", "index"), whole)
			if out, err := gitOutputEnv(dir, []string{"GIT_INDEX_FILE=" + whole}, "update-index", "--no-split-index"); err != nil {
				t.Fatalf("git update-index --no-split-index: %v\n%s", err, out)
			}
			want, err := loadIndex(whole)
			if err != nil || want.isSplit() {
				t.Fatalf("git's whole index: %v", err)
			}
			if len(got.entries) != len(want.entries) {
				t.Fatalf("%d entries, git has %d", len(got.entries), len(want.entries))
			}
			for i := range want.entries {
				if g, w := got.entries[i], want.entries[i]; string(g.name) != string(w.name) || string(g.fixed) != string(w.fixed) {
					t.Errorf("entry %d: %q %x, git's %q %x", i, g.name, g.fixed, w.name, w.fixed)
				}
			}
		})
	}
}

// splitInto's split form is the same index to git, and git add -A
// stages into it as into the whole one.
func TestSplitIntoReadByGit(t *testing.T) {
	isolate(t)
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%5, i)] = fmt.Sprintf("file %d\n", i)
	}
	dir := committedRepo(t, files)
	gitDir := filepath.Join(dir, ".git")
	writeFiles(t, dir, map[string]string{"d1/f001.txt": "changed\n", "new.txt": "new\n"})
	must(t, os.Remove(filepath.Join(dir, "d2", "f002.txt")))
	whole, err := loadIndex(filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	front := filepath.Join(gitDir, "index.lock")
	shared, err := splitInto(gitDir, front, whole.parsedIndex, whole.mtime)
	if err != nil {
		t.Fatalf("splitInto: %v", err)
	}
	defer os.Remove(front)
	env := []string{"GIT_INDEX_FILE=" + front}
	for _, args := range [][]string{{"ls-files", "-s"}, {"status", "--porcelain"}} {
		got, err := gitOutputEnv(dir, env, args...)
		if want := runGit(t, dir, args...); err != nil || got != want {
			t.Errorf("git %v on the split form: %v\n%s\nwhole:\n%s", args, err, got, want)
		}
	}
	if out, err := gitOutputEnv(dir, env, "add", "-A"); err != nil {
		t.Fatalf("git add -A: %v\n%s", err, out)
	}
	staged, err := loadIndex(front)
	if err != nil || !staged.isSplit() {
		t.Fatalf("git add -A left split %v, %v", staged.isSplit(), err)
	}
	var sf sharedFiles
	if err := staged.resolve(gitDir, &sf); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	must(t, os.Remove(front)) // the index's lock, for the whole index's git add
	runGit(t, dir, "add", "-A")
	want, _ := loadIndex(filepath.Join(gitDir, "index"))
	for i := range max(len(want.entries), len(staged.entries)) {
		if i >= len(want.entries) || i >= len(staged.entries) || string(staged.entries[i].name) != string(want.entries[i].name) {
			t.Fatalf("entries differ at %d: %d against git's %d", i, len(staged.entries), len(want.entries))
		}
	}
	sf.remove()
	if _, err := os.Stat(shared); err == nil {
		t.Errorf("%s left behind", shared)
	}
}

// gitOutputEnv is gitOutput with env added to the environment.
func gitOutputEnv(dir string, env []string, args ...string) (string, error) {
	cmd := gitCmd(dir, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimRight(string(out), "\n"), err
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o644))
}
