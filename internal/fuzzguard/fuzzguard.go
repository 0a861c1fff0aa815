// Package fuzzguard turns a hang into a fuzz failure: go test -fuzz has no
// per-input time limit, so a parser caught in a loop stalls the run
// instead of saving the input as a crasher.
package fuzzguard

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Limit is how long one input may take; generous, as fuzzing machines are
// often shared and coverage instrumentation is slow.
const Limit = 10 * time.Second

// Within runs f; if f has not returned within Limit, it panics with every
// goroutine's stack, which fails the fuzz run and saves the input.
func Within(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(Limit):
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			panic(fmt.Sprintf("input not handled within %s (a hang?):\n%s", Limit, buf))
		}
	}()
	f()
}
