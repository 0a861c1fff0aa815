package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Where git is installed, `git commit` makes the commit (this file and
// commitshim.go): the index git staged (stagegit.go) becomes the index,
// and git commits it, so every hook, the message's cleanup and encoding,
// the identity, the signature and the reflog are git's own. debussy adds
// three things through a reference-transaction hook of its own, before
// the branch moves: the new commit is refused if it adds what debussy
// leaves out (made again without it), checked by fsck's rules (as a remote
// that checks what it receives would) and handed to Written.

func (r *Repo) commitByGit(ctx context.Context, msg string, o commitOptions) (_ Commit, err error) {
	h, err := r.readHead()
	if err != nil {
		return Commit{}, err
	}
	// The index's lock file is the private index git stages into; it
	// becomes the index once staged, as after `git add -A`, before any
	// hook runs. Cut before that, the user's index is untouched.
	lock, err := r.acquireLock(r.indexFile)
	if err != nil {
		return Commit{}, err
	}
	defer lock.release()
	cfg, err := r.readConfig(ctx)
	if err != nil {
		return Commit{}, err
	}
	hooksDir := r.hooksDirOf(cfg)
	shims, err := r.hookShims(hooksDir, lock.lockPath())
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	defer shims.remove()
	parentTree, err := r.treeOf(h)
	if err != nil {
		return Commit{}, err
	}
	never, err := r.notInHead(parentTree, o.never) // a path HEAD tracks is the branch's
	if err != nil {
		return Commit{}, err
	}
	add := gitAdd{args: shims.gitArgs(cfg), naming: r.namingOK(cfg), split: !cfg.has("core.splitIndex"), ignores: r.ignoreSources(cfg)}
	st, err := r.stageByGit(ctx, lock, h, parentTree, o, never, add)
	r.kept = keptIndex{} // kept again below, where this commit lands as staged
	if err != nil {
		return Commit{}, err
	}
	ita := intentToAdd(r.indexFile, st.restore)
	if len(st.changed) > 0 && o.note != nil {
		msg = o.note(msg, st.changed)
	}
	if strings.TrimSpace(msg) == "" {
		msg = "debussy: checkpoint" // git would refuse; losing the work is worse
	}
	// The index goes first: if the commit then fails, the work is staged
	// and the next CommitAll picks it up. Interrupted (ctx) before the
	// branch moves, the index as it was comes back (restoreIndex).
	if err := r.installIndex(ctx, lock); err != nil {
		return Commit{}, err
	}
	landed := false
	defer func() {
		if !landed {
			r.restoreIndex(ctx, &err)
		} else {
			_ = os.Remove(r.indexBackup())
		}
	}()
	made, err := r.gitCommit(ctx, msg, o, h, parentTree, shims, st.gone)
	var lo *leftOutError
	if errors.As(err, &lo) {
		st.staged = keptIndex{}
		// Staged by git, and debussy's to leave out (a nested .debussy,
		// a user's file renamed): taken out of the index, and git commits
		// again.
		r.log.Debug("left out after staging", "paths", lo.paths)
		if err = r.takeOut(ctx, lo.paths); err == nil {
			made, err = r.gitCommit(ctx, msg, o, h, parentTree, shims, nil)
		}
	}
	r.forgetIndex()
	if made.Hash != "" {
		landed = true
		if rerr := r.restoreEntries(context.WithoutCancel(ctx), st.restore, ita); rerr != nil {
			r.log.Warn("put the user's index entries back", "err", rerr)
		}
		if len(st.restore) == 0 && !hasHook(hooksDir, "post-commit") {
			// git commit left the index as the commit (a post-commit hook
			// could have changed it since).
			r.noteIndexIsHead(made.Hash)
			if st.staged.index.data != nil && !shims.userHooks {
				st.staged.commit = made.Hash
				r.kept = st.staged
			}
		}
		made.Changed, made.Unstaged = st.changed, st.unstaged
		r.log.Debug("committed", "commit", Short(made.Hash), "files", made.Files)
		return made, nil
	}
	var hookErr *HookError
	if errors.Is(err, ErrNothingToCommit) || errors.As(err, &hookErr) {
		// As after a refused `git commit`, the work stays staged; the
		// user's own entries go back beside it.
		if rerr := r.restoreEntries(context.WithoutCancel(ctx), st.restore, ita); rerr != nil {
			r.log.Warn("put the user's index entries back", "err", rerr)
		}
	}
	return Commit{}, err
}

// treeOf is the tree of h's commit, zero on an unborn branch.
func (r *Repo) treeOf(h head) (plumbing.Hash, error) {
	if h.hash.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := r.repo.CommitObject(h.hash)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read HEAD commit: %w", err)
	}
	return c.TreeHash, nil
}

// hasHook says git would run hook name from dir: an executable file.
func hasHook(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// clockEnv dates a commit by WithClock's clock where the environment
// does not date it.
func (r *Repo) clockEnv() []string {
	if !r.clock {
		return nil
	}
	now := r.now()
	stamp := fmt.Sprintf("@%d %s", now.Unix(), now.Format("-0700"))
	if r.getenv("TZ") != "" {
		stamp = fmt.Sprintf("@%d", now.Unix()) // the zone is git's (libc's TZ)
	}
	var env []string
	for _, k := range []string{"GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
		if r.getenv(k) == "" {
			env = append(env, k+"="+stamp)
		}
	}
	return env
}

// madeUpIdentity is what git commit's environment needs where git knows
// no identity and would refuse the commit (the work must be saved): an
// address, and names if git finds none either.
func (r *Repo) madeUpIdentity(ctx context.Context, env []string) ([]string, error) {
	for _, fallback := range [][]string{{"EMAIL=debussy@localhost"}, {"EMAIL=debussy@localhost", "GIT_AUTHOR_NAME=debussy", "GIT_COMMITTER_NAME=debussy"}} {
		try := append(slices.Clone(env), fallback...)
		_, aerr := r.git(ctx, gitRun{env: try}, "var", "GIT_AUTHOR_IDENT")
		_, cerr := r.git(ctx, gitRun{env: try}, "var", "GIT_COMMITTER_IDENT")
		switch err := errors.Join(aerr, cerr); {
		case err == nil:
			return try, nil
		case !identityRefused(err):
			return nil, fmt.Errorf("read identity: %w", err)
		}
	}
	return nil, errors.New("read identity: git refuses every identity debussy can make up; set user.name and user.email")
}

// identityRefused says git refused to make up an identity.
func identityRefused(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	for _, s := range []string{"identity unknown", "unable to auto-detect", "empty ident", "tell me who you are"} {
		if strings.Contains(ge.Stderr, s) {
			return true
		}
	}
	return false
}

// takeOut removes paths from the index, under its lock.
func (r *Repo) takeOut(ctx context.Context, paths []string) error {
	lock, err := r.acquireLock(r.indexFile)
	if err != nil {
		return err
	}
	defer lock.release()
	if err := lock.seed(ctx, r, ""); err != nil {
		return err
	}
	if err := r.removeFromIndex(ctx, lock.lockPath(), paths); err != nil {
		return err
	}
	return lock.commitFile()
}
