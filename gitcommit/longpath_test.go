package gitcommit

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// mkdeep creates dir/<comp>/<comp>/... n levels deep, and a file named
// file at the bottom, through directory descriptors: open(2) refuses a
// path longer than PATH_MAX.
func mkdeep(t *testing.T, dir, comp string, n int, file string) {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	must(t, err)
	for range n {
		must(t, syscall.Mkdirat(fd, comp, 0o755))
		next, err := syscall.Openat(fd, comp, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
		must(t, err)
		syscall.Close(fd)
		fd = next
	}
	f, err := syscall.Openat(fd, file, syscall.O_CREAT|syscall.O_WRONLY, 0o644)
	must(t, err)
	syscall.Write(f, []byte("deep\n"))
	syscall.Close(f)
	syscall.Close(fd)
}

// A file whose path is longer than the system allows (its directory is
// not: git lists it, then fails with "unable to stat") is refused with the
// path, shortened, and what to do, not a raw "file name too long" holding
// 4 KB of path.
func TestLongPathMessage(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	mkdeep(t, dir, strings.Repeat("d", 200), (4095-len(dir)-50)/201, strings.Repeat("f", 255))
	_, err := mustOpen(t, dir).CommitAll("deep")
	t.Logf("CommitAll: %v", err)
	if !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Fatalf("CommitAll: %v, want ENAMETOOLONG", err)
	}
	msg := err.Error()
	if len(msg) > 400 {
		t.Errorf("message is %d bytes long: %s", len(msg), msg)
	}
	for _, want := range []string{"dddd…", "ffff", "shorten", ".gitignore"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
}
