//go:build unix

package gitrun

import "golang.org/x/sys/unix"

// foreground reports whether debussy is the foreground job of its
// controlling terminal: then what it runs may read that terminal only
// from debussy's own process group.
func foreground() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}
