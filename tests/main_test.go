// Package tests holds debussy's black-box end-to-end tests: the built
// debussy binary and the real claude CLI against the fake Anthropic API in
// tests/fakeapi, working in real temporary git repositories.
package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/debussy-dev/debussy/tests/claudetest"
)

// debussyBin is the debussy binary built once for the whole package.
var debussyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "debussy-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	debussyBin = filepath.Join(dir, "debussy")
	// With the race detector, except on the second CLI (make test-latest):
	// that pass is about what the CLI does, and the pinned pass has already
	// run every flow under -race. It halves debussy's CPU on a 2-core box.
	args := []string{"build", "-race", "-o", debussyBin, ".."}
	if claudetest.SecondCLI() {
		args = slices.Delete(args, 1, 2)
	}
	// make test builds each binary once for its passes (linking one costs
	// about 3 s of CPU, and it ran five times): DEBUSSY_TEST_BIN (race) and
	// DEBUSSY_TEST_BIN_NORACE name them; it must build them from this tree.
	prebuilt := os.Getenv("DEBUSSY_TEST_BIN")
	if claudetest.SecondCLI() {
		prebuilt = os.Getenv("DEBUSSY_TEST_BIN_NORACE")
	}
	if prebuilt != "" {
		debussyBin = prebuilt
	} else {
		build := exec.Command("go", args...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build debussy:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
