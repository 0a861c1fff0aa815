package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strconv"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/spend"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/telemetry"
	"go.opentelemetry.io/otel/attribute"
)

// runSession runs the phase's next session (package session owns it) and
// keeps the ledger up to date with what it decides, on this goroutine.
func (p *phaseRun) runSession(ctx context.Context, prompt string) (session.Result, error) {
	r := p.r
	p.rec.Sessions++
	n := p.rec.Sessions
	var res session.Result
	var startErr error
	p.sessionTrace = p.startSessionTrace(ctx, n)
	defer func() { p.endSessionTrace(res, startErr) }()
	// A rerun after a crash resumes only phases with a session on record.
	if err := r.recorder.savePhase(p.rec); err != nil {
		return session.Result{}, err
	}
	r.recorder.event(record.SessionSpawned{Phase: p.ph.ID, Session: n, PromptChars: len(prompt)})
	if !p.lastTrigger.IsZero() {
		p.rec.RestartTurnaroundMs = append(p.rec.RestartTurnaroundMs, r.now().Sub(p.lastTrigger).Milliseconds())
		p.lastTrigger = time.Time{}
	}
	// The handoff goes beside the session's log, in the phase's directory.
	if err := state.MkdirPrivate(r.Store.PhaseDir(r.id, p.ph.ID)); err != nil {
		return session.Result{}, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	cfg := p.sessionConfig(ctx, n, prompt)
	p.spendOf().StartSession()
	sess, err := p.sessions.Start(ctx, cfg)
	startErr = err
	if err != nil {
		// claude missing, not a program, no pipe or working directory:
		// nothing ran, and a retry would meet the same (exit 2, no
		// commit). The error says "start claude:" already.
		return session.Result{}, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	p.undelivered, p.running = nil, nil
	p.rec.Zone = string(estimator.ZoneGreen)
	p.rec.Zones = append(p.rec.Zones, p.rec.Zone)
	for {
		<-sess.Ready()
		effects, over := sess.Take()
		p.apply(n, effects)
		if over {
			break
		}
	}
	res = sess.Wait()
	effects, _ := sess.Take() // the interrupt's, after the stream ended
	p.apply(n, effects)

	p.undelivered = res.Undelivered
	if len(res.Refused) > 0 {
		if p.refused == nil {
			p.refused = map[string]string{}
		}
		maps.Copy(p.refused, res.Refused)
	}
	p.pointsChecked = res.PointsChecked
	if !res.StopAt.IsZero() {
		p.rec.StopLatencyMs = append(p.rec.StopLatencyMs, r.now().Sub(res.StopAt).Milliseconds())
	}
	if res.Window > 0 && r.cfg.ContextWindow == 0 {
		p.window = res.Window
	}
	// Every API call of the session, counted once: the Meter's figures
	// (a result's usage covers only its own turn).
	spent := p.spendOf().EndSession()
	p.recordSpend()
	snap, out := res.Snapshot, res.Outcome
	p.progress(n, snap, true)
	if err := r.recorder.savePhase(p.rec); err != nil {
		return res, err
	}
	r.recorder.event(record.SessionEnded{Phase: p.ph.ID, Session: n, Outcome: string(out.Kind), Reason: out.Reason,
		ExitCode: out.ExitCode, Failure: string(out.Failure.Class), ContextTokens: snap.Tokens, Percent: snap.Percent, ToolCalls: snap.ToolCalls,
		Zone: string(res.Zone), PolicyState: string(res.State), Trigger: string(res.Trigger), StopReason: res.Reason,
		Done: res.Done, Tokens: spent.Processed(), CostUSD: spent.CostUSD, ReportedCostUSD: spent.ReportedCostUSD,
		APITurns: spent.Turns, HookLatencyMs: out.HookLatencyMs()})
	outcome := public.Words(out.Words(), out.Describe())
	if sig, _ := r.Store.ReadSignal(r.id, p.ph.ID); sig != nil && sig.Status != state.StatusCompleted && out.Kind == runner.OutcomeCompleted {
		// The CLI's session completed; what the agent said of the phase
		// is what the reader needs: blocked on a question, or failed.
		outcome = public.Own(string(sig.Status) + " (debussy done --status " + string(sig.Status) + ")")
	}
	r.log.Info("session ended", "phase", p.ph.ID, "session", n, "outcome", outcome,
		"context_percent", int(snap.Percent), "tool_calls", snap.ToolCalls)
	return res, nil
}

// apply does what the session decided: records, logs, and the changes to
// the phase's own record (saved through the recorder).
func (p *phaseRun) apply(n int, effects []session.Effect) {
	r := p.r
	for _, e := range effects {
		switch e := e.(type) {
		case session.Record:
			r.recorder.event(e.Event) // the event log redacts what it writes
		case session.Log:
			logAt(r.log, e.Level, e.Msg, e.Args...)
		case session.Observed:
			p.contextPeak = max(p.contextPeak, e.Snap.Tokens)
			p.events.Observe(e.Event)
			p.running = e.Running
			p.progressAt(n, e.Snap, false, e.Live)
		case session.Tick:
			p.progress(n, e.Snap, false)
		case session.ZoneChanged:
			p.rec.Zone = string(e.Zone)
			if k := len(p.rec.Zones); k > 0 {
				p.rec.Zones[k-1] = p.rec.Zone
			}
			_ = r.recorder.savePhase(p.rec) // live in `debussy status --json`; the session's end saves again
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
			p.recordSpend()
			_ = r.recorder.savePhase(p.rec) // live in `debussy status --json`; the session's end saves again
		}
	}
}

// maxNudges bounds the nudges a phase keeps in the ledger.
const maxNudges = 100

// logAt logs at a policy level.
func logAt(log *slog.Logger, level policy.Level, msg string, args ...any) {
	switch level {
	case policy.LevelWarn:
		log.Warn(msg, args...)
	case policy.LevelInfo:
		log.Info(msg, args...)
	case policy.LevelDebug:
		log.Debug(msg, args...)
	}
}

// sessionConfig is the phase's session n as package session needs it.
func (p *phaseRun) sessionConfig(ctx context.Context, n int, prompt string) session.Config {
	r := p.r
	ph, c := p.ph, r.cfg
	// The same path `debussy handoff` writes to (state.Store.HandoffPath),
	// absolute: the agent is told it.
	handoff := r.Store.HandoffPath(r.id, ph.ID, n)
	if abs, err := filepath.Abs(handoff); err == nil {
		handoff = abs
	}
	spec := p.sessionSpec(n, prompt)
	// An earlier session's answer about the window is reused: the runner
	// asks again only if init names another CLI version or model.
	known := r.answers.Known(spec.Model)
	spec.KnownContext = known
	ps := p.spendOf()
	pol := session.PolicyConfig(c, ph.ID, handoff, p.dir)
	pol.IsSelf = runner.SelfProgram(spec, r.Self)
	var refused func(string, json.RawMessage, string) string
	pol.Boundary, refused = p.boundaryChecks()
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
		Answers: &r.answers, Root: p.dir, PhaseFile: ph.Path, PlanFile: r.Plan.Path, PhaseContent: ph.Content,
		PointsChecked: p.pointsChecked, Live: r.Progress != nil, Hard: r.Hard, FailFast: errFailFast, Now: r.now,
		Boundary: refused,
	}
}

// sessionSpec is how runner starts the phase's session n.
func (p *phaseRun) sessionSpec(n int, prompt string) runner.Spec {
	r := p.r
	ph := p.ph
	spec := runner.Spec{
		Bin:            r.cfg.ClaudeBin,
		Model:          p.model(),
		PermissionMode: r.cfg.PermissionMode,
		AllowedTools:   r.cfg.AllowedTools,
		ExtraArgs:      r.cfg.ExtraArgs,
		Dir:            p.dir,
		Prompt:         prompt,
		Env:            p.env, // no GIT_DIR sending the agent's git elsewhere
		SetEnv: p.withTraceEnv(n, map[string]string{
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
	p.box(&spec)
	return spec
}

// oneLine folds s to one line of at most 200 runes.
func oneLine(s string) string { return text.OneLine(s, 200) }

// spendOf is phase p's spend account in this run, opened on first use (a
// resumed phase's counts what its earlier runs spent).
func (p *phaseRun) spendOf() *spend.Phase {
	r := p.r
	if p.spend == nil {
		p.spend = r.spend.Phase(p.rec, p.prevSpend)
	}
	return p.spend
}

// recordSpend writes the phase's and the run's economics into the ledger's
// records from the account (the caller saves).
// The run's economics follow at the next save (recorder.savePhase).
func (p *phaseRun) recordSpend() { p.spendOf().RecordPhase(p.r.now()) }

// model is the model the phase's sessions run: the fallback once a limit
// held for the configured one, else the configured one.
func (p *phaseRun) model() string {
	r := p.r
	if p.rec.Model != "" {
		return p.rec.Model
	}
	return r.cfg.Model
}

// progress reports a session's snapshot to Options.Progress, if set.
func (p *phaseRun) progress(session int, snap estimator.Snapshot, ended bool) {
	p.progressAt(session, snap, ended, nil)
}

// progressAt is progress with the Meters' figures as they were at the
// event (live, taken on the session's reader), or as they are now (nil).
func (p *phaseRun) progressAt(n int, snap estimator.Snapshot, ended bool, live *session.Live) {
	r := p.r
	if r.Progress == nil {
		return
	}
	pr := Progress{Phase: p.ph.ID, Title: p.ph.Title, Session: n, Snapshot: snap,
		Tokens: p.rec.PhaseTokens(), CostUSD: p.rec.PhaseCostUSD(), Restarts: p.rec.Restarts, Started: p.rec.StartedAt, Ended: ended, Zone: p.rec.Zone,
		WaitingUntil: p.rec.WaitingUntil}
	if !ended {
		pr.Running = p.running
	}
	if live != nil {
		pr.Tokens, pr.CostUSD, pr.Activity, pr.Budget = live.Tokens, live.CostUSD, live.Activity, live.Budget
	} else {
		p.liveEconomics(&pr)
	}
	r.Progress(pr)
}

// liveEconomics fills a live view's figures from the Meters.
func (p *phaseRun) liveEconomics(pr *Progress) {
	r := p.r
	l := p.spendOf().Live(r.now())
	pr.Tokens, pr.CostUSD, pr.Activity, pr.Budget = l.Tokens, l.CostUSD, l.Activity, l.Budget
}

// startSessionTrace starts session n's span under the phase's and returns
// its context, which the child's TRACEPARENT names (withTraceEnv).
func (p *phaseRun) startSessionTrace(ctx context.Context, n int) context.Context {
	r := p.r
	if p.trace != nil {
		ctx = p.trace
	}
	ctx, span := r.Tracer.Start(ctx, "debussy.session", attribute.String("debussy.run", r.id),
		attribute.String("debussy.phase", p.ph.ID), attribute.Int("debussy.session", n),
		attribute.Int("debussy.attempt", p.rec.Attempts))
	p.sessionSpan = span
	p.contextPeak = 0
	return ctx
}

func (p *phaseRun) endSessionTrace(res session.Result, startErr error) {
	span := p.sessionSpan
	p.sessionSpan, p.sessionTrace = nil, nil
	if span == nil {
		return
	}
	if startErr != nil {
		telemetry.End(span, "start failed")
		return
	}
	out := res.Outcome
	peak := max(p.contextPeak, res.Snapshot.Tokens)
	attrs := []attribute.KeyValue{attribute.String("debussy.outcome", string(out.Kind)),
		attribute.Int("debussy.exit_code", out.ExitCode), attribute.Int64("debussy.context.peak_tokens", peak),
		attribute.Float64("debussy.context.percent", res.Snapshot.Percent), attribute.Int("debussy.tool_calls", res.Snapshot.ToolCalls)}
	if res.Trigger != "" {
		attrs = append(attrs, attribute.String("debussy.restart_trigger", string(res.Trigger)))
	}
	if c := out.Failure.Class; c != "" {
		attrs = append(attrs, attribute.String("debussy.failure_class", string(c)))
	}
	if res.Snapshot.Model != "" {
		attrs = append(attrs, attribute.String("debussy.model", res.Snapshot.Model))
	}
	if rs := out.Result; rs != nil {
		attrs = append(attrs, attribute.Float64("debussy.cost_usd", rs.CostUSD), attribute.Int("debussy.api_turns", rs.NumTurns),
			attribute.Int64("debussy.tokens", rs.Usage.InputTokens+rs.Usage.OutputTokens+rs.Usage.CacheReadInputTokens+rs.Usage.CacheCreationInputTokens))
	}
	failed := ""
	if out.Failure.Class != "" && string(out.Failure.Class) != "none" {
		failed = string(out.Failure.Class)
	}
	telemetry.End(span, failed, attrs...)
}

// withTraceEnv adds to the child's environment the TRACEPARENT of session
// n's span and its run, phase and session as resource attributes; set
// unchanged when tracing is off.
func (p *phaseRun) withTraceEnv(n int, set map[string]string) map[string]string {
	r := p.r
	if p.sessionTrace == nil || !r.Tracer.On() {
		return set
	}
	for k, v := range r.Tracer.ChildEnv(p.sessionTrace, attribute.String("debussy.run", r.id),
		attribute.String("debussy.phase", p.ph.ID), attribute.String("debussy.session", strconv.Itoa(n))) {
		set[k] = v
	}
	return set
}
