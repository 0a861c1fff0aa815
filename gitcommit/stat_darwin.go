package gitcommit

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

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
	return fileStat{
		kind:  kindFromMode(uint32(st.Mode)),
		exec:  st.Mode&0o100 != 0,
		size:  st.Size,
		mtime: time.Unix(int64(st.Mtimespec.Sec), int64(st.Mtimespec.Nsec)),
		ctime: time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)),
		dev:   uint32(st.Dev),
		ino:   uint32(st.Ino),
		uid:   st.Uid,
		gid:   st.Gid,
	}, nil
}
