package gitcommit

import (
	"syscall"
	"time"
)

func statTimes(st *syscall.Stat_t) (mtime, ctime time.Time) {
	return time.Unix(int64(st.Mtimespec.Sec), int64(st.Mtimespec.Nsec)), time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
}
