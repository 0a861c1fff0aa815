package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/state"
)

// sessionEnd is how one claude session ended, as the loop needs it.
type sessionEnd struct {
	outcome     runner.Outcome
	trigger     estimator.Trigger // set when debussy stopped it for a restart
	reason      string            // the trigger's human reason
	interrupted bool              // stopped because debussy was interrupted
	handoff     string            // the agent's handoff file, when it wrote one
	noHandoff   string            // why a handoff that was due is missing
	avoid       []string          // repeated calls the next session must avoid
	done        bool              // the agent ran `debussy done` in this session
}

func (r *orun) runSession(ctx context.Context, p *phaseRun, prompt string) (sessionEnd, error) {
	p.rec.Sessions++
	n := p.rec.Sessions
	// A rerun after a crash resumes only phases with a session on record.
	if err := r.save(); err != nil {
		return sessionEnd{}, err
	}
	r.event("session_spawned", sessionFields(p, n, map[string]any{"prompt_chars": len(prompt)}))
	if !p.lastTrigger.IsZero() {
		p.rec.RestartTurnaroundMs = append(p.rec.RestartTurnaroundMs, r.now().Sub(p.lastTrigger).Milliseconds())
		p.lastTrigger = time.Time{}
	}
	// Ctrl-C cancels ctx: the session stops at the next safe point, and is
	// killed if it has not ended InterruptGrace later (Spec.CancelGrace).
	spec := r.sessionSpec(p, n, prompt)
	// An earlier session's answer about the window is reused: the
	// runner asks again only if init names another CLI version or model.
	known := r.answers.known(spec.Model)
	spec.KnownContext = known
	sess, err := runner.Start(ctx, spec)
	if err != nil {
		if errors.Is(err, runner.ErrClaudeNotFound) {
			return sessionEnd{}, fmt.Errorf("%w: %w", ErrSetup, err)
		}
		return sessionEnd{}, fmt.Errorf("start claude: %w", err)
	}
	interrupted := r.watchInterrupt(ctx, p, n, sess)

	d := r.newDriver(p, n, sess)
	d.specModel, d.known = spec.Model, known
	// The estimator measures; the policy compares every threshold.
	d.est = estimator.New(estimator.Config{
		Window:        int64(r.cfg.ContextWindow),
		LearnedWindow: p.window,
		Known:         known,
		AwaitCLI:      known == nil,
		PromptChars:   len(prompt),
	})
	defer d.close()
	r.startEconomics(p)
	d.armEconTimer()
	p.rec.Zone = string(estimator.ZoneGreen)
	p.rec.Zones = append(p.rec.Zones, p.rec.Zone)
	snap := r.follow(d, sess)

	o := d.pol.Outcome()
	end := sessionEnd{trigger: o.Trigger, reason: o.Reason, handoff: o.Handoff, noHandoff: o.NoHandoff, avoid: o.Avoid, done: o.Done}
	if end.trigger == "" {
		end.handoff = ""
	}
	p.undelivered = o.Undelivered
	var trigAt time.Time
	if end.trigger != "" {
		trigAt = p.lastTrigger
	}
	var out runner.Outcome
	r.unlocked(func() { out = sess.Wait() })
	end.outcome = out
	end.interrupted = interrupted()
	if !trigAt.IsZero() {
		p.rec.StopLatencyMs = append(p.rec.StopLatencyMs, r.now().Sub(trigAt).Milliseconds())
	}
	if w := learnedWindow(snap); w > 0 && r.cfg.ContextWindow == 0 {
		p.window = w
	}
	// Every API call of the session, counted once: the Meter's figures
	// (a result's usage covers only its own turn).
	spent := r.endEconomics(p)
	r.progress(p, n, snap, true)
	if err := r.save(); err != nil {
		return end, err
	}
	r.event("session_ended", sessionFields(p, n, map[string]any{"outcome": string(out.Kind), "reason": out.Reason, "exit_code": out.ExitCode,
		"context_tokens": snap.Tokens, "percent": snap.Percent, "tool_calls": snap.ToolCalls, "zone": string(d.zone()),
		"policy_state": string(d.pol.State()), "trigger": string(end.trigger), "stop_reason": end.reason, "done": end.done,
		"tokens": spent.Processed(), "cost_usd": spent.CostUSD, "reported_cost_usd": spent.ReportedCostUSD, "api_turns": spent.Turns,
		"hook_latency_ms": hookLatencyMs(out.HookLatency)}))
	r.log.Info("session ended", "phase", p.ph.ID, "session", n, "outcome", describeOutcome(out),
		"context_percent", int(snap.Percent), "tool_calls", snap.ToolCalls)
	return end, nil
}

