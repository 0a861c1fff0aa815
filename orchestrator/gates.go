package orchestrator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/debussy-dev/debussy/gate"
	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/outcome"
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
	return public.OwnErr(outcome.SetupFailure(fmt.Sprintf("phase %s %v: gate %s cannot run: %s is %s (exit %d); install %s, or set gate_commands: {%s: \"…\"} in .debussy.yaml (it replaces the plan's command) — no agent session can fix this",
		phase, ErrPhaseFailed, g.Gate.Name, g.Missing(), what, g.ExitCode, g.Missing(), strconv.Quote(g.Gate.Name))))
}

// runGates runs the phase's gates one by one where its sessions run, with
// their environment (gitcommit's ChildEnv), and stops at the first
// failure. ok is true when all passed.
func (p *phaseRun) runGates(ctx context.Context) (results []gate.Result, ok bool) {
	ph := p.ph
	if len(ph.Gates) == 0 {
		p.rec.Emit(record.NoGates{Phase: ph.ID})
		return nil, true
	}
	for _, g := range ph.Gates {
		if g.Unchecked {
			// Nothing can run it: it is neither passed nor failed, and the
			// summary lists it as UNCHECKED.
			p.rec.Emit(record.Gate{Phase: ph.ID, Gate: g.Name, Unchecked: true, Requirement: g.Requirement})
			continue
		}
		p.rec.Emit(record.GateStarted{Phase: ph.ID, Gate: g.Name, Command: g.Command})
		var res gate.Result
		if wrapper, env, err := p.gateCommand(p.start.env); err != nil {
			res = gate.Result{Gate: g, Err: err}
		} else {
			res = gate.RunWrapped(ctx, wrapper, p.start.dir, env, g, time.Duration(p.cfg.GateTimeout))
		}
		results = append(results, res)
		p.rec.Emit(ranGate(ph.ID, g.Name, g.Command, res, results))
		if !res.Passed() {
			return results, false
		}
	}
	return results, true
}

// ranGate is the record of gate name (its command) run for phase: every
// key is set, zero or not. all are the phase's gates run so far.
func ranGate(phase, name, command string, res gate.Result, all []gate.Result) record.Gate {
	tail := text.Tail(res.Output, 2048)
	g := record.Gate{Phase: phase, Gate: name, Command: &command, ExitCode: &res.ExitCode,
		TimedOut: &res.TimedOut, DurationMs: new(res.Duration.Milliseconds()), OutputTail: &tail, Passed: res.Passed()}
	if !g.Passed {
		g.Problem, g.ProblemPublic = gate.Summary(all), outcome.GatePublic(all)
	}
	return g
}
