package commands

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/state"
)

// answerOptions is `debussy answer`.
type answerOptions struct {
	Phase string // "" with --answer on run: the single blocked phase
	Text  string
}

func (e *Env) answerCommand() *cli.Command {
	return &cli.Command{
		Name:      "answer",
		Usage:     "answer a blocked phase's question; the next run resumes the phase with it",
		ArgsUsage: "TEXT",
		Description: `A phase whose agent ran 'debussy done --status blocked --reason "..."' stops the
run; 'debussy status' and the notification show its question. This records your
answer; the next 'debussy run' resumes the phase from its checkpoint with the
question and the answer in its prompt, as a new attempt of the same phase.

  debussy answer --phase 2 "the key is in vault at secret/staging/api"

The answer is redacted like any prompt text. A phase that is not blocked is an
error (exit 2). 'debussy run PLAN --answer "..."' does the same for the run's
single blocked phase (or the --only phase).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "the blocked phase's `ID` (default: the only blocked phase)"},
		},
		Action: func(c *cli.Context) error {
			msg := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if msg == "" {
				return usageErr(c, "missing TEXT: debussy answer --phase ID \"your answer\"")
			}
			return e.answer(answerOptions{Phase: strings.TrimSpace(c.String("phase")), Text: msg})
		},
	}
}

func (e *Env) answer(opts answerOptions) error {
	_, root, err := e.findRepo()
	if err != nil {
		return err
	}
	store := state.New(filepath.Join(root, ".debussy"))
	run, rec, err := blockedPhase(store, opts.Phase)
	if err != nil {
		return err
	}
	if err := store.WriteAnswer(run.ID, state.Answer{Phase: rec.ID, Question: rec.Question, Text: opts.Text, At: time.Now()}); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "debussy: answer recorded for phase %s (blocked in run %s); the next `debussy run` resumes it with your answer\n", rec.ID, run.ID)
	return nil
}

// blockedPhase finds the phase an answer is for: phase (its newest record
// must be blocked), or with phase "" the newest run's only blocked phase.
// Anything else is a usage error (exit 2) that says what is blocked.
func blockedPhase(store *state.Store, phase string) (*state.Run, *state.PhaseRecord, error) {
	l, err := store.Load()
	if err != nil {
		return nil, nil, err
	}
	if phase == "" {
		run, blocked := l.Blocked()
		switch {
		case len(blocked) == 1:
			return run, blocked[0], nil
		case len(blocked) > 1:
			var ids []string
			for _, p := range blocked {
				ids = append(ids, p.ID)
			}
			return nil, nil, fmt.Errorf("%w: phases %s are blocked; say which with --phase ID (or --only ID on run)", ErrUsage, strings.Join(ids, ", "))
		}
		return nil, nil, fmt.Errorf("%w: no phase is blocked; nothing to answer (debussy status shows each phase)", ErrUsage)
	}
	run, rec := l.LastRecord(phase)
	switch {
	case rec == nil:
		return nil, nil, fmt.Errorf("%w: phase %s has not run; only a blocked phase takes an answer", ErrUsage, phase)
	case rec.Status != state.StatusBlocked:
		return nil, nil, fmt.Errorf("%w: phase %s is not blocked (run %s left it %s); only a blocked phase takes an answer", ErrUsage, phase, run.ID, rec.Status)
	}
	return run, rec, nil
}

// blockedLines are what status says under its table of a blocked phase:
// its question, the answer if one is recorded, and the command.
func blockedLines(store *state.Store, run *state.Run) []string {
	var out []string
	for _, p := range run.Phases {
		if p.Status != state.StatusBlocked {
			continue
		}
		q := p.Question
		if q == "" {
			q = p.LastError
		}
		out = append(out, fmt.Sprintf("phase %s is blocked: %s", p.ID, text.OneLine(q, 300)))
		if a, err := store.ReadAnswer(run.ID, p.ID); err == nil && a != nil {
			out = append(out, fmt.Sprintf("  answered: %s — the next `debussy run` resumes it", text.OneLine(a.Text, 300)))
			continue
		}
		out = append(out, "  answer with: "+state.AnswerCommand(p.ID)+", then run again")
	}
	return out
}
