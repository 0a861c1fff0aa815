package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/state"
)

func (e *Env) doneCommand() *cli.Command {
	return &cli.Command{
		Name:  "done",
		Usage: "signal that a phase is finished (run by the agent)",
		Description: `The agent runs this from its Bash tool when a phase's work is done:

  debussy done --phase 2                      # completed: debussy runs the gates
  debussy done --phase 2 --status blocked --reason "needs an API key"
  debussy done --phase 2 --status failed --reason "tests cannot pass because ..."

It finds the active run through DEBUSSY_STATE_DIR and DEBUSSY_RUN_ID (set by
'debussy run' for the agent), else .debussy/ at the git root. --phase defaults
to DEBUSSY_PHASE_ID, the phase being run.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "phase `ID` (default: DEBUSSY_PHASE_ID, set inside a run)"},
			&cli.StringFlag{Name: "status", Value: "completed", Usage: "completed, blocked or failed"},
			&cli.StringFlag{Name: "reason", Usage: "why (required for blocked and failed)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			status := c.String("status")
			switch status {
			case "completed", "blocked", "failed":
			default:
				return usageErr(c, "--status %q: use completed, blocked or failed", status)
			}
			if status != "completed" && strings.TrimSpace(c.String("reason")) == "" {
				return usageErr(c, "--status %s needs --reason saying why: debussy done --status %s --reason \"...\"", status, status)
			}
			phase, err := e.phaseOf(c, "debussy done --phase ID")
			if err != nil {
				return err
			}
			act, rec, err := e.activeRun(phase)
			if err != nil {
				return err
			}
			// The ledger counts a session before it starts: Sessions is
			// the one running now.
			sig := state.Signal{Phase: phase, Status: state.Status(status), Reason: c.String("reason"), Session: rec.Sessions, At: time.Now()}
			if err := act.Store.WriteSignal(act.RunID, sig); err != nil {
				return err
			}
			fmt.Fprintf(e.Stdout, "debussy: phase %s marked %s; end your turn now — debussy takes it from here\n", sig.Phase, status)
			return nil
		},
	}
}

func (e *Env) progressCommand() *cli.Command {
	return &cli.Command{
		Name:      "progress",
		Usage:     "record a progress note for the phase's checkpoint (run by the agent)",
		ArgsUsage: "MESSAGE",
		Description: `The agent records what it finished or decided; if the session is restarted, the
notes open the next session's checkpoint.

  debussy progress --phase 2 "endpoints done, tests next"

--phase defaults to DEBUSSY_PHASE_ID, the phase being run.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "phase `ID` (default: DEBUSSY_PHASE_ID, set inside a run)"},
		},
		Action: func(c *cli.Context) error {
			msg := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if msg == "" {
				return usageErr(c, "missing MESSAGE: debussy progress \"what was done or decided\"")
			}
			phase, err := e.phaseOf(c, fmt.Sprintf("debussy progress --phase ID %q", msg))
			if err != nil {
				return err
			}
			act, _, err := e.activeRun(phase)
			if err != nil {
				return err
			}
			return act.Store.AppendProgress(act.RunID, state.Progress{Phase: phase, Message: msg, At: time.Now()})
		},
	}
}

// phaseOf is --phase, else the phase being run (DEBUSSY_PHASE_ID, which
// debussy gives the agent). Missing both is a usage error that shows what
// to type.
func (e *Env) phaseOf(c *cli.Context, example string) (string, error) {
	if p := strings.TrimSpace(c.String("phase")); p != "" {
		return p, nil
	}
	if e.Getenv != nil {
		if p := strings.TrimSpace(e.Getenv(state.EnvPhaseID)); p != "" {
			return p, nil
		}
	}
	return "", usageErr(c, "missing --phase (%s not set: not inside a debussy run): %s", state.EnvPhaseID, example)
}

// activeRun finds the run the agent belongs to and the phase's record in
// it; a phase the run lacks is a usage error.
func (e *Env) activeRun(phase string) (*state.Active, *state.PhaseRecord, error) {
	dir, err := e.workDir()
	if err != nil {
		return nil, nil, err
	}
	act, err := state.FindActive(e.Getenv, dir)
	if err != nil {
		return nil, nil, err
	}
	l, err := act.Store.Load()
	if err != nil {
		return nil, nil, err
	}
	run := l.Run(act.RunID)
	if run == nil {
		return nil, nil, fmt.Errorf("%w: run %s is not in %s", state.ErrNoActiveRun, act.RunID, act.Store.Dir)
	}
	rec := run.Phase(phase)
	if rec == nil {
		ids := make([]string, 0, len(run.Phases))
		for _, p := range run.Phases {
			ids = append(ids, p.ID)
		}
		return nil, nil, fmt.Errorf("%w: no phase %q in run %s (phases: %s)", ErrUsage, phase, run.ID, strings.Join(ids, ", "))
	}
	return act, rec, nil
}
