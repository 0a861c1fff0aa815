package fakeexe

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/debussy-dev/debussy/internal/race"
)

var fake Exe

// The probe is this test package run as a fake: it reports whether it has
// the race detector, its argv and its environment's FAKEEXE_PROBE.
func TestMain(m *testing.M) {
	if v := os.Getenv("FAKEEXE_PROBE"); v != "" {
		fmt.Printf("race=%t env=%s args=%q\n", race.Enabled, v, os.Args[1:])
		os.Exit(0)
	}
	os.Exit(fake.Run(m))
}

func TestPathRunsWithoutRace(t *testing.T) {
	path := fake.Path(t)
	if again := fake.Path(t); again != path {
		t.Fatalf("second Path = %q, want the first build %q", again, path)
	}
	cmd := exec.Command(path, "-p", "--output-format", "stream-json", "a b")
	cmd.Env = append(os.Environ(), "FAKEEXE_PROBE=seen")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run fake: %v", err)
	}
	want := `race=false env=seen args=["-p" "--output-format" "stream-json" "a b"]`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("fake said %s, want %s", got, want)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if (path == self) == race.Enabled {
		t.Fatalf("fake is %s, test binary %s (race %t): a race binary should run a separate build", path, self, race.Enabled)
	}
}
