package orchestrator

import (
	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// The seam to the pure packages' budget helpers (zones, nudges, redaction,
// the handoff template and checkpoint fields, the CLI's compaction points).
// TODO(issue 8): these are stand-ins until estimator and checkpoint grow
// the contract's API; then each becomes a one-line call.

// pureReady says the stand-ins below were replaced (tests skip until then).
const pureReady = false

const (
	zoneGreen  = "green"
	zoneYellow = "yellow"
	zoneRed    = "red"

	nudgeDoomLoop    = "doom_loop"
	nudgeExploration = "exploration"
)

type zoneInfo struct {
	zone                    string
	largeReads, delegations int
}

// zoneOf is the session's zone after snap.
func zoneOf(snap estimator.Snapshot) zoneInfo { return zoneInfo{} }

type nudge struct {
	kind, tool, args string
	count            int
	restart          bool
}

type nudgeSource interface {
	Observe(ev runner.Event) []nudge
}

type noNudges struct{}

func (noNudges) Observe(runner.Event) []nudge { return nil }

func newNudger(c config.Config) nudgeSource { return noNudges{} }

func redact(s string) string { return s }

func handoffTemplate() string {
	return "## Completed\n\n## In progress (state, partial outputs, what remains)\n\n## Remaining\n\n## Critical context (decisions, gotchas)\n\n## Resume instructions\n"
}

// setHandoff puts the agent's handoff (or why there is none) and the calls
// to avoid into the checkpoint's input.
func setHandoff(in *checkpoint.Input, handoff, path, noHandoff string, avoid []string) {}

// cliPoints are the context sizes at which the CLI compacts and refuses
// the prompt as too long, for a window.
func cliPoints(window int64) (compact, tooLong int64) {
	return window - 20_000 - 13_000, window * 177 / 200
}
