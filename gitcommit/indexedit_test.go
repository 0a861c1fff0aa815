package gitcommit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			add := []placeholder{{path: "b/mine.txt"}, {path: "notes"}, {path: "a.txt0"}, {path: "b/d/zz"}}
			idx := filepath.Join(dir, ".git", "index")
			if err := editIndex(idx, add, nil); err != nil {
				t.Fatal(err)
			}
			var info strings.Builder
			for _, p := range add {
				info.WriteString("160000 " + emptyBlob + "\t" + p.path + "\x00")
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
			if err := editIndex(idx, []placeholder{{path: "a.txt/x"}}, nil); err != errIndexUnsupported {
				t.Errorf("a placeholder below a file: %v, want it left to git", err)
			}
			if err := editIndex(idx, []placeholder{{path: "b"}}, nil); err != errIndexUnsupported {
				t.Errorf("a placeholder over a directory: %v, want it left to git", err)
			}
			if _, err := os.Stat(idx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
