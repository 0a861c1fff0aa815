package gitcommit

import (
	"io/fs"
	"path"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// statOf is fi's stat data as fpStat: git's fields.
func statOf(fi fs.FileInfo) fpStat {
	st := fpStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode())}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino, st.ctime, st.mode = s.Ino, s.Ctim.Nano(), s.Mode
	}
	return st
}

// statEach stats every path of byDir (directory → paths in it, relative
// to root) with one open per directory and one fstatat per file, and
// hands each to fn: regular says it is a regular file. A path that cannot
// be stat'ed is handed with the zero fpStat.
func statEach(root string, byDir map[string][]string, fn func(p string, st fpStat, regular bool)) {
	for dir, paths := range byDir {
		fd, err := unix.Open(filepath.Join(root, filepath.FromSlash(dir)), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			for _, p := range paths {
				fn(p, fpStat{}, false)
			}
			continue
		}
		var s unix.Stat_t
		for _, p := range paths {
			if unix.Fstatat(fd, path.Base(p), &s, unix.AT_SYMLINK_NOFOLLOW) != nil {
				fn(p, fpStat{}, false)
				continue
			}
			fn(p, fpStat{size: s.Size, mtime: s.Mtim.Nano(), ctime: s.Ctim.Nano(), ino: s.Ino, mode: s.Mode},
				s.Mode&unix.S_IFMT == unix.S_IFREG)
		}
		unix.Close(fd)
	}
}
