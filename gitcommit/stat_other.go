//go:build !linux

package gitcommit

import (
	"io/fs"
	"os"
	"path/filepath"
)

// statOf is fi's stat data as fpStat, as far as is portable.
func statOf(fi fs.FileInfo) fpStat {
	return fpStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode())}
}

// statEach stats every path of byDir with a plain lstat each.
func statEach(root string, byDir map[string][]string, fn func(p string, st fpStat, regular bool)) {
	for _, paths := range byDir {
		for _, p := range paths {
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
			if err != nil {
				fn(p, fpStat{}, false)
				continue
			}
			fn(p, statOf(fi), fi.Mode().IsRegular())
		}
	}
}
