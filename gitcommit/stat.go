package gitcommit

import "time"

type fileKind uint8

const (
	kindMissing fileKind = iota // absent, or a parent is not a directory
	kindRegular
	kindSymlink
	kindDir
	kindOther // fifo, socket, device: git ignores them
)

// fileStat is the part of lstat(2) git keeps in the index to tell a changed
// file from an unchanged one without reading it.
type fileStat struct {
	kind         fileKind
	exec         bool // owner executable bit, all git records
	size         int64
	mtime, ctime time.Time
	dev, ino     uint32
	uid, gid     uint32
}
