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
	"strings"
	"sync"
	"testing"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/tests/claudetest"
)

// debussyBin is the debussy binary built once for the whole package, and
// raceBin the same built with -race (see raceBinary for which runs use it).
var (
	debussyBin string
	binDirs    string // where TestMain builds them, removed at its end
	raceBin    = sync.OnceValues(buildRace)
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "debussy-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	binDirs = dir
	// make test builds each binary once for all its jobs (linking one
	// costs about 3 s of CPU, and each test is a job): DEBUSSY_TEST_BIN_NORACE
	// and DEBUSSY_TEST_BIN (-race) name them; it must build them from this tree.
	debussyBin = os.Getenv("DEBUSSY_TEST_BIN_NORACE")
	for _, v := range []string{"DEBUSSY_TEST_BIN_NORACE", "DEBUSSY_TEST_BIN"} {
		// debussy puts its own directory on the agent's PATH: under
		// another name, every `debussy done` would be "command not found".
		if bin := os.Getenv(v); bin != "" && filepath.Base(bin) != "debussy" {
			fmt.Fprintf(os.Stderr, "%s=%s: the binary must be named debussy\n", v, bin)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	if debussyBin == "" {
		debussyBin = filepath.Join(dir, "plain", "debussy")
		if err := build(debussyBin); err != nil {
			fmt.Fprintln(os.Stderr, "build debussy:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds debussy at out (each binary in its own directory, named
// debussy: the agent's `debussy done` finds it on PATH there).
func build(out string, flags ...string) error {
	cmd := exec.Command("go", slices.Concat([]string{"build"}, flags, []string{"-o", out, ".."})...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// buildRace returns the -race build, made the first time a test needs it.
func buildRace() (string, error) {
	if bin := os.Getenv("DEBUSSY_TEST_BIN"); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(binDirs, "race", "debussy")
	if err := build(bin, "-race"); err != nil {
		return "", fmt.Errorf("build debussy -race: %w", err)
	}
	return bin, nil
}

// raceBinary is the debussy a run uses when debussy's own goroutines meet
// in ways its packages' -race tests cannot stage: several phases at once
// (--parallel), and a run the test acts on while it goes (signals, kills,
// a second command; tests start those with h.command), or that an outside
// driver starts alongside others (binDir). Every other run uses the plain
// build: there debussy's concurrency is its packages', all tested under
// -race, and the detector cost 18 % of the end-to-end tests' CPU (six
// tests: 40.6 s against 33.4 s). On a second CLI (DEBUSSY_TEST_SECOND_CLI),
// a pass about what the CLI does, every run uses the plain build.
func raceBinary(t testing.TB) string {
	t.Helper()
	if claudetest.SecondCLI() {
		return debussyBin
	}
	bin, err := raceBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binaryFor is the debussy for `debussy args...` run to its end by h.run:
// the race build when the run may start phases at once, by its flag or by
// its configuration (.debussy.yaml, DEBUSSY_PARALLEL), as debussy reads it.
func (h *harness) binaryFor(args []string) string {
	h.t.Helper()
	flag := slices.ContainsFunc(args, func(a string) bool {
		return strings.TrimLeft(a, "-") == "parallel" || strings.HasPrefix(strings.TrimLeft(a, "-"), "parallel=")
	})
	if cfg, _, err := config.Load(h.Repo, "", h.Env); flag || err == nil && cfg.Parallel > 1 {
		return raceBinary(h.t)
	}
	return debussyBin
}
