//go:build unix

package runner

import "golang.org/x/sys/unix"

// mapping is anonymous memory outside the Go heap: the kernel backs a page
// only once it is written, and the GC neither scans nor paces on it.
type mapping struct{ b []byte }

// newMapping returns nil when the system refuses the mapping (address
// space limits); the caller then grows a heap buffer instead.
func newMapping(size int) *mapping {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return &mapping{b: b}
}

func (m *mapping) free() {
	if m.b != nil {
		_ = unix.Munmap(m.b) // fails only for a bad address, which m.b is not
		m.b = nil
	}
}
