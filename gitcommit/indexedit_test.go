package gitcommit

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// editIndex adds and removes entries as git's update-index does (for the
// entries it can add: placeholders), in every index version, and leaves
// what git's own fsck-like read (ls-files, write-tree) accepts; a name a
// placeholder would clash with is left to git.
func TestEditIndexMatchesUpdateIndex(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("version "+version, func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n", "b/d/e.txt": "e\n", "z.txt": "z\n"})
			runGit(t, dir, "update-index", "--index-version", version)
			if version == "3" {
				runGit(t, dir, "update-index", "--skip-worktree", "z.txt") // an extended flag
			}
			twin := copyTree(t, dir)
			add := []string{"b/mine.txt", "notes", "a.txt0", "b/d/zz"}
			idx := filepath.Join(dir, ".git", "index")
			if err := editIndex(idx, add, nil); err != nil {
				t.Fatal(err)
			}
			var info strings.Builder
			for _, p := range add {
				info.WriteString("160000 " + emptyBlob + "\t" + p + "\x00")
			}
			cmd := gitCmd(twin, "-c", "core.ignoreStat=true", "update-index", "-z", "--index-info")
			cmd.Stdin = strings.NewReader(info.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index: %v\n%s", err, out)
			}
			if got, want := runGit(t, dir, "ls-files", "-s", "-v"), runGit(t, twin, "ls-files", "-s", "-v"); got != want {
				t.Errorf("after adding:\n%s\ngit:\n%s", got, want)
			}
			if err := editIndex(idx, nil, map[string]bool{"b/mine.txt": true, "notes": true, "a.txt0": true, "b/d/zz": true}); err != nil {
				t.Fatal(err)
			}
			runGit(t, dir, "write-tree")
			if got, want := runGit(t, dir, "write-tree"), runGit(t, dir, "rev-parse", "HEAD^{tree}"); got != want {
				t.Errorf("after removing, the index's tree is %s, HEAD's %s", got, want)
			}
			if err := editIndex(idx, []string{"a.txt/x"}, nil); err != errIndexUnsupported {
				t.Errorf("a placeholder below a file: %v, want it left to git", err)
			}
			if err := editIndex(idx, []string{"b"}, nil); err != errIndexUnsupported {
				t.Errorf("a placeholder over a directory: %v, want it left to git", err)
			}
			// An entry that is not a placeholder (not a gitlink) is taken
			// out all the same.
			if err := editIndex(idx, nil, map[string]bool{"a.txt": true, "b/mine.txt": true}); err != nil {
				t.Fatal(err)
			}
			if got := runGit(t, dir, "ls-files"); strings.Contains(got, "a.txt\n") || !strings.Contains(got, "b/c.txt") {
				t.Errorf("after removing a.txt:\n%s", got)
			}
			if _, err := os.Stat(idx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCachedTree: the index's cache tree says it is HEAD's tree only while
// git would say so — after git's own commit and a `git status` that
// rewrites the file, in every index version; never with an entry staged,
// an intent-to-add one, an unmerged one, or an index go-git wrote (no
// cache tree at all).
func TestCachedTree(t *testing.T) {
	isolate(t)
	for _, tt := range []struct {
		name string
		do   func(dir string)
		want bool
	}{
		{"after git commit", func(string) {}, true},
		{"after git status", func(dir string) {
			writeFiles(t, dir, map[string]string{"a.txt": "a\n"}) // same content, new stat data
			runGit(t, dir, "status", "--porcelain")
		}, true},
		{"index version 4", func(dir string) { runGit(t, dir, "update-index", "--index-version", "4") }, true},
		{"a change staged", func(dir string) {
			writeFiles(t, dir, map[string]string{"b/c.txt": "changed\n"})
			runGit(t, dir, "add", "b/c.txt")
		}, false},
		{"intent to add", func(dir string) {
			writeFiles(t, dir, map[string]string{"new.txt": "n\n"})
			runGit(t, dir, "add", "-N", "new.txt")
		}, false},
		{"a removal staged", func(dir string) { runGit(t, dir, "rm", "-q", "--cached", "a.txt") }, false},
		{"unmerged", func(dir string) {
			info := "100644 " + runGit(t, dir, "rev-parse", "HEAD:a.txt") + " 1\ta.txt\n"
			cmd := gitCmd(dir, "update-index", "--index-info")
			cmd.Stdin = strings.NewReader("0 0000000000000000000000000000000000000000\ta.txt\n" + info)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("update-index: %v\n%s", err, out)
			}
		}, false},
		{"written by go-git", func(dir string) {
			idx, err := readIndexFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := index.NewEncoder(f).Encode(idx); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := committedRepo(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
			tt.do(dir)
			b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			head := plumbing.NewHash(runGit(t, dir, "rev-parse", "HEAD^{tree}"))
			p, err := parseIndex(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.isTree(head); got != tt.want {
				t.Errorf("isTree = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEditIndexSmudgesToTheSecond: an entry whose file changed in the same
// second as the index was written is racy to a git built without
// nanosecond timestamps (Debian's), however many milliseconds older it is:
// editIndex, whose rewrite moves the index's mtime (into the next second,
// under load), smudges it so git looks at its content again. Left as it
// was, a same-size edit in that second was never committed.
func TestEditIndexSmudgesToTheSecond(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"same.txt": "s\n", "older.txt": "o\n"})
	sec := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	for name, at := range map[string]time.Time{"same.txt": sec.Add(200 * time.Millisecond), "older.txt": sec.Add(-800 * time.Millisecond)} {
		if err := os.Chtimes(filepath.Join(dir, name), at, at); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, dir, "update-index", "--refresh")
	idx := filepath.Join(dir, ".git", "index")
	if err := os.Chtimes(idx, sec.Add(500*time.Millisecond), sec.Add(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := editIndex(idx, []string{"notes"}, nil); err != nil {
		t.Fatal(err)
	}
	debug := runGit(t, dir, "ls-files", "--debug", "same.txt", "older.txt")
	sizes := regexp.MustCompile(`size: (\d+)`).FindAllStringSubmatch(debug, -1)
	if len(sizes) != 2 || sizes[0][1] != "2" || sizes[1][1] != "0" {
		t.Errorf("sizes after editIndex (older.txt, then same.txt):\n%s\nwant older.txt's kept (2) and same.txt's smudged (0)", debug)
	}
}
