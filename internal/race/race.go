//go:build race

// Package race says whether the program was built with the race detector,
// for tests that size their work or their subprocesses by it.
package race

// Enabled is true in a -race build.
const Enabled = true
