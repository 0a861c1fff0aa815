package policy

import (
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/record"
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

// Recorded is what a run records of its configuration for the policy
// (record.RunStarted's settings), so that its sessions can be replayed at
// the settings they ran under (`debussy tune`).
func Recorded(c config.Config) record.Settings {
	return record.Settings{
		Model: c.Model, MaxRestarts: c.MaxRestarts,
		ToolCallThreshold: c.ToolCallThreshold, Handoff: c.Handoff, HandoffGraceCalls: c.HandoffGraceCalls,
		AllowCompaction: c.AllowCompaction, RequireDoneSignal: c.RequireDoneSignal, ZoneAction: c.ZoneAction,
		Zones: [6]int{c.ZoneToolCallsYellow, c.ZoneToolCallsRed, c.ZoneLargeReadsYellow, c.ZoneLargeReadsRed,
			c.ZoneDelegationsYellow, c.ZoneDelegationsRed},
		Nudges:      [5]int{c.NudgeRepeat, c.NudgeRepeatWindow, c.NudgeRepeatRestart, c.NudgeExploreReads, c.NudgeCooldown},
		Enforcement: c.Budget.Enforcement,
	}
}

// WithRecorded is c with what a run recorded put back: its threshold and
// window (recorded since the first runs), its cap and, when recorded, the
// rest of Recorded. What a run did not record keeps c's value.
func WithRecorded(c config.Config, threshold, window int, maxTokens *int, s *record.Settings) config.Config {
	c.ContextThreshold, c.ContextWindow = threshold, window
	if maxTokens != nil {
		c.ContextMaxTokens = *maxTokens
	}
	if s == nil {
		return c
	}
	c.Model, c.MaxRestarts = s.Model, s.MaxRestarts
	c.ToolCallThreshold, c.Handoff, c.HandoffGraceCalls = s.ToolCallThreshold, s.Handoff, s.HandoffGraceCalls
	c.AllowCompaction, c.RequireDoneSignal, c.ZoneAction = s.AllowCompaction, s.RequireDoneSignal, s.ZoneAction
	z := s.Zones
	c.ZoneToolCallsYellow, c.ZoneToolCallsRed, c.ZoneLargeReadsYellow, c.ZoneLargeReadsRed = z[0], z[1], z[2], z[3]
	c.ZoneDelegationsYellow, c.ZoneDelegationsRed = z[4], z[5]
	n := s.Nudges
	c.NudgeRepeat, c.NudgeRepeatWindow, c.NudgeRepeatRestart, c.NudgeExploreReads, c.NudgeCooldown = n[0], n[1], n[2], n[3], n[4]
	c.Budget.Enforcement = s.Enforcement
	return c
}
