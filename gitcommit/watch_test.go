package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// After a run's first commit, later commits learn which user files may have
// changed from the watch on their directories, not from a stat each: a
// user file the agent edits, chmods, replaces by a rename, or deletes
// between two commits is seen, also when a directory on the way to it is
// renamed or its own directory replaced; an untouched one stays out.
func TestUserFilesWatchedBetweenCommits(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name    string
		act     func(t *testing.T, dir string)
		changed []string // Commit.Changed of the second commit
	}{
		{"edited", func(t *testing.T, dir string) { write(t, dir, "notes/a/x.txt", "edited\n") }, []string{"notes/a/x.txt"}},
		{"edited beside tracked", func(t *testing.T, dir string) { write(t, dir, "src/mine.txt", "edited\n") }, []string{"src/mine.txt"}},
		{"replaced by a rename", func(t *testing.T, dir string) {
			write(t, dir, "notes/a/tmp", "new\n")
			must(t, os.Rename(filepath.Join(dir, "notes/a/tmp"), filepath.Join(dir, "notes/a/x.txt")))
		}, []string{"notes/a/x.txt"}},
		{"a directory on the way renamed and made again", func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "notes"), filepath.Join(dir, "old")))
			write(t, dir, "notes/a/x.txt", "other\n")
			write(t, dir, "notes/a/y.txt", "y\n") // the old directory, still watched, stays
		}, []string{"notes/a/x.txt"}},
		{"untouched", func(t *testing.T, dir string) { write(t, dir, "src/tracked.go", "package b\n") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := committedRepo(t, map[string]string{"src/tracked.go": "package a\n"})
			write(t, dir, "notes/a/x.txt", "the user's\n")
			write(t, dir, "notes/a/y.txt", "y\n")
			write(t, dir, "src/mine.txt", "mine\n")
			r := mustOpen(t, dir)
			files, err := r.Untracked(context.Background())
			if err != nil || len(files) != 3 {
				t.Fatalf("Untracked: %v, %v", files, err)
			}
			write(t, dir, "src/tracked.go", "package a // 1\n")
			first, err := r.CommitAll(context.Background(), "one", Exclude(files, nil))
			if err != nil || len(first.Changed) != 0 {
				t.Fatalf("first commit: %+v, %v", first, err)
			}
			if r.watch == nil {
				t.Log("no inotify here: every look is whole")
			}
			tc.act(t, dir)
			write(t, dir, "src/tracked.go", "package a // 2\n")
			second, err := r.CommitAll(context.Background(), "two", Exclude(files, nil))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(second.Changed, tc.changed) {
				t.Errorf("second commit's Changed = %v, want %v", second.Changed, tc.changed)
			}
			tree := runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
			for _, p := range []string{"notes/a/y.txt"} {
				if slices.Contains(strings.Split(tree, "\n"), p) {
					t.Errorf("the user's untouched %s was committed:\n%s", p, tree)
				}
			}
		})
	}
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(content), 0o644))
}
