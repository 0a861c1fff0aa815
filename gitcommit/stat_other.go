//go:build !linux && !darwin

package gitcommit

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// lstat without ctime and inode: the index comparison then rests on size,
// mtime and mode, which is what git does on these systems too.
func lstat(path string) (fileStat, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fileStat{kind: kindMissing}, nil
	}
	if err != nil {
		return fileStat{}, err
	}
	st := fileStat{size: fi.Size(), mtime: fi.ModTime(), exec: fi.Mode().Perm()&0o100 != 0}
	switch m := fi.Mode(); {
	case m.IsRegular():
		st.kind = kindRegular
	case m&fs.ModeSymlink != 0:
		st.kind = kindSymlink
	case m.IsDir():
		st.kind = kindDir
	default:
		st.kind = kindOther
	}
	return st, nil
}
