package orchestrator

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

const (
	// maxHandoffBytes bounds what is read of a handoff file; the
	// checkpoint bounds it again.
	maxHandoffBytes = 64 << 10
	// maxNudges bounds the nudges a phase keeps in the ledger.
	maxNudges = 100
)

// driver carries one session's policy (package policy decides) to the
// session and the ledger: it gathers the facts a decision needs, performs
// the effects the policy returns, and runs the handoff's and the duration
// budgets' timers.
type driver struct {
	r    *orun
	p    *phaseRun
	pe   *phaseEcon // the phase's economics, fixed for the session: read without the run lock
	n    int        // session number
	cfg  config.Config
	sess *runner.Session
	pol  *policy.Policy

	handoffPath string // absolute
	// turn is the session's main-thread responses so far: events carry
	// it so a report can mark them on the context curve.
	turn      int
	grace     *time.Timer
	econTimer *time.Timer // the duration budgets' next level (economics.go)
}

func (r *orun) newDriver(p *phaseRun, n int, sess *runner.Session) *driver {
	dir := r.Store.PhaseDir(r.id, p.ph.ID)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	c := r.cfg
	d := &driver{r: r, p: p, pe: r.phaseEcon(p), n: n, cfg: c, sess: sess,
		handoffPath: filepath.Join(dir, fmt.Sprintf("handoff-%d.md", n))}
	d.pol = policy.New(policyConfig(c, p.ph.ID, d.handoffPath, p.repo.Root()), p.undelivered)
	p.undelivered = nil
	return d
}

