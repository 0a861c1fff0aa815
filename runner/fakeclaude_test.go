package runner

import (
	"os"
	"testing"

	"github.com/debussy-dev/debussy/internal/fakeclaude"
	"github.com/debussy-dev/debussy/internal/fakeexe"
)

// fake is the program run as claude: this test package re-executed
// (internal/fakeclaude), built without -race under -race (internal/fakeexe).
var fake fakeexe.Exe

func TestMain(m *testing.M) {
	if scenario := os.Getenv("FAKE_CLAUDE"); scenario != "" {
		os.Exit(fakeclaude.Main(scenario))
	}
	os.Exit(fake.Run(m))
}
