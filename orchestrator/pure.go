package orchestrator

import (
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// The seam to the pure packages' budget helpers (zones, nudges, redaction,
// the handoff template and checkpoint fields, the CLI's compaction points):
// the policy at the hooks speaks in these small names, the arithmetic and
// the text live in estimator and checkpoint.

const (
	zoneGreen  = string(estimator.ZoneGreen)
	zoneYellow = string(estimator.ZoneYellow)
	zoneRed    = string(estimator.ZoneRed)

	nudgeDoomLoop    = estimator.NudgeDoomLoop
	nudgeExploration = estimator.NudgeExploration
)

type zoneInfo struct {
	zone                    string
	largeReads, delegations int
}

// zoneOf is the session's zone after snap.
func zoneOf(snap estimator.Snapshot, c config.Config) zoneInfo {
	z := estimator.ZoneOf(snap, estimator.ZoneConfig{
		ToolCallsYellow: c.ZoneToolCallsYellow, ToolCallsRed: c.ZoneToolCallsRed,
		LargeReadsYellow: c.ZoneLargeReadsYellow, LargeReadsRed: c.ZoneLargeReadsRed,
		DelegationsYellow: c.ZoneDelegationsYellow, DelegationsRed: c.ZoneDelegationsRed,
	})
	return zoneInfo{zone: string(z), largeReads: snap.LargeReads, delegations: snap.Delegations}
}

type nudge struct {
	kind, tool, args string
	count            int
	restart          bool
}

type nudgeSource interface {
	Observe(ev runner.Event) []nudge
}

type nudger struct{ n *estimator.Nudger }

func (n nudger) Observe(ev runner.Event) []nudge {
	var out []nudge
	for _, nd := range n.n.Observe(ev) {
		out = append(out, nudge{kind: nd.Kind, tool: nd.Tool, args: nd.Args, count: nd.Count, restart: nd.Restart})
	}
	return out
}

func newNudger(c config.Config) nudgeSource {
	return nudger{estimator.NewNudger(estimator.NudgeConfig{
		Repeat: c.NudgeRepeat, RepeatWindow: c.NudgeRepeatWindow, RepeatRestart: c.NudgeRepeatRestart,
		ExploreReads: c.NudgeExploreReads, Cooldown: c.NudgeCooldown,
	})}
}

func redact(s string) string { return checkpoint.Redact(s) }

func handoffTemplate() string { return checkpoint.HandoffTemplate() }

// setHandoff puts the agent's handoff (or why there is none) and the calls
// to avoid into the checkpoint's input; files the handoff names are looked
// up in the work tree at root.
func setHandoff(in *checkpoint.Input, handoff, path, noHandoff string, avoid []string, root string) {
	in.Handoff, in.HandoffPath, in.Avoid = handoff, path, avoid
	if handoff == "" {
		in.NoHandoff = noHandoff
	}
	in.Exists = func(p string) bool {
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		_, err := os.Stat(p)
		return err == nil
	}
}

// cliPoints are the context sizes at which the CLI compacts and refuses
// the prompt as too long, for a window; the max output is not known here.
func cliPoints(window int64) (compact, tooLong int64) { return estimator.CLIPoints(window, 0) }
