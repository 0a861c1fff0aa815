package policy

import (
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
)

// ConfigOf maps the run's configuration to a session's policy.
func ConfigOf(c config.Config, phase, handoffPath, root string) Config {
	return Config{
		Phase:             phase,
		ContextThreshold:  c.ContextThreshold,
		ContextMaxTokens:  int64(c.ContextMaxTokens),
		ToolCallThreshold: c.ToolCallThreshold,
		Zones: estimator.ZoneConfig{
			ToolCallsYellow: c.ZoneToolCallsYellow, ToolCallsRed: c.ZoneToolCallsRed,
			LargeReadsYellow: c.ZoneLargeReadsYellow, LargeReadsRed: c.ZoneLargeReadsRed,
			DelegationsYellow: c.ZoneDelegationsYellow, DelegationsRed: c.ZoneDelegationsRed,
		},
		ZoneAction: c.ZoneAction,
		Nudges: estimator.NudgeConfig{
			Repeat: c.NudgeRepeat, RepeatWindow: c.NudgeRepeatWindow, RepeatRestart: c.NudgeRepeatRestart,
			ExploreReads: c.NudgeExploreReads, Cooldown: c.NudgeCooldown,
		},
		Handoff:           c.Handoff,
		HandoffPath:       handoffPath,
		HandoffGraceCalls: c.HandoffGraceCalls,
		MaxRestarts:       c.MaxRestarts,
		RequireDoneSignal: c.RequireDoneSignal,
		AllowCompaction:   c.AllowCompaction,
		Root:              root,
	}
}
