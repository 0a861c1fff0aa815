package failure

import (
	"testing"
	"time"
)

func TestResetClock(t *testing.T) {
	now := time.Date(2026, 11, 25, 17, 49, 0, 0, time.UTC)
	tests := []struct {
		t    time.Time
		want string
	}{
		{now.Add(112 * time.Minute), "19:41 UTC (in 1h52m0s)"},
		{now.Add(25 * time.Second), "17:49 UTC (in 25s)"},
		{now.Add(-3 * time.Second), "17:48 UTC (passed)"},
		{now.Add(30 * time.Hour), "Thu Nov 26 23:49 UTC (in 30h0m0s)"},
		{time.Time{}, "an unknown time"},
	}
	for _, tt := range tests {
		if got := ResetClock(tt.t, now); got != tt.want {
			t.Errorf("ResetClock(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestAfterReset(t *testing.T) {
	resets := time.Date(2026, 11, 25, 19, 41, 0, 0, time.UTC)
	for range 200 {
		if d := AfterReset(resets).Sub(resets); d < 5*time.Second || d > 30*time.Second {
			t.Fatalf("afterReset waits %s past the reset, want 5-30 s", d)
		}
	}
}
