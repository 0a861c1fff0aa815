package runner

import (
	"os"
	"testing"

	"github.com/debussy-dev/debussy/internal/fakeclaude"
)

// The fake claude is this test binary re-executed (internal/fakeclaude).
func TestMain(m *testing.M) {
	if scenario := os.Getenv("FAKE_CLAUDE"); scenario != "" {
		os.Exit(fakeclaude.Main(scenario))
	}
	os.Exit(m.Run())
}
