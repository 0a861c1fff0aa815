package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Everything under .debussy/ is its owner's only: checkpoints, handoffs,
// events and the raw streams hold what the agent saw, and a shared
// machine's other users must not read them.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// MkdirPrivate creates dir and its missing parents with DirMode.
func MkdirPrivate(dir string) error { return os.MkdirAll(dir, DirMode) }

// WriteFile writes data to path with FileMode, creating its directory; a
// file that exists with a looser mode is tightened (os.WriteFile keeps an
// existing file's mode).
func WriteFile(path string, data []byte) error {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, FileMode); err != nil {
		return err
	}
	return os.Chmod(path, FileMode)
}

// OpenAppend opens path for appending with FileMode, creating it and its
// directory, and tightens a file that exists with a looser mode.
func OpenAppend(path string) (*os.File, error) {
	if err := MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, FileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(FileMode); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Tighten gives dir DirMode and every directory and regular file under it
// DirMode and FileMode: a .debussy/ written by an earlier version (0755,
// 0644) is made private on the next run. The phases' worktrees are the
// user's checkouts, with their own modes, and are left alone.
func (s *Store) Tighten() error {
	var errs []error
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			errs = append(errs, err)
			return nil
		}
		if d.IsDir() && path == filepath.Join(s.Dir, "worktrees") {
			return fs.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		want := FileMode
		switch {
		case d.IsDir():
			want = DirMode
		case !info.Mode().IsRegular():
			return nil // a symlink, a socket: not ours to chmod
		}
		if info.Mode().Perm() != want {
			if err := os.Chmod(path, want); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return nil
	})
	if err := errors.Join(append(errs, err)...); err != nil {
		return fmt.Errorf("tighten %s: %w", s.Dir, err)
	}
	return nil
}
