package orchestrator

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/debussy-dev/debussy/state"
)

// assertPrivate fails t unless every directory under a run's .debussy/
// is 0700 and every file 0600 (the phases' worktrees aside: they are the
// user's checkouts).
func assertPrivate(t *testing.T, dir string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(dir, "worktrees") {
			return fs.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := state.FileMode
		if d.IsDir() {
			want = state.DirMode
		} else if !info.Mode().IsRegular() {
			return nil
		} else {
			files++
		}
		if got := info.Mode().Perm(); got != want {
			rel, _ := filepath.Rel(dir, path)
			t.Errorf(".debussy/%s has mode %#o, want %#o", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Errorf("no file under %s", dir)
	}
}