// policyConfig maps the run's configuration to a session's policy.
func policyConfig(c config.Config, phase, handoffPath, root string) policy.Config {
	return policy.Config{
		Phase:             phase,
		ContextThreshold:  c.ContextThreshold,
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

// stopping reports whether the session is ending for debussy's stop.
func (d *driver) stopping() bool { return d.pol.StopReason() != "" }

// graceC fires when the handoff's time is up; nil when no handoff is due.
func (d *driver) graceC() <-chan time.Time {
	if d.grace == nil || !d.pol.GraceDue() {
		return nil
	}
	return d.grace.C
}

func (d *driver) close() {
	if d.grace != nil {
		d.grace.Stop()
	}
	if d.econTimer != nil {
		d.econTimer.Stop()
	}
}

func (d *driver) fields(m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m["phase"], m["session"], m["turn"] = d.p.ph.ID, d.n, d.turn
	return m
}

// observe feeds one stream event to the policy, before any hook on it is
// answered, and performs what it decided.
func (d *driver) observe(ev runner.Event, snap estimator.Snapshot) {
	d.turn = snap.Messages
	d.pol.Observe(ev, snap)
	d.apply()
}

// answer replies to one hook call from memory and facts on disk: it takes
// no lock and performs no effect (apply does, under the run's lock), so a
// phase committing or merging under --parallel never delays another
// phase's answer. Every call is answered exactly once.
func (d *driver) answer(h *runner.HookCall) {
	switch h.Event {
	case runner.HookPreToolUse:
		c := policy.CallOf(h)
		h.Answer(d.pol.PreToolUse(c, d.budgetRefusal(c)))
	case runner.HookPostToolUse:
		c := policy.CallOf(h)
		if d.pol.WantsHandoffSize() {
			if fi, err := os.Stat(d.handoffPath); err == nil {
				c.HandoffBytes = fi.Size()
			}
		}
		if c.IsDoneCommand() {
			c.Signalled = d.signalled()
		}
		h.Answer(d.pol.PostToolUse(c))
	case runner.HookStop:
		h.Answer(d.pol.Stop(h.StopHookActive, d.signalled()))
	case runner.HookPreCompact:
		h.Answer(d.pol.PreCompact(h.Trigger))
	default:
		h.Answer(runner.HookAnswer{})
	}
}

// signalled reports whether `debussy done` left a signal for the phase; an
// unreadable one counts (the phase loop reports it).
func (d *driver) signalled() bool {
	sig, err := d.r.Store.ReadSignal(d.r.id, d.p.ph.ID)
	return err != nil || sig != nil
}

// graceExpired is the handoff's time running out.
func (d *driver) graceExpired() {
	d.pol.GraceExpired(d.cfg.HandoffGraceTime.String())
	d.apply()
}

// apply performs the policy's effects: the ledger, events, the log, and
// the runner's fallback stop.
func (d *driver) apply() {
	r, p := d.r, d.p
	for _, e := range d.pol.Effects() {
		switch e.Kind {
		case policy.EffStop:
			p.lastTrigger = r.now()
			reason := str(e.Fields["reason"])
			switch trig := estimator.Trigger(str(e.Fields["trigger"])); {
			case !threshold(trig):
				r.log.Warn("stopping the session at the next safe point", "phase", p.ph.ID, "reason", reason)
			case len(d.sess.InFlight()) > 0:
				r.log.Warn("threshold crossed: stopping after the running tool", "phase", p.ph.ID, "reason", reason)
			default:
				r.log.Warn("threshold crossed: stopping at the next safe point", "phase", p.ph.ID, "reason", reason)
			}
			d.sess.RequestStop(reason)
		case policy.EffZone:
			z := fmt.Sprint(e.Fields["zone"])
			p.rec.Zone = z
			if k := len(p.rec.Zones); k > 0 {
				p.rec.Zones[k-1] = z
			}
		case policy.EffNudge:
			if len(p.rec.Nudges) < maxNudges {
				p.rec.Nudges = append(p.rec.Nudges, state.Nudge{Session: d.n, Kind: str(e.Fields["kind"]), Tool: str(e.Fields["tool"]),
					Args: str(e.Fields["args"]), Count: num(e.Fields["count"]), Restart: e.Fields["restart"] == true, At: r.now()})
			}
		case policy.EffHandoffWritten:
			p.rec.Handoffs = append(p.rec.Handoffs, d.handoffPath)
		case policy.EffNoHandoff:
			p.rec.Emergencies++
		case policy.EffHandoffDir:
			if err := os.MkdirAll(filepath.Dir(d.handoffPath), 0o755); err != nil {
				r.log.Warn("create the handoff's directory", "err", err)
			}
		}
		if e.Event != "" {
			r.event(e.Event, d.fields(redactFields(e.Fields)))
		}
		d.log(e)
		if e.Kind == policy.EffZone {
			_ = r.save() // live in `debussy status --json`; the session's end saves again
		}
	}
	if d.pol.GraceDue() && d.grace == nil {
		d.grace = time.NewTimer(time.Duration(d.cfg.HandoffGraceTime))
	}
}

func (d *driver) log(e policy.Effect) {
	if e.Log == "" || e.Level == policy.LevelNone {
		return
	}
	kv := []any{"phase", d.p.ph.ID}
	for _, k := range []string{"zone", "kind", "tool", "args", "count", "tool_calls", "large_reads", "delegations", "percent", "reason", "path", "trigger"} {
		if v, ok := e.Fields[k]; ok {
			kv = append(kv, k, v)
		}
	}
	switch e.Level {
	case policy.LevelWarn:
		d.r.log.Warn(e.Log, kv...)
	case policy.LevelInfo:
		d.r.log.Info(e.Log, kv...)
	default:
		d.r.log.Debug(e.Log, kv...)
	}
}

// redactFields redacts the text a decision records (a note quotes the
// agent's calls).
func redactFields(m map[string]any) map[string]any {
	for k, v := range m {
		if s, ok := v.(string); ok {
			m[k] = checkpoint.Redact(s)
		}
	}
	return m
}

// threshold reports whether trig is one of the session's thresholds
// (rather than a budget, a loop or a compaction).
func threshold(trig estimator.Trigger) bool {
	return trig == estimator.TriggerContext || trig == estimator.TriggerToolCalls || trig == policy.TriggerZone
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int {
	n, _ := v.(int)
	return n
}

// readHandoff is the handoff's content for the checkpoint, bounded.
func readHandoff(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxHandoffBytes))
	return string(data)
}

// warnCompactionPoint warns, once per phase, when context_threshold lies
// above the point where the CLI compacts the conversation or refuses the
// prompt as too long for this window: the restart would come too late.
func (r *orun) warnCompactionPoint(p *phaseRun, snap estimator.Snapshot) {
	if p.pointsChecked || snap.Window <= 0 || r.cfg.ContextThreshold >= 100 {
		return
	}
	p.pointsChecked = true
	at := snap.Window * int64(r.cfg.ContextThreshold) / 100
	compact, tooLong := estimator.CLIPoints(snap.Window, 0) // the max output is not known here
	switch {
	case at >= tooLong:
		r.log.Warn("context_threshold lies above the point where claude refuses the prompt as too long: sessions will fail before debussy restarts them; lower context_threshold",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "too_long_at", estimator.FormatTokens(tooLong))
	case at >= compact && r.cfg.AllowCompaction:
		r.log.Warn("context_threshold lies above claude's own compaction point: claude will compact before debussy restarts the session",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "compacts_at", estimator.FormatTokens(compact))
	case at >= compact:
		r.log.Warn("context_threshold lies above claude's own compaction point; debussy blocks that compaction (allow_compaction: false)",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "compacts_at", estimator.FormatTokens(compact))
	}
}
