package procgroup

import "golang.org/x/sys/unix"

// waitExited blocks until process pid has exited without reaping it, so
// its pid (and group id) stays reserved while the group is signalled.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}