// watchInterrupt reports Ctrl-C while the session runs (the stop itself
// is the runner's, through ctx) and kills the session at once on a second
// one. The returned func, called after the session ended, says whether
// the session was interrupted.
func (r *orun) watchInterrupt(ctx context.Context, p *phaseRun, n int, sess *runner.Session) func() bool {
	var interrupted bool
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		interrupted = true
		if errors.Is(context.Cause(ctx), errFailFast) {
			r.log.Warn("another phase failed (--fail-fast): stopping the session after the running tool", "phase", p.ph.ID)
			r.event("interrupt", sessionFields(p, n, map[string]any{"fail_fast": true}))
		} else {
			r.log.Warn("interrupted: stopping the session after the running tool (Ctrl-C again to kill it now)")
			r.event("interrupt", sessionFields(p, n, nil))
		}
		select {
		case <-done:
		case <-r.Hard:
			r.log.Warn("second interrupt: killing the session")
			sess.Kill()
		}
	}()
	return func() bool {
		close(done)
		<-exited
		return interrupted
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
		SetEnv: map[string]string{
			state.EnvRunID:    r.id,
			state.EnvPhaseID:  ph.ID,
			state.EnvStateDir: r.Store.Dir,
		},
		PathPrepend:    r.SelfDir,
		ShellEnvFile:   filepath.Join(r.Store.PhaseDir(r.id, ph.ID), "agent-env.sh"),
		LogPath:        filepath.Join(r.Store.PhaseDir(r.id, ph.ID), fmt.Sprintf("session-%d.jsonl", n)),
		IdleTimeout:    time.Duration(r.cfg.IdleTimeout),
		SessionTimeout: time.Duration(r.cfg.SessionTimeout),
		StopGrace:      time.Duration(r.cfg.StopGrace),
		CancelGrace:    r.InterruptGrace,
		AllowCompact:   r.cfg.AllowCompaction,
		Logger:         r.log,
		OnMark: func(name string, at time.Time, f map[string]any) {
			r.event(name, sessionFields(p, n, f))
			r.logMark(ph.ID, name, f)
		},
	}
}

// logMark logs a step of the runner's stop timeline.
func (r *orun) logMark(phase, name string, f map[string]any) {
	switch name {
	case "tool_drained":
		if f["timed_out"] == true {
			r.log.Warn("the running tool did not finish within stop_grace: interrupting it", "phase", phase,
				"stop_grace", time.Duration(r.cfg.StopGrace))
		} else {
			r.log.Info("safe point reached: interrupting the session", "phase", phase)
		}
	case "sigkill":
		if f["by"] == "cancel_grace" {
			r.log.Warn("the running tool did not finish after the interrupt: killing the session", "phase", phase, "grace", r.InterruptGrace)
		} else {
			r.log.Info("stopping the session", "phase", phase, "step", name)
		}
	case "interrupt_sent", "sigint", "sigterm", "idle_timeout":
		r.log.Info("stopping the session", "phase", phase, "step", name)
	default:
		r.log.Debug("stop timeline", "phase", phase, "step", name)
	}
}

