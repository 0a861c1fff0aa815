package estimator

import (
	"strings"

	"github.com/debussy-dev/debussy/event"
)

// A large read is a Read result over LargeReadLines lines or
// LargeReadBytes bytes (seed context budget protocol): a few of them fill
// a context faster than many small calls.
const (
	LargeReadLines = 200
	LargeReadBytes = 20 << 10
)

// Zone is how much of its budget a session has used, by the seed context
// budget protocol's counts rather than by tokens.
type Zone string

const (
	ZoneGreen  Zone = "green"
	ZoneYellow Zone = "yellow"
	ZoneRed    Zone = "red"
)

// ZoneConfig holds the yellow and red thresholds of each count; 0
// disables a threshold.
type ZoneConfig struct {
	ToolCallsYellow, ToolCallsRed     int
	LargeReadsYellow, LargeReadsRed   int
	DelegationsYellow, DelegationsRed int
}

// ZoneOf is red if any count reached its red threshold, yellow if any
// reached its yellow one, green otherwise.
func ZoneOf(s Snapshot, c ZoneConfig) Zone {
	counts := []struct{ n, yellow, red int }{
		{s.ToolCalls, c.ToolCallsYellow, c.ToolCallsRed},
		{s.LargeReads, c.LargeReadsYellow, c.LargeReadsRed},
		{s.Delegations, c.DelegationsYellow, c.DelegationsRed},
	}
	z := ZoneGreen
	for _, k := range counts {
		switch {
		case k.red > 0 && k.n >= k.red:
			return ZoneRed
		case k.yellow > 0 && k.n >= k.yellow:
			z = ZoneYellow
		}
	}
	return z
}

// largeRead reports whether a Read result is large. The runner keeps only
// the head of a long result, so its lines are scaled up to the full length.
func largeRead(tr event.ToolResult) bool {
	content, fullLen := tr.Content, max(tr.Size(), len(tr.Content))
	if fullLen > LargeReadBytes {
		return true
	}
	lines := strings.Count(strings.TrimRight(content, "\n"), "\n")
	if content != "" {
		lines++
	}
	if len(content) > 0 && fullLen > len(content) {
		lines = lines * fullLen / len(content)
	}
	return lines > LargeReadLines
}

// The CLI's own limits, measured on claude 2.1.197 against the fake API
// (../shared/docs/claude-cli.md, "Auto-compaction"): it compacts at
// window − min(max output, 20K) − 13K (167K of a 200K window) and, with
// compaction off, refuses the prompt as too long from about 177K of 200K.
const (
	cliOutputReserve  = 20_000
	cliCompactReserve = 13_000
	cliTooLongPer200K = 177
)

// CLIPoints are the context sizes at which the CLI compacts the
// conversation and refuses the prompt as too long, for a window.
// maxOutput ≤ 0 means unknown and reserves the CLI's 20K cap.
func CLIPoints(window, maxOutput int64) (compact, tooLong int64) {
	reserve := int64(cliOutputReserve)
	if maxOutput > 0 && maxOutput < reserve {
		reserve = maxOutput
	}
	return window - reserve - cliCompactReserve, window * cliTooLongPer200K / 200
}

// CompactionPoints are CLIPoints with the CLI's own numbers when it
// answered get_context_usage: then compact is its compaction point, 0 when
// it said it will not compact on its own (no autocompact buffer). Without
// an answer they are CLIPoints of the window in use.
func CompactionPoints(s Snapshot) (compact, tooLong int64) {
	compact, tooLong = CLIPoints(s.Window, 0) // the max output is not known here
	if s.CLIWindow > 0 {
		compact = s.CLICompactAt
	}
	return compact, tooLong
}
