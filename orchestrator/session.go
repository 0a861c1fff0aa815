package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"time"

	"github.com/debussy-dev/debussy/estimator"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/record"
	"github.com/debussy-dev/debussy/recorder"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// runSession runs the phase's next session (package session owns it) and
// emits what it decides, on this goroutine.
func (p *phaseRun) runSession(ctx context.Context, prompt string) (session.Result, error) {
	n := p.rec.Record().Sessions + 1
	spawned := record.SessionSpawned{Phase: p.ph.ID, Session: n, PromptChars: len(prompt)}
	if !p.carry.lastTrigger.IsZero() {
		spawned.TurnaroundMs = new(p.now().Sub(p.carry.lastTrigger).Milliseconds())
		p.carry.lastTrigger = time.Time{}
	}
	p.rec.Emit(spawned)
	// A rerun after a crash resumes only phases with a session on record.
	if err := p.rec.Sync(); err != nil {
		return session.Result{}, err
	}
	// The handoff goes beside the session's log, in the phase's directory.
	if err := state.MkdirPrivate(p.files.store.PhaseDir(p.files.run, p.ph.ID)); err != nil {
		return session.Result{}, fmt.Errorf("%w: %w", ErrLedger, err)
	}
	cfg := p.launch.config(p, n, prompt)
	p.spend.StartSession()
	sess, err := p.sessions.Start(ctx, cfg)
	if err != nil {
		// claude missing, not a program, no pipe or working directory:
		// nothing ran, and a retry would meet the same (exit 2, no
		// commit). The error says "start claude:" already.
		return session.Result{}, fmt.Errorf("%w: %w", ErrSetup, err)
	}
	p.carry.undelivered = nil
	var cur current
	for {
		<-sess.Ready()
		effects, over := sess.Take()
		p.apply(n, effects, &cur)
		if over {
			break
		}
	}
	res := sess.Wait()
	effects, _ := sess.Take() // the interrupt's, after the stream ended
	p.apply(n, effects, &cur)

	p.carry.undelivered = res.Undelivered
	if len(res.Refused) > 0 {
		if p.carry.refused == nil {
			p.carry.refused = map[string]string{}
		}
		maps.Copy(p.carry.refused, res.Refused)
	}
	p.carry.pointsChecked = res.PointsChecked
	if res.Window > 0 && p.cfg.ContextWindow == 0 {
		p.carry.window = res.Window
	}
	// Every API call of the session, counted once: the Meter's figures
	// (a result's usage covers only its own turn).
	spent := p.spend.EndSession()
	p.recordSpend()
	snap, out := res.Snapshot, res.Outcome
	p.progress(n, snap, true)
	ended := record.SessionEnded{Phase: p.ph.ID, Session: n, Outcome: string(out.Kind), Reason: out.Reason,
		ExitCode: out.ExitCode, Failure: string(out.Failure.Class), ContextTokens: snap.Tokens, Percent: snap.Percent, ToolCalls: snap.ToolCalls,
		Zone: string(res.Zone), PolicyState: string(res.State), Trigger: string(res.Trigger), StopReason: res.Reason,
		Done: res.Done, Tokens: spent.Processed(), CostUSD: spent.CostUSD, ReportedCostUSD: spent.ReportedCostUSD,
		APITurns: spent.Turns, HookLatencyMs: out.HookLatencyMs(), PeakTokens: cur.peak, Model: snap.Model,
		Described: out.Describe(), DescribedPublic: out.Words()}
	if sig, _ := p.files.store.ReadSignal(p.files.run, p.ph.ID); sig != nil && sig.Status != state.StatusCompleted && out.Kind == runner.OutcomeCompleted {
		// The CLI's session completed; what the agent said of the phase
		// is what the reader needs: blocked on a question, or failed.
		ended.Described = string(sig.Status) + " (debussy done --status " + string(sig.Status) + ")"
		ended.DescribedPublic = ended.Described // debussy's own words
	}
	if !res.StopAt.IsZero() {
		ended.StopLatencyMs = new(p.now().Sub(res.StopAt).Milliseconds())
	}
	p.rec.Emit(ended)
	return res, nil
}

// current is what the running session's effects have said so far: the
// highest context, the main thread's tool in flight (for the live view).
type current struct {
	peak    int64
	running *session.Running
}

// apply emits what the session decided, and keeps what cur follows.
func (p *phaseRun) apply(n int, effects []session.Effect, cur *current) {
	for _, e := range effects {
		switch e := e.(type) {
		case session.Record:
			p.rec.Emit(e.Event) // the zone, nudges and handoffs the ledger keeps are among them
		case session.Log:
			p.rec.Emit(recorder.Log{Phase: p.ph.ID, Level: slogLevel(e.Level), Msg: e.Msg, Args: e.Args})
		case session.Observed:
			cur.peak = max(cur.peak, e.Snap.Tokens)
			cur.running = e.Running
			p.carry.events.Observe(e.Event)
			p.progressAt(n, e.Snap, false, e.Live, cur.running)
		case session.Tick:
			p.progressAt(n, e.Snap, false, nil, cur.running)
		case session.Emergency:
			p.rec.Emit(record.NoHandoff{Phase: p.ph.ID, Session: n})
		case session.StopDecided:
			p.carry.lastTrigger = e.At
		case session.SpendChanged:
			p.recordSpend() // live in `debussy status --json`
		}
	}
}

