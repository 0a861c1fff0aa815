package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/plans"
)

// A gate whose program is missing fails the phase as a setup problem that
// names the program and how to replace the command.
func TestMissingError(t *testing.T) {
	res := gate.Run(context.Background(), t.TempDir(), nil, plans.Gate{Name: "lint", Command: "no-such-tool-for-debussy ."}, time.Minute)
	err := missingError("2", res)
	if !errors.Is(err, ErrSetup) || !errors.Is(err, ErrPhaseFailed) || !strings.Contains(err.Error(), "gate_commands") ||
		!strings.Contains(err.Error(), "install no-such-tool-for-debussy") {
		t.Errorf("error %v: want ErrSetup naming the program and gate_commands", err)
	}
}
