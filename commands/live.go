package commands

import (
	"io"
	"log/slog"

	"github.com/charmbracelet/lipgloss"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/policy"
	"github.com/debussy-dev/debussy/view"
)

// liveView is the run's live view on the terminal; nil (no terminal, JSON
// logs, CI) means plain log lines, and every method is then a no-op.
type liveView struct {
	live      *view.Live
	logs, out *view.LineWriter
	threshold int   // context_threshold, for the bar's colour
	maxTokens int64 // context_max_tokens: on a 1M window the cap is the lower limit
}

// startView starts the live view on stderr when it belongs there, and
// routes the logger's lines through it so they print above the panel.
func (e *Env) startView(logger *slog.Logger) *liveView {
	if !view.Enabled(e.Stderr, e.Getenv, e.jsonLogs) {
		return nil
	}
	h, ok := charmOf(logger)
	if !ok {
		return nil
	}
	// The profile comes from the terminal: charm would see the line writer,
	// not a terminal, and drop the colours.
	profile := lipgloss.NewRenderer(e.Stderr).ColorProfile()
	live := view.NewLive(e.Stderr, view.Options{Color: e.Getenv("NO_COLOR") == ""})
	v := &liveView{live: live, logs: live.Writer(e.Stderr), out: live.Writer(e.Stdout)}
	h.SetOutput(v.logs)
	h.SetColorProfile(profile)
	return v
}

// stdout is where the run's summary goes: through the view when it is on,
// since stdout and stderr usually share the screen.
func (v *liveView) stdout(w io.Writer) io.Writer {
	if v == nil {
		return w
	}
	return v.out
}

// progress feeds the view from the orchestrator's session loop.
func (v *liveView) progress() func(orchestrator.Progress) {
	if v == nil {
		return nil
	}
	return func(p orchestrator.Progress) {
		ph := phaseView(p)
		// The bar turns at the limit that acts for this window: the cap
		// (40 % of 1M by default) or the threshold, whichever is lower.
		ph.Threshold = v.threshold
		if w := p.Snapshot.Window; w > 0 {
			if l := policy.ContextLimitOf(v.threshold, v.maxTokens, w); l.At > 0 {
				ph.Threshold = int((l.At*100 + w - 1) / w)
			}
		}
		v.live.Update(ph)
	}
}

// phaseView is what the view shows of a phase's progress.
func phaseView(p orchestrator.Progress) view.Phase {
	s := p.Snapshot
	ph := view.Phase{ID: p.Phase, Title: p.Title, Session: p.Session, Tokens: s.Tokens, Window: s.Window,
		Estimated: s.Estimated, ToolCalls: s.ToolCalls, Zone: p.Zone, TotalTokens: p.Tokens,
		CostUSD: p.CostUSD, Restarts: p.Restarts, Started: p.Started, Ended: p.Ended, Activity: p.Activity}
	if !p.WaitingUntil.IsZero() {
		ph.WaitingUntil = p.WaitingUntil.Local() // the user's clock
	}
	ph.WindowPending = s.WindowPending
	if r := p.Running; r != nil {
		ph.Running, ph.RunningSince = r.Description, r.Since
		if ph.Running == "" {
			ph.Running = r.Tool
		}
	}
	if b := p.Budget; b != nil {
		ph.BudgetScope, ph.BudgetLevel, ph.BudgetPct = b.Scope, b.Level, b.UsedPct
	}
	return ph
}

// hold takes the panel and the log lines off the screen while a question
// is asked there; release brings them back.
func (v *liveView) hold() {
	if v != nil {
		v.live.Hold()
	}
}

func (v *liveView) release() {
	if v != nil {
		v.live.Release()
	}
}

// close erases the panel and writes any partial line, before the run's
// last words reach the terminal.
func (v *liveView) close() {
	if v == nil {
		return
	}
	v.live.Close()
	v.logs.Flush()
	v.out.Flush()
}
