package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// runSession runs the phase's next session (package session owns it) and
// keeps the ledger up to date with what it decides, on this goroutine.
func (r *orun) runSession(ctx context.Context, p *phaseRun, prompt string) (session.Result, error) {
	p.rec.Sessions++
	n := p.rec.Sessions
	var res session.Result
	var startErr error
	p.sessionTrace = r.startSessionTrace(ctx, p, n)
	defer func() { r.endSessionTrace(p, res, startErr) }()
	// A rerun after a crash resumes only phases with a session on record.
	if err := r.savePhase(p.rec); err != nil {
		return session.Result{}, err
	}
	r.event("session_spawned", map[string]any{"phase": p.ph.ID, "session": n, "prompt_chars": len(prompt)})
	if !p.lastTrigger.IsZero() {
		p.rec.RestartTurnaroundMs = append(p.rec.RestartTurnaroundMs, r.now().Sub(p.lastTrigger).Milliseconds())
		p.lastTrigger = time.Time{}
	}
	// The handoff goes beside the session's log, in the phase's directory.
	if err := state.MkdirPrivate(r.Store.PhaseDir(r.id, p.ph.ID)); err != nil {
		return session.Result{}, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	cfg := r.sessionConfig(ctx, p, n, prompt)
	r.spendOf(p).StartSession()
	sess, err := session.Start(ctx, cfg)
	startErr = err
	if err != nil {
		if errors.Is(err, runner.ErrClaudeNotFound) {
			return session.Result{}, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		return session.Result{}, fmt.Errorf("start claude: %w", err)
	}
	p.undelivered = nil
	p.rec.Zone = string(estimator.ZoneGreen)
	p.rec.Zones = append(p.rec.Zones, p.rec.Zone)
	for {
		<-sess.Ready()
		effects, over := sess.Take()
		r.apply(p, n, effects)
		if over {
			break
		}
	}
	res = sess.Wait()
	effects, _ := sess.Take() // the interrupt's, after the stream ended
	r.apply(p, n, effects)

	p.undelivered = res.Undelivered
	p.pointsChecked = res.PointsChecked
	if !res.StopAt.IsZero() {
		p.rec.StopLatencyMs = append(p.rec.StopLatencyMs, r.now().Sub(res.StopAt).Milliseconds())
	}
	if res.Window > 0 && r.cfg.ContextWindow == 0 {
		p.window = res.Window
	}
	// Every API call of the session, counted once: the Meter's figures
	// (a result's usage covers only its own turn).
	spent := r.spendOf(p).EndSession()
	r.recordSpend(p)
	snap, out := res.Snapshot, res.Outcome
	r.progress(p, n, snap, true)
	if err := r.savePhase(p.rec); err != nil {
		return res, err
	}
	r.event("session_ended", map[string]any{"phase": p.ph.ID, "session": n, "outcome": string(out.Kind), "reason": out.Reason,
		"exit_code": out.ExitCode, "failure": string(out.Failure.Class), "context_tokens": snap.Tokens, "percent": snap.Percent, "tool_calls": snap.ToolCalls,
		"zone": string(res.Zone), "policy_state": string(res.State), "trigger": string(res.Trigger), "stop_reason": res.Reason,
		"done": res.Done, "tokens": spent.Processed(), "cost_usd": spent.CostUSD, "reported_cost_usd": spent.ReportedCostUSD,
		"api_turns": spent.Turns, "hook_latency_ms": out.HookLatencyMs()})
	r.log.Info("session ended", "phase", p.ph.ID, "session", n, "outcome", out.Describe(),
		"context_percent", int(snap.Percent), "tool_calls", snap.ToolCalls)
	return res, nil
}

// apply does what the session decided: records, logs, and the ledger's
// changes (the run's lock held).
func (r *orun) apply(p *phaseRun, n int, effects []session.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case session.Record:
			r.event(e.Name, e.Fields) // the event log redacts what it writes
		case session.Log:
			r.logAt(e.Level, e.Msg, e.Args...)
		case session.Observed:
			p.contextPeak = max(p.contextPeak, e.Snap.Tokens)
			p.events.Observe(e.Event)
			r.progressAt(p, n, e.Snap, false, e.Live)
		case session.Tick:
			r.progress(p, n, e.Snap, false)
		case session.ZoneChanged:
			p.rec.Zone = string(e.Zone)
			if k := len(p.rec.Zones); k > 0 {
				p.rec.Zones[k-1] = p.rec.Zone
			}
			_ = r.savePhase(p.rec) // live in `debussy status --json`; the session's end saves again
		case session.Nudged:
			if len(p.rec.Nudges) < maxNudges {
				p.rec.Nudges = append(p.rec.Nudges, state.Nudge{Session: n, Kind: e.Nudge.Kind, Tool: e.Nudge.Tool,
					Args: e.Nudge.Args, Count: e.Nudge.Count, Restart: e.Nudge.Restart, At: e.At})
			}
		case session.HandoffKept:
			p.rec.Handoffs = append(p.rec.Handoffs, e.Path)
		case session.Emergency:
			p.rec.Emergencies++
		case session.StopDecided:
			p.lastTrigger = e.At
		case session.SpendChanged:
			r.recordSpend(p)
			_ = r.savePhase(p.rec) // live in `debussy status --json`; the session's end saves again
		}
	}
}

