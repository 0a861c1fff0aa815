//go:build linux || darwin

package gitcommit

import "syscall"

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
