package orchestrator

import (
	"strings"
	"testing"
	"time"
)

func TestUsageLimitError(t *testing.T) {
	now := time.Date(2026, 11, 25, 17, 49, 0, 0, time.UTC)
	e := &UsageLimitError{Phase: "2", Limit: "seven_day", Resets: now.Add(50 * time.Hour), Wait: 6 * time.Hour, Now: now}
	for _, want := range []string{"phase 2", "weekly limit reached", "Fri Nov 27 19:49 UTC (in 50h0m0s)", "usage_limit_wait (6h0m0s)", "run the same command after the reset"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
}
