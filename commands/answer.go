package commands

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/internal/text"
	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/secrets"
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

The answer is redacted like any prompt text. A second answer is added after the
first (the agent reads both), never put in its place. A phase that is not blocked
is an error (exit 2). Until it is answered, a blocked phase starts no session:
'debussy run' leaves it blocked (exit 1) unless --resume-blocked. 'debussy run PLAN --answer "..."' does the same for the run's
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
	// A second answer is added to the first, never put in its place: the
	// agent reads both, in order.
	answer, added := opts.Text, false
	prev, err := store.ReadAnswer(run.ID, rec.ID)
	if err != nil {
		return err
	}
	if prev != nil {
		if prev.Text == secrets.Redact(opts.Text) || strings.HasSuffix(prev.Text, "\n\n"+secrets.Redact(opts.Text)) {
			fmt.Fprintf(e.Stdout, "debussy: this answer is recorded already for phase %s; the next `debussy run` resumes it with your answer\n", rec.ID)
			return nil
		}
		answer, added = prev.Text+"\n\n"+opts.Text, true
	}
	if err := store.WriteAnswer(run.ID, state.Answer{Phase: rec.ID, Question: rec.Question, Text: answer, At: time.Now()}); err != nil {
		return err
	}
	if added {
		fmt.Fprintf(e.Stdout, "debussy: answer added after your earlier one for phase %s (blocked in run %s); the next `debussy run` resumes it with both\n", rec.ID, run.ID)
		return nil
	}
	fmt.Fprintf(e.Stdout, "debussy: answer recorded for phase %s (blocked in run %s); the next `debussy run` resumes it with your answer\n", rec.ID, run.ID)
	return nil
}

// blockedPhase finds the phase an answer is for: phase (its newest record
// must be blocked), or with phase "" the newest run's only blocked phase.
// Anything else is a usage error (exit 2) that says what is blocked. The
// run returned is the one whose session asked the question (asking).
func blockedPhase(store *state.Store, phase string) (*state.Run, *state.PhaseRecord, error) {
	l, err := store.Load()
	if err != nil {
		return nil, nil, err
	}
	if phase == "" {
		run, blocked := l.Blocked()
		switch {
		case len(blocked) == 1:
			run, rec := asking(l, run, blocked[0])
			return run, rec, nil
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
	run, rec = asking(l, run, rec)
	return run, rec, nil
}

// asking is the run whose session asked blocked phase rec's question: run
// itself, or, when run found the question unanswered and left the phase
// blocked without a session, the newest run before it in which a session
// of the phase ran (the one the next run resumes from, as
// state.Ledger.LastUnfinished finds it).
func asking(l *state.Ledger, run *state.Run, rec *state.PhaseRecord) (*state.Run, *state.PhaseRecord) {
	if rec.Sessions > 0 {
		return run, rec
	}
	for _, r := range l.NewestFirst() {
		if p := r.Phase(rec.ID); p != nil && p.Sessions > 0 {
			if p.Status == state.StatusBlocked {
				return r, p
			}
			break
		}
	}
	return run, rec
}

// answerOf is the answer recorded for blocked phase p of run, wherever
// its question was asked (asking); nil when there is none.
func answerOf(store *state.Store, run *state.Run, p *state.PhaseRecord) *state.Answer {
	if p.Sessions == 0 {
		if l, err := store.Load(); err == nil {
			run, p = asking(l, run, p)
		}
	}
	a, err := store.ReadAnswer(run.ID, p.ID)
	if err != nil {
		return nil
	}
	return a
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
		if a := answerOf(store, run, p); a != nil {
			out = append(out, fmt.Sprintf("  answered: %s — the next `debussy run` resumes it", text.OneLine(a.Text, 300)))
			continue
		}
		out = append(out, "  answer with: "+orchestrator.AnswerCommand(p.ID)+", then run again (unanswered, the phase starts no session; --resume-blocked resumes it anyway)")
	}
	return out
}
