package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
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
			r, files := openRun(t, dir)
			if len(files) != 3 {
				t.Fatalf("Untracked: %v", files)
			}
			write(t, dir, "src/tracked.go", "package a // 1\n")
			first, err := r.CommitAll(context.Background(), "one", Exclude(files, nil))
			if err != nil || len(first.Changed) != 0 {
				t.Fatalf("first commit: %+v, %v", first, err)
			}
			if r.watch == nil && runtime.GOOS == "linux" {
				t.Fatal("no watch after the first commit: every later one stats each user file")
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

// The watch itself, without a commit's full looks around it: what it
// names after a write, a chmod and a new file; that it names nothing when
// nothing happened; and that it cannot vouch once a directory on the way
// is renamed.
func TestUserWatchNames(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	dir := t.TempDir()
	for _, p := range []string{"notes/a/x.txt", "notes/a/y.txt", "src/mine.txt"} {
		write(t, dir, p, "v1\n")
	}
	user := []string{"notes/a/x.txt", "notes/a/y.txt", "src/mine.txt"}
	w := newUserWatch(dir, map[string][]string{"notes/a": user[:2], "src": user[2:]})
	if w == nil {
		t.Fatal("newUserWatch: nil")
	}
	last := map[string]fingerprintResult{}
	for _, p := range user {
		last[p] = fingerprintResult{fp: "v1", present: true}
	}
	w.looked(last)
	if dirty, ok := w.changed(user); !ok || len(dirty) != 0 {
		t.Fatalf("nothing happened: %v, %v", dirty, ok)
	}
	write(t, dir, "notes/a/x.txt", "v2\n")
	must(t, os.Chmod(filepath.Join(dir, "src/mine.txt"), 0o600))
	write(t, dir, "notes/a/new.txt", "n\n")
	dirty, ok := w.changed(user)
	if !ok || !dirty["notes/a/x.txt"] || !dirty["src/mine.txt"] || dirty["notes/a/y.txt"] {
		t.Fatalf("after a write and a chmod: %v, %v", dirty, ok)
	}
	must(t, os.Rename(filepath.Join(dir, "notes"), filepath.Join(dir, "old")))
	if _, ok := w.changed(user); ok {
		t.Fatal("a directory on the way renamed: the watch still vouched")
	}
}

// A directory of user files that is gone when the watch is set does not
// turn the watch off: its paths are looked at each time, the others only
// when named.
func TestUserWatchWithADirectoryGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	dir := t.TempDir()
	write(t, dir, "notes/x.txt", "v1\n")
	user := []string{"notes/x.txt", "gone/y.txt"}
	w := newUserWatch(dir, map[string][]string{"notes": user[:1], "gone": user[1:]})
	if w == nil {
		t.Fatal("newUserWatch: nil with one directory gone")
	}
	w.looked(map[string]fingerprintResult{"notes/x.txt": {fp: "v1", present: true}, "gone/y.txt": {}})
	dirty, ok := w.changed(user)
	if !ok || !dirty["gone/y.txt"] || dirty["notes/x.txt"] {
		t.Fatalf("changed = %v, %v; want gone/y.txt alone", dirty, ok)
	}
}
