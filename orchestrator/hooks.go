package orchestrator

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// Triggers of the session's own policy, beside the estimator's.
const (
	triggerZone     estimator.Trigger = "zone"
	triggerDoomLoop estimator.Trigger = "doom_loop"
	// emergencyPercent ends a session at once, handoff or not: the CLI
	// refuses the prompt a few points later.
	emergencyPercent = 98
	// warnBelow is how many points under context_threshold the agent is
	// first told to wrap up.
	warnBelow = 10
	// maxHandoffBytes bounds what is read of a handoff file; the
	// checkpoint bounds it again.
	maxHandoffBytes = 64 << 10
	// maxNudges bounds the nudges a phase keeps in the ledger.
	maxNudges = 100
)

// stage is where a session stands in its budget.
type stage int

const (
	stageWork     stage = iota
	stageHandoff        // the agent has been asked for its handoff
	stageStopping       // the next PostToolUse ends the session
)

// budget is one session's policy at the hooks: what the agent has been
// told, what it may still do, and when the session ends. Every decision is
// made in the event loop, with the stream's exact state.
type budget struct {
	r      *orun
	p      *phaseRun
	n      int // session number
	cfg    config.Config
	sess   *runner.Session
	nudger nudgeSource

	stage       stage
	trigger     estimator.Trigger
	reason      string
	handoffPath string // absolute
	request     string // the handoff request, also every denial's reason
	askedAt     time.Time
	graceCalls  int // tool calls asked for since the handoff request
	grace       *time.Timer
	econTimer   *time.Timer // the duration budgets' next level (economics.go)
	handoff     string      // path, once written
	noHandoff   string      // why the session ended without one
	avoid       []string
	// handoffTold: a budget's wrap-up told the agent where its handoff
	// goes, outside the handoff stage (economics.go).
	handoffTold bool

	warned, yellowNoted, doneAsked bool
	zone                           string
	// turn is the session's main-thread responses so far: events carry
	// it so a report can mark them on the context curve.
	turn  int
	notes []string // for the next PostToolUse
}

func (r *orun) newBudget(p *phaseRun, n int, sess *runner.Session) *budget {
	dir := r.Store.PhaseDir(r.id, p.ph.ID)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	c := r.cfg
	return &budget{
		r: r, p: p, n: n, cfg: c, sess: sess,
		nudger:      newNudger(c),
		handoffPath: filepath.Join(dir, fmt.Sprintf("handoff-%d.md", n)),
		zone:        zoneGreen,
	}
}

// graceC fires when the handoff's time is up; nil when no handoff is due.
func (b *budget) graceC() <-chan time.Time {
	if b.grace == nil || b.stage != stageHandoff {
		return nil
	}
	return b.grace.C
}

func (b *budget) close() {
	if b.grace != nil {
		b.grace.Stop()
	}
	if b.econTimer != nil {
		b.econTimer.Stop()
	}
}

func (b *budget) fields(m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m["phase"], m["session"], m["turn"] = b.p.ph.ID, b.n, b.turn
	return m
}

