package gitcommit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// TestTreesAgreeing: an index edited with the cache tree of the index it
// started from (treesAgreeing) writes the tree git's own index does —
// the nodes of the directories whose entries are the same kept valid, the
// others (an entry added, changed, removed, an intent-to-add, a mode, a
// node that was invalid already) left to git.
func TestTreesAgreeing(t *testing.T) {
	for _, version := range []string{"2", "4"} {
		t.Run("version "+version, func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{
				"a/b/c.txt": "c\n", "a/d/k.txt": "k\n", "e/f.txt": "f\n", "g/h/i.txt": "i\n", "g/j.txt": "j\n",
				"m/n.txt": "n\n", "m/o/p.txt": "p\n", "q/r.txt": "r\n", "top.txt": "t\n",
			})
			runGit(t, dir, "update-index", "--index-version", version)
			runGit(t, dir, "write-tree")
			writeFiles(t, dir, map[string]string{"e/f.txt": "changed\n"})
			runGit(t, dir, "add", "e/f.txt") // invalid in the index started from
			idx := filepath.Join(dir, ".git", "index")
			from, err := loadIndex(idx)
			if err != nil {
				t.Fatal(err)
			}
			writeFiles(t, dir, map[string]string{"a/b/new.txt": "new\n", "x/y.txt": "y\n"})
			runGit(t, dir, "add", "a/b/new.txt")
			runGit(t, dir, "rm", "-q", "--cached", "g/h/i.txt")
			runGit(t, dir, "update-index", "--chmod=+x", "q/r.txt")
			runGit(t, dir, "add", "-N", "x/y.txt")
			b, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, ".git", "index.want")
			if err := os.WriteFile(want, b, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := gitCmd(dir, "write-tree")
			cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+want)
			wantTree, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}

			src, err := loadIndex(idx)
			if err != nil {
				t.Fatal(err)
			}
			if err := src.edit(idx, nil, nil, from.parsedIndex); err != nil {
				t.Fatal(err)
			}
			edited, err := loadIndex(idx)
			if err != nil {
				t.Fatal(err)
			}
			root, err := edited.cacheTree()
			if err != nil || root == nil {
				t.Fatalf("the edited index has no cache tree: %v", err)
			}
			if got, want := validNodes(root, ""), []string{"a/d", "m", "m/o"}; !slices.Equal(got, want) {
				t.Errorf("valid nodes %q, want %q", got, want)
			}
			if got := runGit(t, dir, "write-tree"); got+"\n" != string(wantTree) {
				t.Errorf("write-tree = %s, git's own index writes %s", got, wantTree)
			}
		})
	}
	// Indexes that give no trees: each writes .git/index its way.
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, dir string)
	}{
		{"no cache tree (go-git writes no extensions)", func(t *testing.T, dir string) {
			idx := filepath.Join(dir, ".git", "index")
			parsed, err := readIndexFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(idx)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := index.NewEncoder(f).Encode(parsed); err != nil {
				t.Fatal(err)
			}
		}},
		{"a split index (its file holds only some of its entries)", func(t *testing.T, dir string) {
			runGit(t, dir, "update-index", "--split-index")
			writeFiles(t, dir, map[string]string{"a/c.txt": "c\n"})
			runGit(t, dir, "add", "a/c.txt")
			runGit(t, dir, "write-tree")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{"a/b.txt": "b\n"})
			tt.write(t, dir)
			from, err := loadIndex(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := treesAgreeing(from.parsedIndex, nil); ok {
				t.Error("treesAgreeing: ok")
			}
		})
	}
}

// validNodes lists the paths of t's valid nodes below the root.
func validNodes(t *cacheTree, p string) []string {
	var out []string
	for _, s := range t.subs {
		q := s.name
		if p != "" {
			q = p + "/" + s.name
		}
		if s.entries >= 0 {
			out = append(out, q)
		}
		out = append(out, validNodes(s, q)...)
	}
	return out
}
