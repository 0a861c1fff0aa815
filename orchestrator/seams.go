package orchestrator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/debussy-dev/debussy/checkpoint"
	"github.com/debussy-dev/debussy/gitcommit"
	"github.com/debussy-dev/debussy/secrets"
	"github.com/debussy-dev/debussy/session"
	"github.com/debussy-dev/debussy/state"
)

// The phase's two seams, declared where they are used: what runs a session
// and what commits and writes checkpoints. A phase gets the real ones
// (claude through package session, git through gitcommit); the
// orchestrator's tests give fakes, so the decisions between sessions —
// restart, retry, usage limit, budget — are tested without a process. The
// end-to-end suite (tests/) keeps the real CLI and real git.

// Sessions starts a phase's sessions.
type Sessions interface {
	Start(ctx context.Context, cfg session.Config) (Session, error)
}

// Session is a running session as the phase reads it: its effects as they
// come (session.Session's queue), then its result.
type Session interface {
	Ready() <-chan struct{}
	Take() ([]session.Effect, bool)
	Wait() session.Result
}

// claudeSessions runs claude (package session).
type claudeSessions struct{}

func (claudeSessions) Start(ctx context.Context, cfg session.Config) (Session, error) {
	s, err := session.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Committer is where a phase's work is committed and its checkpoints are
// written.
type Committer interface {
	Head() (string, error)
	CommitAll(ctx context.Context, msg string, opts ...gitcommit.CommitOption) (gitcommit.Commit, error)
	// Changes are the files changed since base, for the checkpoint.
	Changes(base string) ([]gitcommit.Change, error)
	// WriteCheckpoint saves cp as path+".json" and path+".md", redacted.
	WriteCheckpoint(path string, cp checkpoint.Checkpoint) error
}

// gitCommitter commits with gitcommit in the phase's repository and writes
// checkpoints under .debussy/.
type gitCommitter struct{ *gitcommit.Repo }

func (g gitCommitter) WriteCheckpoint(path string, cp checkpoint.Checkpoint) error {
	js, _ := json.MarshalIndent(cp, "", "  ")
	return errors.Join(state.WriteFile(path+".json", secrets.Default().JSON(js)),
		state.WriteFile(path+".md", []byte(secrets.Redact(cp.Markdown()))))
}
