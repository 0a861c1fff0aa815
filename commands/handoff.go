package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/state"
)

// maxAgentHandoff bounds what is copied of the agent's handoff; the
// checkpoint bounds it again.
const maxAgentHandoff = 1 << 20

func (e *Env) handoffCommand() *cli.Command {
	return &cli.Command{
		Name:  "handoff",
		Usage: "end the session at a task boundary and go on in a fresh one from a handoff (run by the agent)",
		Description: `The agent runs this from its Bash tool after finishing a task, once it has
written its handoff (what is done, what remains, what the next session must know):

  debussy handoff --phase 2                          # the handoff path debussy named
  debussy handoff --phase 2 --file notes/handoff.md  # a handoff written elsewhere

debussy ends the session after this command, commits, and starts a fresh session
from the handoff. It counts as a restart (max_restarts). --file defaults to the
session's handoff path, .debussy/runs/<run>/phase-<id>/handoff-<n>.md; a file
elsewhere is copied there, secrets redacted. --phase defaults to
DEBUSSY_PHASE_ID, the phase being run.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "phase `ID` (default: DEBUSSY_PHASE_ID, set inside a run)"},
			&cli.StringFlag{Name: "file", Usage: "the handoff's `PATH` (default: the session's handoff path debussy named)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			phase, err := e.phaseOf(c, "debussy handoff --phase ID")
			if err != nil {
				return err
			}
			act, rec, err := e.activeRun(phase)
			if err != nil {
				return err
			}
			// The ledger counts a session before it starts: Sessions is
			// the one running now.
			n := rec.Sessions
			if n == 0 {
				return fmt.Errorf("%w: phase %s of run %s has no session yet", state.ErrNoActiveRun, phase, act.RunID)
			}
			path := act.Store.HandoffPath(act.RunID, phase, n)
			if f := strings.TrimSpace(c.String("file")); f != "" {
				path = e.abs(f)
			}
			text, err := readAgentHandoff(path)
			if err != nil {
				return usageErr(c, "%v: write your handoff there first, then run debussy handoff --phase %s", err, phase)
			}
			sig := state.HandoffSignal{Phase: phase, Session: n, At: time.Now()}
			if _, err := act.Store.WriteHandoff(act.RunID, sig, text); err != nil {
				return err
			}
			fmt.Fprintln(e.Stdout, "debussy: handoff recorded; end your turn now — debussy restarts the session from it")
			return nil
		},
	}
}

// readAgentHandoff is the handoff's text, bounded; a missing or blank
// file is an error saying which.
func readAgentHandoff(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no handoff at %s", path)
	}
	if err != nil {
		return "", fmt.Errorf("read handoff: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAgentHandoff))
	if err != nil {
		return "", fmt.Errorf("read handoff %s: %w", path, err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("the handoff at %s is empty", path)
	}
	return string(data), nil
}
