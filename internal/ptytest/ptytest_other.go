//go:build !linux

// Package ptytest opens pseudo-terminals for tests of what debussy does on
// a terminal (the live view).
package ptytest

import (
	"os"
	"testing"
)

// Open skips t: only Linux's /dev/ptmx is supported.
func Open(t testing.TB) (master, slave *os.File) {
	t.Helper()
	t.Skip("no pty: ptytest supports Linux only")
	return nil, nil
}
