package commands

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/debussy-dev/debussy/orchestrator"
	"github.com/debussy-dev/debussy/plans"
	"github.com/debussy-dev/debussy/runner"
	"github.com/debussy-dev/debussy/sandbox"
	"github.com/debussy-dev/debussy/state"
)

// preflightMode says how far preflight goes and whether it stops at the
// first refusal.
type preflightMode int

const (
	// preflightRun is the run's own checks before orchestrator.Run (which
	// then locks, picks the phases and refuses a tree without a commit or
	// with changes, as Check does): it stops at the first refusal.
	preflightRun preflightMode = iota
	// preflightDry adds orchestrator.Check and what the run would meet at
	// its first session (claude refusing the permission mode, a gate
	// program missing); it stops at the first refusal, as the run would.
	preflightDry
	// preflightAll is preflightDry that goes on after a refusal, for
	// check: every problem, each with its fix.
	preflightAll
)

// preflight is what stands between a run and its first session, found by
// the one code path run, --dry-run and check share: the run refuses on
// Refusals[0] at once; Later would stop it at its first session (exit 2
// all the same).
type preflight struct {
	Preview  *orchestrator.Preview // nil unless orchestrator.Check ran and passed
	Refusals []error
	Later    []string
	// SandboxAvail is what the machine offers for the run's boundary,
	// Boundary the decision (its Line for the run's first lines); zero
	// when preflight stopped before.
	SandboxAvail sandbox.Availability
	Boundary     sandbox.Decision
}

// problems is every problem, refusals first, as lines with their fix.
func (p *preflight) problems() []string {
	var out []string
	for _, err := range p.Refusals {
		out = append(out, err.Error())
	}
	return append(out, p.Later...)
}

// err is the error a run would end with: the first refusal, or the later
// problems counted (exit 2 either way).
func (p *preflight) err() error {
	switch {
	case len(p.Refusals) > 0:
		return p.Refusals[0]
	case len(p.Later) > 0:
		return hereError(p.Later)
	}
	return nil
}

// preflight checks, in the run's order, what would stop a run of plan in
// ws. In preflightRun and preflightDry it returns at the first refusal.
func (e *Env) preflight(ctx context.Context, ws *workspace, plan *plans.Plan, opts runOptions, mode preflightMode) *preflight {
	p := &preflight{}
	refuse := func(err error) bool {
		if err == nil {
			return false
		}
		p.Refusals = append(p.Refusals, err)
		return mode != preflightAll
	}
	setup := func(err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("%w: %w", orchestrator.ErrSetup, err)
	}
	switch {
	case ws.Repo == nil && ws.RepoErr != nil:
		if refuse(setup(ws.RepoErr)) {
			return p
		}
	case ws.Repo == nil:
		if refuse(fmt.Errorf("%w: %s is not inside a git repository; debussy commits the agent's work, so run it in one: git init && git add -A && git commit -m \"initial commit\"",
			orchestrator.ErrSetup, ws.Root)) {
			return p
		}
	case ws.Config.AutoCommit:
		// An unfinished merge or rebase, or a git feature debussy's
		// commits would not honour, is refused now rather than at the
		// first checkpoint.
		if refuse(setup(ws.Repo.Preflight())) {
			return p
		}
	}
	if _, err := runner.LookPath(ws.Config.ClaudeBin); refuse(setup(err)) {
		return p
	}
	if ws.Repo != nil && ws.Config.StrictGit && ws.Repo.Mode() != "git" {
		if refuse(fmt.Errorf("%w: strict_git: git is not installed here (without it, go-git commits only where its answer is git's: docs/commits.md); install git, or set strict_git: false", orchestrator.ErrSetup)) {
			return p
		}
	}
	// The boundary: sandbox: on where none can be made is refused.
	avail, d, err := e.sandboxCheck(ctx, ws.Config, ws.Root)
	p.SandboxAvail, p.Boundary = avail, d
	if refuse(err) {
		return p
	}
	if mode == preflightRun {
		return p
	}
	if ws.Repo != nil && plan.Err() == nil { // check goes on past plan errors
		preview, err := orchestrator.Check(orchestrator.Options{
			Config: ws.Config, Plan: plan, Repo: ws.Repo, Store: state.New(filepath.Join(ws.Root, state.DirName)),
			PhaseID: opts.Phase, Only: opts.Only, Restart: opts.Restart, Base: opts.Base, Push: opts.Push,
		})
		if refuse(err) {
			return p
		}
		p.Preview = preview
	}
	perm, gates := e.hereProblems(ws.Config.PermissionMode, plan)
	if perm != "" {
		p.Later = append(p.Later, perm)
	}
	p.Later = append(p.Later, gates...)
	return p
}
