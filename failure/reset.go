package failure

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// AfterReset is when to go on after a limit resets: 5 to 30 s after it.
// The API's clock and ours may differ by seconds (the reset is given in
// whole seconds), and the runs of one account — several phases, several
// machines — should not all ask again in the same second.
func AfterReset(resets time.Time) time.Time {
	return resets.Add(5*time.Second + rand.N(25*time.Second))
}

// ResetClock is a reset time as a person reads it: "19:41 UTC (in
// 1h52m)", with the date when it is not today.
func ResetClock(t, now time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	layout := "15:04 MST"
	if t.Format("2006-01-02") != now.Format("2006-01-02") {
		layout = "Mon Jan 2 15:04 MST"
	}
	in := t.Sub(now).Round(time.Minute)
	switch {
	case t.Sub(now) <= 0:
		return t.Format(layout) + " (passed)"
	case in < time.Minute:
		in = t.Sub(now).Round(time.Second)
	}
	return fmt.Sprintf("%s (in %s)", t.Format(layout), in)
}