// maxNudges bounds the nudges a phase keeps in the ledger.
const maxNudges = 100

// logAt logs at a policy level.
func (r *orun) logAt(level policy.Level, msg string, args ...any) {
	switch level {
	case policy.LevelWarn:
		r.log.Warn(msg, args...)
	case policy.LevelInfo:
		r.log.Info(msg, args...)
	case policy.LevelDebug:
		r.log.Debug(msg, args...)
	}
}

// sessionConfig is the phase's session n as package session needs it.
func (r *orun) sessionConfig(ctx context.Context, p *phaseRun, n int, prompt string) session.Config {
	ph, c := p.ph, r.cfg
	// The same path `debussy handoff` writes to (state.Store.HandoffPath),
	// absolute: the agent is told it.
	handoff := r.Store.HandoffPath(r.id, ph.ID, n)
	if abs, err := filepath.Abs(handoff); err == nil {
		handoff = abs
	}
	spec := r.sessionSpec(p, n, prompt)
	// An earlier session's answer about the window is reused: the runner
	// asks again only if init names another CLI version or model.
	known := r.answers.Known(spec.Model)
	spec.KnownContext = known
	ps := r.spendOf(p)
	pol := session.PolicyConfig(c, ph.ID, handoff, p.repo.Root())
	pol.IsSelf = runner.SelfProgram(spec, r.Self)
	return session.Config{
		Phase: ph.ID, Number: n, Spec: spec, Carried: p.undelivered,
		Policy: pol,
		// The estimator measures; the policy compares every threshold.
		Estimator: estimator.Config{Window: int64(c.ContextWindow), LearnedWindow: p.window, Known: known,
			AwaitCLI: known == nil, PromptChars: len(prompt)},
		HandoffGraceTime: time.Duration(c.HandoffGraceTime),
		Facts: session.Facts{SignalPath: r.Store.SignalPath(r.id, ph.ID), HandoffSignalPath: r.Store.HandoffSignalPath(r.id, ph.ID),
			HandoffPath: handoff, PhaseFile: ph.Path},
		Meters: ps, Budget: &ps.Budget,
		Answers: &r.answers, Root: p.repo.Root(), PhaseFile: ph.Path, PlanFile: r.Plan.Path, PhaseContent: ph.Content,
		PointsChecked: p.pointsChecked, Live: r.Progress != nil, Hard: r.Hard, FailFast: errFailFast, Now: r.now,
	}
}

// sessionSpec is how runner starts the phase's session n.
func (r *orun) sessionSpec(p *phaseRun, n int, prompt string) runner.Spec {
	ph := p.ph
	return runner.Spec{
		Bin:            r.cfg.ClaudeBin,
		Model:          r.model(p),
		PermissionMode: r.cfg.PermissionMode,
		AllowedTools:   r.cfg.AllowedTools,
		ExtraArgs:      r.cfg.ExtraArgs,
		Dir:            p.repo.Root(),
		Prompt:         prompt,
		Env:            p.repo.ChildEnv(r.Env), // no GIT_DIR sending the agent's git elsewhere
		SetEnv: r.withTraceEnv(p, n, map[string]string{
			state.EnvRunID:    r.id,
			state.EnvPhaseID:  ph.ID,
			state.EnvStateDir: r.Store.Dir,
		}),
		PathPrepend:    r.SelfDir,
		ShellEnvFile:   filepath.Join(r.Store.PhaseDir(r.id, ph.ID), "agent-env.sh"),
		LogPath:        filepath.Join(r.Store.PhaseDir(r.id, ph.ID), fmt.Sprintf("session-%d.jsonl", n)),
		IdleTimeout:    time.Duration(r.cfg.IdleTimeout),
		SessionTimeout: time.Duration(r.cfg.SessionTimeout),
		StopGrace:      time.Duration(r.cfg.StopGrace),
		CancelGrace:    r.InterruptGrace,
		AllowCompact:   r.cfg.AllowCompaction,
		FirstContact:   !r.reached.Load(),
		Logger:         r.log,
	}
}

// oneLine folds s to one line of at most 200 runes.
func oneLine(s string) string { return text.OneLine(s, 200) }
