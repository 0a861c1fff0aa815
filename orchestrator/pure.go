package orchestrator

import (
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
)

// Adapters to the pure packages' budget helpers (zones, nudges, the
// checkpoint's handoff fields): config's settings mapped to estimator's and
// checkpoint's; the arithmetic and the text live there.

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