// observe follows the stream: zones, nudges and the stages of the context
// budget. It runs for every event before a hook on it is answered.
func (b *budget) observe(ev runner.Event, snap estimator.Snapshot) {
	b.turn = snap.Messages
	z := zoneOf(snap, b.cfg)
	b.observeZone(z, snap)
	for _, nd := range b.nudger.Observe(ev) {
		b.nudge(nd)
	}
	if b.stage == stageStopping {
		return
	}
	thr := b.cfg.ContextThreshold
	switch {
	case snap.Window > 0 && snap.Percent >= emergencyPercent && thr < 100:
		b.emergency(estimator.TriggerContext, fmt.Sprintf("context %d %% of %s ≥ %d %%", int(snap.Percent), estimator.FormatTokens(snap.Window), emergencyPercent))
	case snap.Trigger == estimator.TriggerCompaction && !b.cfg.AllowCompaction:
		// The CLI compacted although PreCompact was blocked (another
		// client, an older CLI): restart from a checkpoint as before.
		b.stop(snap.Trigger, snap.Reason)
	case b.stage == stageHandoff:
	case snap.Window > 0 && thr < 100 && snap.Percent >= float64(thr):
		b.limit(estimator.TriggerContext, reason(snap, estimator.TriggerContext,
			fmt.Sprintf("context %d %% of %s ≥ %d %%", int(snap.Percent), estimator.FormatTokens(snap.Window), thr)), snap)
	case b.cfg.ToolCallThreshold > 0 && snap.ToolCalls >= b.cfg.ToolCallThreshold:
		b.limit(estimator.TriggerToolCalls, reason(snap, estimator.TriggerToolCalls,
			fmt.Sprintf("tool calls %d ≥ %d", snap.ToolCalls, b.cfg.ToolCallThreshold)), snap)
	case z.zone == zoneRed:
		b.limit(triggerZone, fmt.Sprintf("red zone: %d tool calls, %d large reads, %d delegations", snap.ToolCalls, z.largeReads, z.delegations), snap)
	case !b.warned && snap.Window > 0 && thr < 100 && snap.Percent >= float64(thr-warnBelow):
		b.warned = true
		b.note(fmt.Sprintf("debussy: your context is at %d%% of the window; at %d%% you will be asked for a handoff and this session will end. "+
			"Finish the current step, then record what you did and what remains with `debussy progress --phase %s \"...\"`.",
			int(snap.Percent), thr, b.p.ph.ID))
		b.r.event("context_warning", b.fields(map[string]any{"percent": snap.Percent, "threshold": thr}))
		b.r.log.Info("context warning sent to the agent", "phase", b.p.ph.ID, "percent", int(snap.Percent))
	}
}

func (b *budget) observeZone(z zoneInfo, snap estimator.Snapshot) {
	if z.zone == "" || z.zone == b.zone {
		return
	}
	b.zone = z.zone
	b.p.rec.Zone = z.zone
	if k := len(b.p.rec.Zones); k > 0 {
		b.p.rec.Zones[k-1] = z.zone
	}
	b.r.event("zone", b.fields(map[string]any{"zone": z.zone, "tool_calls": snap.ToolCalls,
		"large_reads": z.largeReads, "delegations": z.delegations}))
	b.r.log.Info("zone", "phase", b.p.ph.ID, "zone", z.zone, "tool_calls", snap.ToolCalls,
		"large_reads", z.largeReads, "delegations", z.delegations)
	if z.zone == zoneYellow && !b.yellowNoted {
		b.yellowNoted = true
		b.note(fmt.Sprintf("debussy: this session is in the yellow zone (%d tool calls, %d large reads, %d delegations). "+
			"Assess the remaining work: prefer delegating self-contained parts to a subagent (Task) over reading more yourself, "+
			"and record progress with `debussy progress --phase %s \"...\"`.", snap.ToolCalls, z.largeReads, z.delegations, b.p.ph.ID))
	}
	// Live in `debussy status --json`; a failed save is reported at the
	// session's end, which saves again.
	_ = b.r.save()
}

func (b *budget) nudge(nd nudge) {
	rec := state.Nudge{Session: b.n, Kind: nd.kind, Tool: nd.tool, Args: checkpoint.Redact(nd.args),
		Count: nd.count, Restart: nd.restart, At: b.r.now()}
	if len(b.p.rec.Nudges) < maxNudges {
		b.p.rec.Nudges = append(b.p.rec.Nudges, rec)
	}
	b.r.event("nudge", b.fields(map[string]any{"kind": rec.Kind, "tool": rec.Tool, "args": rec.Args, "count": rec.Count, "restart": rec.Restart}))
	b.r.log.Warn("nudge", "phase", b.p.ph.ID, "kind", rec.Kind, "tool", rec.Tool, "args", rec.Args, "count", rec.Count)
	switch {
	case nd.restart && b.cfg.MaxRestarts > 0 && b.stage != stageStopping:
		b.avoid = append(b.avoid, strings.TrimSpace(rec.Tool+" "+rec.Args))
		if b.stage == stageHandoff && b.handoff == "" {
			b.noHandoff = "the session was stopped in a loop before the agent wrote its handoff"
		}
		b.stage = stageWork // a loop outranks the handoff: stop now
		b.stop(triggerDoomLoop, fmt.Sprintf("doom loop: %s called %d times with the same arguments", rec.Tool, rec.Count))
	case nd.kind == nudgeDoomLoop:
		b.note(fmt.Sprintf("debussy: you have called %s with the same arguments %d times (%s). Repeating it will not change the result: "+
			"step back, read the error, and try a different approach.", rec.Tool, rec.Count, rec.Args))
	default:
		b.note(fmt.Sprintf("debussy: %d reads in a row without an edit. You likely know enough to act: make the change now, "+
			"or record what blocks you with `debussy progress --phase %s \"...\"`.", rec.Count, b.p.ph.ID))
	}
}