// hookLatencyMs is the CLI's wait for debussy's hook answers, per hook,
// in milliseconds for events.jsonl.
func hookLatencyMs(l map[runner.HookEvent]runner.Latency) map[string]any {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := map[string]any{}
	for ev, x := range l {
		out[string(ev)] = map[string]any{"n": x.N, "p50": ms(x.P50), "p99": ms(x.P99), "max": ms(x.Max)}
	}
	return out
}

func sessionFields(p *phaseRun, n int, m map[string]any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m["phase"], m["session"] = p.ph.ID, n
	return m
}

// logEvent reports what a person watching the run wants to see.
func (r *orun) logEvent(phase string, n int, ev runner.Event, snap estimator.Snapshot, root string) {
	switch ev.Kind {
	case runner.KindInit:
		window := estimator.FormatTokens(snap.Window)
		if snap.WindowPending {
			window = "asked of claude"
		}
		r.log.Info("session started", "phase", phase, "session", n, "model", ev.Init.Model,
			"window", window, "claude", ev.Init.Version)
	case runner.KindAssistant:
		for _, tu := range ev.Assistant.ToolUses {
			if !ev.Assistant.MainThread() {
				continue
			}
			r.log.Info("tool", "phase", phase, "name", tu.Name, "input", strings.TrimPrefix(toolSummary(tu), root+"/"))
		}
	case runner.KindSystem:
		s := ev.System
		switch {
		case s.Subtype == "api_retry":
			r.log.Warn("API error: claude retries", "phase", phase, "api_status", s.ErrorStatus, "error", s.Error,
				"retry_in", time.Duration(s.RetryDelayMs*float64(time.Millisecond)).Round(100*time.Millisecond),
				"attempt", s.Attempt, "max_attempts", s.MaxRetries)
		case s.Status == "compacting":
			// An attempt: PreCompact may have blocked it, or it fails into
			// "Prompt is too long" (the result says so).
			r.log.Debug("claude started compacting its context", "phase", phase, "allowed", r.cfg.AllowCompaction)
			r.event("compaction_attempt", map[string]any{"phase": phase, "session": n, "allowed": r.cfg.AllowCompaction})
		case s.Subtype == "compact_boundary":
			r.log.Warn("claude compacted its context", "phase", phase, "allowed", r.cfg.AllowCompaction, "pre_tokens", s.PreTokens)
			r.event("compaction", map[string]any{"phase": phase, "session": n, "pre_tokens": s.PreTokens, "allowed": r.cfg.AllowCompaction})
		}
	}
}

func toolSummary(tu runner.ToolUse) string {
	switch {
	case tu.Command != "":
		return oneLine(tu.Command)
	case tu.FilePath != "":
		return tu.FilePath
	}
	return ""
}

// describeOutcome says in words how a session ended.
func describeOutcome(o runner.Outcome) string {
	var b strings.Builder
	kind := strings.ReplaceAll(string(o.Kind), "_", " ")
	b.WriteString(kind)
	if o.Reason != "" && o.Reason != kind {
		fmt.Fprintf(&b, ": %s", o.Reason)
	}
	if o.Result != nil && o.Result.IsError {
		if o.Result.APIErrorStatus != 0 {
			fmt.Fprintf(&b, " (API status %d)", o.Result.APIErrorStatus)
		}
		if t := oneLine(o.Result.Text); t != "" && !strings.Contains(b.String(), t) {
			fmt.Fprintf(&b, ": %s", t)
		}
	}
	if o.Kind == runner.OutcomeCrashed {
		if code := fmt.Sprintf("code %d", o.ExitCode); !strings.Contains(b.String(), code) {
			fmt.Fprintf(&b, " (exit %s)", code)
		}
		// The last line is where a CLI says why it stopped.
		if s := oneLine(lastLine(o.Stderr)); s != "" {
			fmt.Fprintf(&b, ": %s", s)
		}
	}
	if o.Err != nil {
		fmt.Fprintf(&b, ": %v", o.Err)
	}
	return b.String()
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n\t "), "\n")
	return lines[len(lines)-1]
}

// oneLine folds s to one line of at most 200 runes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}
