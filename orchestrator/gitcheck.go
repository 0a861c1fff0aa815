package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/debussy-dev/debussy/gitcommit"
)

// verifyTimeout bounds git's check of one commit.
const verifyTimeout = 2 * time.Minute

// ErrGitDisagrees ends a phase under strict_git when real git would have
// committed something else than debussy's auto-commit.
var ErrGitDisagrees = errors.New("git disagrees with debussy's commit")

// verifyCommit reports where git's verdict replaced debussy's staging in
// the commit just made (Commit.GitReplaced: the commit holds git's), and
// otherwise asks real git, when it is installed, whether the commit holds
// what `git add -A` would have staged (gitcommit.Verify; not asked again
// for a commit git staged at commit time, Commit.StagedByGit).
// It runs between sessions, never while one waits, and without the run's
// lock. A disagreement is an event, a loud warning naming the paths and a
// reproduction under the run's directory; with strict_git the phase ends
// before its next session (p.gitDisagrees).
//
// A commit mid-phase is checked on its scope: the paths it changed, the
// ones it left out as ignored and the ones the agent's tools wrote (a
// fraction of a commit's cost on a large tree); the phase's last commit
// on the whole tree, which also finds an edit outside the scope that
// debussy missed.
func (r *orun) verifyCommit(p *phaseRun, c gitcommit.Commit, event commitEvent, at time.Time) {
	hash := c.Hash
	reproDir := filepath.Join(r.Store.Dir, "runs", r.id)
	if len(c.GitReplaced) > 0 {
		// git's verdict won inside CommitAll: the branch holds git's entries.
		var paths []string
		for _, pd := range c.GitReplaced {
			paths = append(paths, pd.String())
		}
		repro, err := p.repo.WriteRepro(reproDir, hash, c.GitReplaced)
		if err != nil {
			repro = err.Error()
		}
		r.log.Error("debussy's staging differed from git add -A: git's was committed; please report it with the reproduction",
			"phase", p.ph.ID, "commit", gitcommit.Short(hash), "paths", strings.Join(paths, "; "), "reproduction", repro)
		r.event("git_replaced", map[string]any{"phase": p.ph.ID, "commit": hash, "paths": paths, "reproduction": repro})
	}
	if c.StagedByGit {
		// git staged the tree when the commit was made, before any hook
		// ran: replaying it now would report what a hook formatted, staged
		// or amended since.
		r.event("git_check", map[string]any{"phase": p.ph.ID, "commit": hash, "ms": int64(0), "skipped": []string(nil),
			"whole_tree": true, "at_commit": true})
		return
	}
	var exclude []string
	for path := range r.userFiles {
		exclude = append(exclude, path)
	}
	exclude = append(exclude, r.neverCommitted(p.ph.ID)...)
	slices.Sort(exclude)
	opts := gitcommit.VerifyOptions{Exclude: exclude, Since: at, ReproDir: reproDir}
	if !isRecorded(event) {
		opts.Paths, opts.Ignored = r.agentPaths(p), c.Ignored
	}
	var (
		d   gitcommit.Disagreement
		err error
	)
	began := r.now()
	r.unlocked(func() {
		ctx, cancel := context.WithTimeout(context.Background(), verifyTimeout)
		defer cancel()
		d, err = gitcommit.Verify(ctx, p.repo.Root(), hash, opts)
	})
	took := r.now().Sub(began)
	switch {
	case errors.Is(err, gitcommit.ErrNoGit):
		return
	case err != nil:
		r.log.Warn("git could not check debussy's commit", "phase", p.ph.ID, "commit", gitcommit.Short(hash), "err", err)
		r.event("git_check_failed", map[string]any{"phase": p.ph.ID, "commit": hash, "error": err.Error()})
		return
	case len(d.Paths) == 0:
		r.event("git_check", map[string]any{"phase": p.ph.ID, "commit": hash, "ms": took.Milliseconds(), "skipped": d.Skipped,
			"whole_tree": opts.Paths == nil, "at_commit": false})
		return
	}
	var paths []string
	for _, pd := range d.Paths {
		paths = append(paths, fmt.Sprintf("%s (committed %q, git %q)", pd.Path, pd.Committed, pd.Git))
	}
	r.log.Error("git would have committed something else than debussy did: please report it with the reproduction",
		"phase", p.ph.ID, "commit", gitcommit.Short(hash), "paths", strings.Join(paths, "; "), "reproduction", d.Repro)
	r.event("git_disagreement", map[string]any{"phase": p.ph.ID, "commit": hash, "paths": paths, "reproduction": d.Repro})
	if r.cfg.StrictGit {
		p.gitDisagrees = fmt.Errorf("phase %s: %w on %s (strict_git): %s; reproduction: %s", p.ph.ID, ErrGitDisagrees,
			strings.Join(paths, "; "), gitcommit.Short(hash), d.Repro)
	}
}

// agentPaths lists, relative to the worktree, the paths the phase's tools
// wrote (never nil: an empty scope still holds the commit's own paths).
// Called between sessions, when no session adds to them.
func (r *orun) agentPaths(p *phaseRun) []string {
	root := p.repo.Root()
	paths := []string{}
	for abs := range r.spendOf(p).Budget.Written {
		rel, err := filepath.Rel(root, abs)
		if err == nil && rel != "." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != ".." {
			paths = append(paths, filepath.ToSlash(rel))
		}
	}
	slices.Sort(paths)
	return paths
}