func (b *budget) note(s string) { b.notes = append(b.notes, s) }

// limit is the session reaching its budget: the handoff stage, or a plain
// restart without handoffs.
func (b *budget) limit(trig estimator.Trigger, reason string, snap estimator.Snapshot) {
	if b.cfg.MaxRestarts == 0 {
		b.stop(trig, reason) // only warns
		return
	}
	b.r.event("trigger", b.fields(map[string]any{"trigger": string(trig), "reason": reason, "tokens": snap.Tokens,
		"window": snap.Window, "tool_calls": snap.ToolCalls, "zone": b.zone}))
	if !b.cfg.Handoff {
		b.stop(trig, reason)
		return
	}
	b.stage, b.trigger, b.reason = stageHandoff, trig, reason
	b.askedAt = b.r.now()
	b.request = fmt.Sprintf("debussy: %s. Write your handoff NOW to `%s` (the Write tool, that exact absolute path); "+
		"every other tool is refused until you have. The next session starts from it, so be concrete. Use this template:\n\n%s",
		reason, b.handoffPath, checkpoint.HandoffTemplate())
	b.grace = time.NewTimer(time.Duration(b.cfg.HandoffGraceTime))
	b.r.event("handoff_requested", b.fields(map[string]any{"path": b.handoffPath, "reason": reason}))
	b.r.log.Warn("threshold crossed: asking the agent for its handoff", "phase", b.p.ph.ID, "reason", reason, "path", b.handoffPath)
	if err := os.MkdirAll(filepath.Dir(b.handoffPath), 0o755); err != nil {
		b.r.log.Warn("create the handoff's directory", "err", err)
	}
}

// stop ends the session at the next PostToolUse (or by the runner's
// fallback when no tool comes).
func (b *budget) stop(trig estimator.Trigger, reason string) {
	if b.stage == stageStopping {
		return
	}
	// A budget's stop ends the phase, with or without restarts.
	if b.cfg.MaxRestarts == 0 && trig != triggerBudget {
		if b.trigger == "" {
			b.trigger = trig // once: the warning is not repeated
			b.r.log.Warn("threshold crossed, but restarts are disabled (max_restarts 0): continuing", "phase", b.p.ph.ID, "reason", reason)
		}
		return
	}
	if b.stage == stageHandoff && b.handoff == "" && b.noHandoff == "" {
		b.noHandoff = "the session was stopped before the agent wrote its handoff: " + reason
	}
	b.stage, b.trigger, b.reason = stageStopping, trig, reason
	b.p.lastTrigger = b.r.now()
	switch threshold := trig == estimator.TriggerContext || trig == estimator.TriggerToolCalls || trig == triggerZone; {
	case threshold && len(b.sess.InFlight()) > 0:
		b.r.log.Warn("threshold crossed: stopping after the running tool", "phase", b.p.ph.ID, "reason", reason)
	case threshold:
		b.r.log.Warn("threshold crossed: stopping at the next safe point", "phase", b.p.ph.ID, "reason", reason)
	default:
		b.r.log.Warn("stopping the session at the next safe point", "phase", b.p.ph.ID, "reason", reason)
	}
	b.sess.RequestStop(reason)
}

