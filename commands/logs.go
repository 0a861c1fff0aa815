package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/public"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/state"
	"github.com/debussy-dev/debussy/view"
)

type logsOptions struct {
	Run, Phase string
	Session    int
	Follow     bool
	// Text asks for the agent's and its tools' text also where stdout is
	// not a terminal (--log-text).
	Text bool
	// Poll is how often --follow looks for more; 0 means 250 ms.
	Poll time.Duration
}

func (e *Env) logsCommand() *cli.Command {
	return &cli.Command{
		Name:  "logs",
		Usage: "show a session readably: the agent's text, tool calls, results, context per turn",
		Description: `Renders a session's raw stream (.debussy/runs/<run>/phase-<id>/session-<n>.jsonl) for reading:
the agent's text, each tool call with its short input, tool results cut to three
lines, the context size at each turn, and the session's result with its cost.

Without flags it shows the latest session of the latest run's latest phase. With
--follow it keeps printing as the session writes, goes on to the phase's next
session after a restart (and, without --phase, to the run's next phase), and
stops when the run ends or on Ctrl-C.

Examples:
  debussy logs                          # the latest session
  debussy logs --follow                 # watch a run from another terminal
  debussy logs --phase 2                # phase 2's latest session
  debussy logs --phase 2 --session 1    # its first session, before a restart
  debussy logs --run 20261121-2230-4f2c --phase 1 --log-text | less

On a terminal it shows the text; piped, or with CI=true, structure only (tool names,
paths in the repository, sizes, context, results): the agent's and its tools' text
stays in .debussy/ unless --log-text asks for it.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "run `ID` (default: the latest; debussy status shows it)"},
			&cli.StringFlag{Name: "phase", Usage: "phase `ID` (default: the run's latest phase with a session)"},
			&cli.IntFlag{Name: "session", Usage: "session `N`, from 1", DefaultText: "the phase's latest"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing as the session writes"},
			&cli.BoolFlag{Name: "log-text", Usage: "show the agent's text, tool inputs and results also where stdout is not a terminal or CI=true (by default a pipe gets structure only: names, sizes, paths, context, results)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "unexpected arguments: %s", strings.Join(c.Args().Slice(), " "))
			}
			if c.IsSet("session") && c.Int("session") < 1 {
				return usageErr(c, "--session %d: sessions count from 1", c.Int("session"))
			}
			return e.logs(c.Context, logsOptions{Run: c.String("run"), Phase: c.String("phase"),
				Session: c.Int("session"), Follow: c.Bool("follow"), Text: c.Bool("log-text")})
		},
	}
}

func (e *Env) logs(ctx context.Context, opts logsOptions) error {
	_, store, l, err := e.loadLedger()
	if err != nil {
		return err
	}
	run, later, err := shownRun(store, l)
	if err != nil {
		return err
	}
	if opts.Run != "" {
		later = nil
		run = l.Run(opts.Run)
		if run == nil {
			return notThereErr("no run %q in %s (debussy status --all lists the runs)", opts.Run, store.Dir)
		}
	}
	if run == nil {
		fmt.Fprintln(e.Stdout, (&noRunsYet{store.Dir}).Error()) // exit 0, as status and report
		return nil
	}
	rec, err := logsPhase(run, opts.Phase)
	if err != nil {
		return err
	}
	if later != nil {
		fmt.Fprintf(e.Stdout, "── %s\n", laterNote(run, later))
	}
	n := opts.Session
	if n == 0 {
		n = rec.Sessions
	} else if n > rec.Sessions {
		return fmt.Errorf("%w: --session %d: phase %s of run %s has %s", ErrUsage, n, rec.ID, run.ID, plural(rec.Sessions, "session"))
	}
	poll := opts.Poll
	if poll == 0 {
		poll = 250 * time.Millisecond
	}
	for {
		path := filepath.Join(store.PhaseDir(run.ID, rec.ID), fmt.Sprintf("session-%d.jsonl", n))
		title := ""
		if rec.Title != "" {
			title = " " + rec.Title
		}
		fmt.Fprintf(e.Stdout, "── run %s · phase %s%s · session %d · %s\n", run.ID, rec.ID, title, n, path)
		var next *state.PhaseRecord
		nextN := 0
		runID, phaseID, session := run.ID, rec.ID, n
		structure := !public.TextShown(e.Stdout, e.Getenv, opts.Text)
		told := func() ([]view.Told, string) { return sessionTold(store, runID, phaseID, session, structure) }
		err := showSession(ctx, e.Stdout, path, opts.Follow, poll, structure, told, func() (bool, error) {
			// The lock first: a session started before the run ended is
			// then seen by the look at the ledger below.
			info, held, err := store.Holder()
			if err != nil {
				return false, err
			}
			ended := !held || (info != nil && info.RunID != run.ID)
			l, err := store.Load()
			if err != nil {
				return false, err
			}
			now := l.Run(run.ID)
			if now == nil {
				return true, nil
			}
			switch cur := now.Phase(rec.ID); {
			case cur != nil && cur.Sessions > n && opts.Session != 0:
				return true, nil // the session asked for is over
			case cur != nil && cur.Sessions > n:
				next, nextN = cur, n+1 // the phase restarted
				return true, nil
			case opts.Phase == "":
				if p, _ := logsPhase(now, ""); p != nil && p.ID != rec.ID {
					next, nextN = p, p.Sessions // the run went on to another phase
					return true, nil
				}
			}
			return ended, nil
		})
		if err != nil || next == nil {
			return err
		}
		rec, n = next, nextN
	}
}

// logsPhase is the phase asked for, or the run's latest with a session.
func logsPhase(run *state.Run, id string) (*state.PhaseRecord, error) {
	var ran []string
	var latest *state.PhaseRecord
	for _, p := range run.Phases {
		if p.Sessions > 0 {
			ran = append(ran, p.ID)
			if latest == nil || !p.StartedAt.Before(latest.StartedAt) {
				latest = p
			}
		}
	}
	if len(ran) == 0 {
		return nil, notThereErr("run %s has no session yet", run.ID)
	}
	if id == "" {
		return latest, nil
	}
	if p := run.Phase(id); p != nil && p.Sessions > 0 {
		return p, nil
	}
	return nil, fmt.Errorf("%w: --phase %s: no session of it in run %s; phases with sessions: %s", ErrUsage, id, run.ID, strings.Join(ran, ", "))
}

// showSession renders the session log at path. With follow it waits at the
// end for more until done says the writer has finished (or ctx ends).
// told says what debussy told the session and why it ended, as far as the
// run's events know yet.
func showSession(ctx context.Context, w io.Writer, path string, follow bool, poll time.Duration, structure bool,
	told func() ([]view.Told, string), done func() (bool, error)) error {
	f, err := os.Open(path)
	// The session is recorded before its log's first line: wait for it,
	// unless the writer is done without one.
	for follow && errors.Is(err, os.ErrNotExist) {
		finished, derr := done()
		if derr != nil {
			return derr
		}
		if finished {
			if f, err = os.Open(path); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintln(w, "(this session wrote no log)")
				return nil
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
		f, err = os.Open(path)
	}
	if err != nil {
		return fmt.Errorf("open session log: %w", err)
	}
	defer f.Close()
	// The transcript writes line by line; the redactor must see each raw
	// line's rendering whole (a private key block, a CSV export in the
	// agent's text), as it does everywhere else.
	bw := secrets.NewBlockWriter(w)
	defer bw.Close()
	tr := view.NewTranscript(bw)
	if structure {
		tr.Structure()
	}
	early, _ := told()
	tr.Tell(early...)
	rd := bufio.NewReader(f)
	var partial []byte
	for {
		line, err := rd.ReadBytes('\n')
		partial = append(partial, line...)
		if err == nil {
			tr.Line(partial)
			partial = nil
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("write session log: %w", err)
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("read session log: %w", err)
		}
		if !follow {
			break
		}
		// At the end: a line still being written waits for its newline.
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write session log: %w", err)
		}
		finished, derr := done()
		if derr != nil {
			return derr
		}
		if finished {
			// One last read: the writer may have added lines before it ended.
			rest, _ := io.ReadAll(rd)
			partial = append(partial, rest...)
			break
		}
		select {
		case <-ctx.Done():
			return nil // Ctrl-C ends --follow; nothing failed
		case <-time.After(poll):
		}
	}
	for _, line := range strings.SplitAfter(string(partial), "\n") {
		if strings.TrimSpace(line) != "" {
			tr.Line([]byte(line))
		}
	}
	// Following, the events written meanwhile; the early ones are shown.
	all, why := told()
	if len(all) > len(early) {
		tr.Tell(all[len(early):]...)
	}
	tr.End(why)
	if err := bw.Close(); err != nil {
		return fmt.Errorf("write session log: %w", err)
	}
	return nil
}
