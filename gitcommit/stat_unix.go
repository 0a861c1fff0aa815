//go:build linux || darwin

package gitcommit

import (
	"errors"
	"io/fs"
	"syscall"
)

func kindFromMode(m uint32) fileKind {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return kindRegular
	case syscall.S_IFLNK:
		return kindSymlink
	case syscall.S_IFDIR:
		return kindDir
	}
	return kindOther
}

// lstat calls syscall.Lstat directly: os.Lstat allocates a FileInfo per
// call, which shows when every tracked file is checked on each commit.
func lstat(path string) (fileStat, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		if err == nil {
			break
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return fileStat{kind: kindMissing}, nil
		}
		return fileStat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	mtime, ctime := statTimes(&st)
	return fileStat{
		kind:  kindFromMode(uint32(st.Mode)),
		exec:  st.Mode&0o100 != 0,
		size:  st.Size,
		mtime: mtime,
		ctime: ctime,
		dev:   uint32(st.Dev),
		ino:   uint32(st.Ino),
		uid:   st.Uid,
		gid:   st.Gid,
	}, nil
}