// slogLevel is a policy level as the log's.
func slogLevel(level policy.Level) slog.Level {
	switch level {
	case policy.LevelWarn:
		return slog.LevelWarn
	case policy.LevelInfo:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// config is phase p's session n as package session needs it.
func (l *launcher) config(p *phaseRun, n int, prompt string) session.Config {
	ph, c := p.ph, l.cfg
	// The same path `debussy handoff` writes to (state.Store.HandoffPath),
	// absolute: the agent is told it.
	handoff := l.store.HandoffPath(l.run, ph.ID, n)
	if abs, err := filepath.Abs(handoff); err == nil {
		handoff = abs
	}
	spec := l.spec(p, n, prompt)
	// An earlier session's answer about the window is reused: the runner
	// asks again only if init names another CLI version or model.
	known := l.answers.Known(spec.Model)
	spec.KnownContext = known
	pol := session.PolicyConfig(c, ph.ID, handoff, p.start.dir)
	pol.IsSelf = runner.SelfProgram(spec, l.self)
	var refused func(string, json.RawMessage, string) string
	pol.Boundary, refused = p.boundaryChecks()
	return session.Config{
		Phase: ph.ID, Number: n, Spec: spec, Carried: p.carry.undelivered,
		Policy: pol,
		// The estimator measures; the policy compares every threshold.
		Estimator: estimator.Config{Window: int64(c.ContextWindow), LearnedWindow: p.carry.window, Known: known,
			AwaitCLI: known == nil, PromptChars: len(prompt)},
		HandoffGraceTime: time.Duration(c.HandoffGraceTime),
		Facts: session.Facts{SignalPath: l.store.SignalPath(l.run, ph.ID), HandoffSignalPath: l.store.HandoffSignalPath(l.run, ph.ID),
			HandoffPath: handoff, PhaseFile: ph.Path},
		Meters: p.spend, Budget: &p.spend.Budget,
		Answers: l.answers, Root: p.start.dir, PhaseFile: ph.Path, PlanFile: l.plan, PhaseContent: ph.Content,
		PointsChecked: p.carry.pointsChecked, Live: l.live, Hard: l.hard, FailFast: errFailFast, Now: p.now,
		Boundary: refused,
	}
}

// spec is how runner starts phase p's session n.
func (l *launcher) spec(p *phaseRun, n int, prompt string) runner.Spec {
	ph := p.ph
	set := map[string]string{state.EnvRunID: l.run, state.EnvPhaseID: ph.ID, state.EnvStateDir: l.store.Dir}
	if l.traceEnv != nil {
		maps.Copy(set, l.traceEnv(ph.ID, n))
	}
	spec := runner.Spec{
		Bin:            l.cfg.ClaudeBin,
		Model:          p.model(),
		PermissionMode: l.cfg.PermissionMode,
		AllowedTools:   l.cfg.AllowedTools,
		ExtraArgs:      l.cfg.ExtraArgs,
		Dir:            p.start.dir,
		Prompt:         prompt,
		Env:            p.start.env, // no GIT_DIR sending the agent's git elsewhere
		SetEnv:         set,
		PathPrepend:    l.selfDir,
		ShellEnvFile:   filepath.Join(l.store.PhaseDir(l.run, ph.ID), "agent-env.sh"),
		LogPath:        filepath.Join(l.store.PhaseDir(l.run, ph.ID), fmt.Sprintf("session-%d.jsonl", n)),
		IdleTimeout:    time.Duration(l.cfg.IdleTimeout),
		SessionTimeout: time.Duration(l.cfg.SessionTimeout),
		StopGrace:      time.Duration(l.cfg.StopGrace),
		CancelGrace:    l.grace,
		AllowCompact:   l.cfg.AllowCompaction,
		FirstContact:   !l.reached.Load(),
		Logger:         l.log,
	}
	p.box(&spec)
	return spec
}

// oneLine folds s to one line of at most 200 runes.
func oneLine(s string) string { return text.OneLine(s, 200) }

// recordSpend emits the phase's figures from its account: the ledger and
// `debussy status --json` show them live.
func (p *phaseRun) recordSpend() {
	ec, tokens, cost := p.spend.Figures(p.now())
	p.rec.Emit(recorder.Spend{Phase: p.ph.ID, Economics: ec, Tokens: tokens, CostUSD: cost})
}

// model is the model the phase's sessions run: the fallback once a limit
// held for the configured one, else the configured one.
func (p *phaseRun) model() string {
	if m := p.rec.Record().Model; m != "" {
		return m
	}
	return p.cfg.Model
}

// progress reports a session's snapshot to the live view.
func (p *phaseRun) progress(session int, snap estimator.Snapshot, ended bool) {
	p.progressAt(session, snap, ended, nil, nil)
}

// progressAt is progress with the Meters' figures as they were at the
// event (live, taken on the session's reader), or as they are now (nil),
// and the tool the session runs (nil: none).
func (p *phaseRun) progressAt(n int, snap estimator.Snapshot, ended bool, live *session.Live, running *session.Running) {
	if !p.launch.live {
		return
	}
	rec := p.rec.Record()
	pr := Progress{Phase: p.ph.ID, Title: p.ph.Title, Session: n, Snapshot: snap,
		Restarts: rec.Restarts, Started: rec.StartedAt, Ended: ended, Zone: rec.Zone, WaitingUntil: rec.WaitingUntil}
	if !ended {
		pr.Running = running
	}
	if live == nil {
		l := p.spend.Live(p.now())
		live = &l
	}
	pr.Tokens, pr.CostUSD, pr.Activity, pr.Budget = live.Tokens, live.CostUSD, live.Activity, live.Budget
	p.rec.Emit(pr)
}
