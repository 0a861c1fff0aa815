package orchestrator

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

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
	// mu guards the policy, the estimator and the budget fields the hooks
	// read (pe.action, left, scope, written) between the session's reader,
	// which answers hooks (follow.go), and the phase's loop. It is never
	// held across I/O or the run's lock.
	mu   sync.Mutex
	r    *orun
	p    *phaseRun
	pe   *phaseEcon // the phase's economics, fixed for the session: read without the run lock
	n    int        // session number
	cfg  config.Config
	sess *runner.Session
	pol  *policy.Policy
	est  *estimator.Estimator

	handoffPath string               // absolute
	specModel   string               // the --model the session started with (cliAnswers' key)
	known       *runner.KnownContext // the run's answer it started with, nil when it asked
	// deferred is the ledger's changes, decided on the reader and made
	// by the phase's loop under the run's lock; d.mu.
	deferred []func()
	activity string // what the agent is doing, as last saved; d.mu
	// turn is the session's main-thread responses so far: events carry
	// it so a report can mark them on the context curve; d.mu.
	turn      int
	grace     *time.Timer
	econTimer *time.Timer // the duration budgets' next level (economics.go)
}

func (r *orun) newDriver(p *phaseRun, n int, sess *runner.Session) *driver {
	// The same path `debussy handoff` writes to (state.Store.HandoffPath),
	// absolute: the agent is told it.
	handoff := r.Store.HandoffPath(r.id, p.ph.ID, n)
	if abs, err := filepath.Abs(handoff); err == nil {
		handoff = abs
	}
	c := r.cfg
	d := &driver{r: r, p: p, pe: r.phaseEcon(p), n: n, cfg: c, sess: sess, handoffPath: handoff}
	d.pol = policy.New(policyConfig(c, p.ph.ID, d.handoffPath, p.repo.Root()), p.undelivered)
	p.undelivered = nil
	if p.rec.Economics != nil {
		d.activity = p.rec.Economics.Progress
	}
	return d
}

// later queues f for the phase's loop (d.mu held).
func (d *driver) later(f func()) { d.deferred = append(d.deferred, f) }

// policyConfig maps the run's configuration to a session's policy.
func policyConfig(c config.Config, phase, handoffPath, root string) policy.Config {
	return policy.Config{
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

// locked runs f with the policy's lock held.
func (d *driver) locked(f func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f()
}

// stopping reports whether the session is ending for debussy's stop.
func (d *driver) stopping() (yes bool) {
	d.locked(func() { yes = d.pol.StopReason() != "" })
	return yes
}

// zone is the session's zone.
func (d *driver) zone() (z estimator.Zone) {
	d.locked(func() { z = d.pol.Zone() })
	return z
}

// graceC fires when the handoff's time is up; nil when no handoff is due.
func (d *driver) graceC() <-chan time.Time {
	var due bool
	d.locked(func() { due = d.pol.GraceDue() })
	if d.grace == nil || !due {
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

// fieldsMap is an effect's fields as the event log takes them, keyed by
// their json tags: a whole number as an int64 (exact beyond a float's
// 2^53), any other as a float64, which the log rounds (state.Clean) as it
// did the percent when the policy handed over a map.
func fieldsMap(f policy.Fields) (map[string]any, error) {
	data, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = i
			} else {
				m[k], _ = n.Float64()
			}
		}
	}
	return m, nil
}

// see folds one stream event into the estimator, the policy and the
// budgets and, for a hook call, answers it; on the session's reader, in
// stream order, so every answer is decided with all the events before it.
// It takes only d.mu: records are appended, and the ledger's changes wait
// for the phase's loop (apply), so a phase committing or merging under
// --parallel never delays another phase's answer.
func (d *driver) see(ev runner.Event) estimator.Snapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	snap := d.est.Observe(ev)
	d.turn = snap.Messages
	d.pol.Observe(ev, snap)
	d.observeEconomics(ev)
	if ev.Kind == runner.KindHook && ev.Hook != nil {
		d.answer(ev.Hook)
	}
	d.perform()
	return snap
}

