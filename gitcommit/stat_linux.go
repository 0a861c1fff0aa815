package gitcommit

import (
	"io/fs"
	"strconv"
	"syscall"
)

// sysStatKey adds the inode and ctime to statKey, as git's stat data do.
func sysStatKey(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return " " + strconv.FormatUint(st.Ino, 10) + " " + strconv.FormatInt(st.Ctim.Nano(), 10)
}
