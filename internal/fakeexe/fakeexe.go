// Package fakeexe gives a test package the program its fake subprocesses
// run (the TestHelperProcess pattern: the test binary re-executed, its
// TestMain dispatching on an environment variable). Without -race that is
// the test binary itself. With -race it is a copy of the same test package
// built once without -race: a race-instrumented fake is test scaffolding in
// another process, where the detector can find nothing of debussy's, and it
// was a third of orchestrator's CPU under -race (193 fakes, 34 CPU-seconds
// of the package's 91) in the fakes' instrumented work and the race
// runtime's start-up. Test support only.
package fakeexe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/debussy-dev/debussy/internal/race"
)

// Exe is one test process's fake program, built on first use. Keep one in
// a package variable and end TestMain with os.Exit(fake.Run(m)).
type Exe struct {
	once sync.Once
	pkg  string // the package's directory: TestMain's working directory
	path string
	dir  string
	err  error
}

// Path returns the program to run as the fake. Under -race the first call
// builds it (a few seconds); a failed build fails every test that needs
// it, never falling back to the race-instrumented test binary.
func (e *Exe) Path(t testing.TB) string {
	t.Helper()
	e.once.Do(e.build)
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.path
}

// Run runs the tests, then removes the build, and returns m.Run's code.
// It notes the package's directory first: go test starts the test binary
// there, and a test may change directory (t.Chdir) before the first Path.
func (e *Exe) Run(m *testing.M) int {
	e.pkg, e.err = os.Getwd()
	if e.err != nil {
		e.err = fmt.Errorf("build fake without -race: %w", e.err)
	}
	code := m.Run()
	if e.dir != "" {
		if err := os.RemoveAll(e.dir); err != nil {
			fmt.Fprintf(os.Stderr, "remove fake build: %v\n", err)
		}
	}
	return code
}

func (e *Exe) build() {
	if e.err != nil {
		return
	}
	if !race.Enabled {
		e.path, e.err = os.Executable()
		if e.err != nil {
			e.err = fmt.Errorf("find test binary: %w", e.err)
		}
		return
	}
	var err error
	e.dir, err = os.MkdirTemp("", "fakeexe-")
	if err != nil {
		e.err = fmt.Errorf("build fake without -race: %w", err)
		return
	}
	out := filepath.Join(e.dir, strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")+"-fake.test")
	// -race=false over a GOFLAGS=-race; no vet: the race pass vets the package.
	cmd := exec.Command(goTool(), "test", "-c", "-race=false", "-vet=off", "-o", out, ".")
	cmd.Dir = e.pkg
	if msg, err := cmd.CombinedOutput(); err != nil {
		e.err = fmt.Errorf("build fake without -race in %s: %w\n%s", e.pkg, err, msg)
		return
	}
	e.path = out
}

// goTool is the go command of the toolchain that built the tests, else the
// one on PATH.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