// emergency ends a session that has no handoff and no time left.
func (b *budget) emergency(trig estimator.Trigger, why string) {
	if b.stage == stageStopping || b.cfg.MaxRestarts == 0 {
		return
	}
	if trig == "" {
		trig = estimator.TriggerContext
	}
	b.r.event("emergency_stop", b.fields(map[string]any{"reason": why}))
	if b.cfg.Handoff && b.handoff == "" {
		b.noHandoff = "no handoff was written: " + why
		b.p.rec.Emergencies++
	}
	b.stop(trig, why)
}

// tellHandoffPath is what a budget's wrap-up adds to "write the handoff":
// where, so that the write is the one the refusals let through, and the
// template the next session reads.
func (b *budget) tellHandoffPath() string {
	if !b.handoffTold {
		b.handoffTold = true
		if err := os.MkdirAll(filepath.Dir(b.handoffPath), 0o755); err != nil {
			b.r.log.Warn("create the handoff's directory", "err", err)
		}
		return fmt.Sprintf(" Write your handoff to `%s` (the Write tool, that exact absolute path); the session that goes on starts from it. "+
			"Use this template:\n\n%s", b.handoffPath, checkpoint.HandoffTemplate())
	}
	return fmt.Sprintf(" The handoff goes to `%s`.", b.handoffPath)
}

// graceExpired is the handoff's time running out.
func (b *budget) graceExpired() {
	b.emergency(b.trigger, fmt.Sprintf("the agent did not write its handoff within %s", b.cfg.HandoffGraceTime))
}

// answer replies to one hook call. Every call is answered exactly once.
func (b *budget) answer(h *runner.HookCall) {
	switch h.Event {
	case runner.HookPreToolUse:
		h.Answer(b.preToolUse(h))
	case runner.HookPostToolUse:
		h.Answer(b.postToolUse(h))
	case runner.HookStop:
		h.Answer(b.stopHook(h))
	case runner.HookPreCompact:
		if b.cfg.AllowCompaction {
			h.Answer(runner.HookAnswer{})
			return
		}
		b.r.event("compaction_blocked", b.fields(map[string]any{"trigger": h.Trigger}))
		h.Answer(runner.HookAnswer{Block: "debussy restarts this session from a checkpoint instead of compacting it (allow_compaction: false)"})
	default:
		h.Answer(runner.HookAnswer{})
	}
}

func (b *budget) preToolUse(h *runner.HookCall) runner.HookAnswer {
	// The handoff's request comes first: it refuses every tool the budget
	// would and names the path, where the budget's refusal would tell the
	// agent to go on with its task and keep the path from it; and every
	// refused call counts toward handoff_grace_calls.
	if b.stage != stageHandoff {
		if why := b.budgetRefusal(h); why != "" {
			b.r.event("tool_denied", b.fields(map[string]any{"tool": h.ToolName, "tool_use_id": h.ToolUseID, "why": "budget"}))
			return runner.HookAnswer{Deny: why}
		}
		return runner.HookAnswer{}
	}
	if b.allowedDuringHandoff(h) {
		return runner.HookAnswer{}
	}
	b.graceCalls++
	if g := b.cfg.HandoffGraceCalls; g > 0 && b.graceCalls > g {
		// Out of calls: let this one run so that its PostToolUse ends the
		// session cleanly.
		b.emergency(b.trigger, fmt.Sprintf("the agent did not write its handoff within %d tool calls", g))
		return runner.HookAnswer{}
	}
	b.r.event("tool_denied", b.fields(map[string]any{"tool": h.ToolName, "tool_use_id": h.ToolUseID}))
	return runner.HookAnswer{Deny: b.request}
}