// answer replies to one hook call from memory and facts on disk (d.mu
// held). Every call is answered exactly once.
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
		if c.IsHandoffCommand() {
			c.HandedOff = d.handedOff()
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

// handedOff reports whether `debussy handoff` left a signal for this very
// session: an earlier session's names another handoff file.
func (d *driver) handedOff() bool {
	sig, err := d.r.Store.ReadHandoffSignal(d.r.id, d.p.ph.ID)
	if err != nil {
		d.r.log.Warn("read the agent's handoff signal", "phase", d.p.ph.ID, "err", err)
	}
	return sig != nil && sig.Session == d.n
}

// graceExpired is the handoff's time running out.
func (d *driver) graceExpired() {
	d.locked(func() { d.pol.GraceExpired(d.cfg.HandoffGraceTime.String()) })
	d.apply()
}

// perform does what the policy decided (d.mu held): it records and logs
// each decision now, in stream order with the runner's own marks, asks the
// runner for its fallback stop, and queues the ledger's changes for the
// phase's loop (apply), which holds the run's lock.
func (d *driver) perform() {
	r, p := d.r, d.p
	for _, e := range d.pol.Effects() {
		switch e.Kind {
		case policy.EffStop:
			at, reason := r.now(), e.Stop.Reason
			switch trig := e.Stop.Trigger; {
			case !threshold(trig):
				r.log.Warn("stopping the session at the next safe point", "phase", p.ph.ID, "reason", reason)
			case len(d.sess.InFlight()) > 0:
				r.log.Warn("threshold crossed: stopping after the running tool", "phase", p.ph.ID, "reason", reason)
			default:
				r.log.Warn("threshold crossed: stopping at the next safe point", "phase", p.ph.ID, "reason", reason)
			}
			d.sess.RequestStop(reason)
			d.later(func() { p.lastTrigger = at })
		case policy.EffZone:
			z := string(e.Zone)
			d.later(func() {
				p.rec.Zone = z
				if k := len(p.rec.Zones); k > 0 {
					p.rec.Zones[k-1] = z
				}
				_ = r.save() // live in `debussy status --json`; the session's end saves again
			})
		case policy.EffNudge:
			nd := state.Nudge{Session: d.n, Kind: e.Nudge.Kind, Tool: e.Nudge.Tool,
				Args: e.Nudge.Args, Count: e.Nudge.Count, Restart: e.Nudge.Restart, At: r.now()}
			d.later(func() {
				if len(p.rec.Nudges) < maxNudges {
					p.rec.Nudges = append(p.rec.Nudges, nd)
				}
			})
		case policy.EffHandoffWritten:
			d.later(func() { p.rec.Handoffs = append(p.rec.Handoffs, d.handoffPath) })
		case policy.EffNoHandoff:
			d.later(func() { p.rec.Emergencies++ })
		case policy.EffHandoffDir:
			if err := state.MkdirPrivate(filepath.Dir(d.handoffPath)); err != nil {
				r.log.Warn("create the handoff's directory", "err", err)
			}
		}
		if e.Event != "" {
			if m, err := fieldsMap(e.Fields); err != nil {
				r.log.Warn("write events log", "event", e.Event, "err", err)
			} else {
				r.event(e.Event, d.fields(m)) // the event log redacts what it writes
			}
		}
		d.log(e)
	}
}

// apply brings the ledger up to date with what the session decided (the
// phase's loop, under the run's lock) and starts the handoff's timer when
// a handoff became due.
func (d *driver) apply() {
	var (
		due      bool
		deferred []func()
	)
	d.locked(func() {
		d.perform()
		due, deferred = d.pol.GraceDue(), d.deferred
		d.deferred = nil
	})
	for _, f := range deferred {
		f()
	}
	if due && d.grace == nil {
		d.grace = time.NewTimer(time.Duration(d.cfg.HandoffGraceTime))
	}
}

func (d *driver) log(e policy.Effect) {
	if e.Log == "" || e.Level == policy.LevelNone {
		return
	}
	kv := append([]any{"phase", d.p.ph.ID}, e.Fields.LogAttrs()...)
	switch e.Level {
	case policy.LevelWarn:
		d.r.log.Warn(e.Log, kv...)
	case policy.LevelInfo:
		d.r.log.Info(e.Log, kv...)
	default:
		d.r.log.Debug(e.Log, kv...)
	}
}

// threshold reports whether trig is one of the session's thresholds
// (rather than a budget, a loop or a compaction).
func threshold(trig estimator.Trigger) bool {
	return trig == estimator.TriggerContext || trig == estimator.TriggerToolCalls || trig == policy.TriggerZone
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
	if p.pointsChecked || snap.Window <= 0 || snap.WindowPending || r.cfg.ContextThreshold >= 100 {
		return
	}
	p.pointsChecked = true
	at := snap.Window * int64(r.cfg.ContextThreshold) / 100
	if c := int64(r.cfg.ContextMaxTokens); c > 0 && c < at {
		at = c // the cap hands off first
	}
	// The CLI's own numbers when it answered get_context_usage; compact
	// is 0 when it said it will not compact on its own.
	compact, tooLong := estimator.CompactionPoints(snap)
	switch {
	case at >= tooLong:
		r.log.Warn("context_threshold lies above the point where claude refuses the prompt as too long: sessions will fail before debussy restarts them; lower context_threshold",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "too_long_at", estimator.FormatTokens(tooLong))
	case compact <= 0:
	case at >= compact && r.cfg.AllowCompaction:
		r.log.Warn("context_threshold lies above claude's own compaction point: claude will compact before debussy restarts the session",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "compacts_at", estimator.FormatTokens(compact))
	case at >= compact:
		r.log.Warn("context_threshold lies above claude's own compaction point; debussy blocks that compaction (allow_compaction: false)",
			"context_threshold", r.cfg.ContextThreshold, "window", estimator.FormatTokens(snap.Window), "compacts_at", estimator.FormatTokens(compact))
	}
}
