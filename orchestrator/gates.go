package orchestrator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/record"
)

// missingError is why a phase whose gate could not run failed: the
// program, and how to install or configure it.
func missingError(phase string, g gate.Result) error {
	what := "not installed or not on PATH"
	if g.ExitCode == 126 {
		what = "not executable"
	}
	// debussy's own words and the program's name, never the command's
	// arguments: a CI log shows it whole (public.OwnErr).
	return public.OwnErr(setupFailure(fmt.Sprintf("phase %s %v: gate %s cannot run: %s is %s (exit %d); install %s, or set gate_commands: {%s: \"…\"} in .debussy.yaml (it replaces the plan's command) — no agent session can fix this",
		phase, ErrPhaseFailed, g.Gate.Name, g.Missing(), what, g.ExitCode, g.Missing(), strconv.Quote(g.Gate.Name))))
}

// setupFailure is a phase that failed on the setup, not on the agent's
// work: it reads "phase 2 failed: …" and exits 2 like ErrSetup.
type setupFailure string

func (e setupFailure) Error() string   { return string(e) }
func (e setupFailure) Unwrap() []error { return []error{ErrPhaseFailed, ErrSetup} }

// runGates runs the phase's gates one by one in the repository root, with
// env (gitcommit's ChildEnv), and stops at the first failure. ok is true
// when all passed.
func (p *phaseRun) runGates(ctx context.Context, root string, env []string) (results []gate.Result, ok bool) {
	r, ph := p.r, p.ph
	if len(ph.Gates) == 0 {
		r.log.Info("no gates: the agent's done signal decides", "phase", ph.ID)
		return nil, true
	}
	for _, g := range ph.Gates {
		if g.Unchecked {
			// Nothing can run it: it is neither passed nor failed, and the
			// summary lists it as UNCHECKED.
			r.log.Warn("gate unchecked: no command, not run", "phase", ph.ID, "gate", g.Name, "requirement", g.Requirement)
			r.recorder.event(record.Gate{Phase: ph.ID, Gate: g.Name, Unchecked: true})
			continue
		}
		r.log.Info("gate running", "phase", ph.ID, "gate", g.Name, "command", g.Command)
		gctx, span := r.Tracer.Start(ctx, "debussy.gate", attribute.String("debussy.phase", ph.ID), attribute.String("debussy.gate", g.Name))
		wrapper, genv, err := p.gateCommand(env)
		var res gate.Result
		if err != nil {
			res = gate.Result{Gate: g, Err: err}
		} else {
			res = gate.RunWrapped(gctx, wrapper, root, genv, g, time.Duration(r.cfg.GateTimeout))
		}
		endGateTrace(span, res)
		results = append(results, res)
		r.recorder.event(ranGate(ph.ID, g.Name, g.Command, res))
		if !res.Passed() {
			r.log.Warn("gate failed", "phase", ph.ID, "gate", g.Name, "problem", public.Words(gatePublic(results), gate.Summary(results)))
			return results, false
		}
		r.log.Info("gate passed", "phase", ph.ID, "gate", g.Name, "took", res.Duration.Round(time.Millisecond))
	}
	return results, true
}

// ranGate is the record of gate name (its command) run for phase: every
// key is set, zero or not.
func ranGate(phase, name, command string, res gate.Result) record.Gate {
	tail := text.Tail(res.Output, 2048)
	return record.Gate{Phase: phase, Gate: name, Command: &command, ExitCode: &res.ExitCode,
		TimedOut: &res.TimedOut, DurationMs: new(res.Duration.Milliseconds()), OutputTail: &tail}
}