// allowedDuringHandoff: writing the handoff itself, and debussy's own
// progress and done commands.
func (b *budget) allowedDuringHandoff(h *runner.HookCall) bool {
	var in struct {
		FilePath string `json:"file_path"`
		Command  string `json:"command"`
	}
	_ = json.Unmarshal(h.ToolInput, &in)
	switch h.ToolName {
	case "Write", "Edit", "MultiEdit", "Read":
		p := in.FilePath
		if p != "" && !filepath.IsAbs(p) {
			p = filepath.Join(b.p.repo.Root(), p)
		}
		return p != "" && filepath.Clean(p) == b.handoffPath
	case "Bash":
		cmd := strings.TrimSpace(in.Command)
		// A shell redirect into the handoff file is a handoff write too;
		// its name suffices, as the path may be spelled with variables.
		return strings.HasPrefix(cmd, "debussy progress") || strings.HasPrefix(cmd, "debussy done") ||
			strings.Contains(cmd, filepath.Base(b.handoffPath))
	}
	return false
}

func (b *budget) postToolUse(h *runner.HookCall) runner.HookAnswer {
	if (b.stage == stageHandoff || b.handoffTold) && b.handoff == "" {
		if fi, err := os.Stat(b.handoffPath); err == nil && fi.Size() > 0 {
			b.handoff = b.handoffPath
			b.p.rec.Handoffs = append(b.p.rec.Handoffs, b.handoffPath)
			b.r.event("handoff_written", b.fields(map[string]any{"path": b.handoffPath, "bytes": fi.Size()}))
			// A budget's wrap-up asked for it so that the stop loses
			// nothing; only the handoff stage ends the session for it.
			if b.stage == stageHandoff {
				b.r.log.Info("handoff written: ending the session", "phase", b.p.ph.ID, "path", b.handoffPath)
				b.stop(b.trigger, b.reason)
			} else {
				b.r.log.Info("handoff written", "phase", b.p.ph.ID, "path", b.handoffPath)
			}
		}
	}
	if b.stage == stageStopping {
		b.notes = nil
		b.r.event("hook_stop", b.fields(map[string]any{"tool": h.ToolName, "reason": b.reason}))
		return runner.HookAnswer{StopReason: "debussy: " + b.reason}
	}
	if len(b.notes) == 0 {
		return runner.HookAnswer{}
	}
	note := strings.Join(b.notes, "\n\n")
	b.notes = nil
	b.r.event("note", b.fields(map[string]any{"tool": h.ToolName, "chars": len(note)}))
	return runner.HookAnswer{Note: note}
}

func (b *budget) stopHook(h *runner.HookCall) runner.HookAnswer {
	if b.stage == stageStopping {
		return runner.HookAnswer{}
	}
	// Already continuing because of a Stop hook: blocking again would loop.
	if h.StopHookActive {
		if b.stage == stageHandoff && b.handoff == "" {
			b.emergency(b.trigger, "the agent ended its turn again without writing its handoff")
		}
		return runner.HookAnswer{}
	}
	if b.stage == stageHandoff && b.handoff == "" {
		b.r.event("stop_blocked", b.fields(map[string]any{"why": "handoff"}))
		return runner.HookAnswer{Block: b.request}
	}
	if !b.cfg.RequireDoneSignal || b.doneAsked {
		return runner.HookAnswer{}
	}
	sig, err := b.r.Store.ReadSignal(b.r.id, b.p.ph.ID)
	if err != nil || sig != nil {
		return runner.HookAnswer{} // a bad signal is the phase loop's to report
	}
	b.doneAsked = true
	id := b.p.ph.ID
	b.r.event("stop_blocked", b.fields(map[string]any{"why": "done_signal"}))
	b.r.log.Info("the agent ended its turn without `debussy done`: asking it to signal", "phase", id)
	return runner.HookAnswer{Block: fmt.Sprintf("debussy: you ended your turn without `debussy done`. Run `debussy done --phase %s` with "+
		"completed, blocked or failed: `debussy done --phase %s` when every task and gate is met, "+
		"`debussy done --phase %s --status blocked --reason \"...\"` or `--status failed --reason \"...\"` otherwise. "+
		"If work remains, do it first.", id, id, id)}
}

// reason is the estimator's wording of trig when it fired that trigger,
// else own (the estimator's trigger is sticky: after a compaction allowed
// by allow_compaction it names the compaction).
func reason(snap estimator.Snapshot, trig estimator.Trigger, own string) string {
	if snap.Trigger == trig && snap.Reason != "" {
		return snap.Reason
	}
	return own
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
