package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Linked worktrees and the phase branches in them are git's: `git worktree
// add` checks out with the user's filters and eol conversion, which go-git
// v5 cannot (nor make a linked worktree at all). Without git they are
// refused (ErrNoGit): a --parallel run needs git.

// BranchHead returns the commit branch (a short name: "debussy/r1/phase-2")
// points to, or "" when there is no such branch.
func (r *Repo) BranchHead(branch string) (string, error) {
	end, err := r.begin()
	if err != nil {
		return "", fmt.Errorf("read branch %s: %w", branch, err)
	}
	defer end()
	ref, err := r.store.Reference(plumbing.NewBranchReferenceName(branch))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read branch %s: %w", branch, err)
	}
	return ref.Hash().String(), nil
}

// AddWorktree checks branch out in a new linked worktree at path, creating
// the branch at base (a full commit hash) when it does not exist yet; an
// existing branch is checked out where it is. path must not exist, or be
// an empty directory.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, base string) error {
	end, err := r.begin()
	if err != nil {
		return fmt.Errorf("add worktree %s: %w", path, err)
	}
	defer end()
	if err := r.addWorktree(ctx, path, branch, base); err != nil {
		return fmt.Errorf("add worktree %s: %w", path, err)
	}
	return nil
}

func (r *Repo) addWorktree(ctx context.Context, path, branch, base string) error {
	if r.gitBin == "" {
		return fmt.Errorf("a linked worktree needs git: %w", ErrNoGit)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	refName := plumbing.NewBranchReferenceName(branch)
	if err := refName.Validate(); err != nil || strings.Contains(branch, "..") {
		return fmt.Errorf("bad branch name %q", branch)
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty", abs)
	}
	// The branch: kept if it exists (a resumed phase), else created at base.
	args := []string{"worktree", "add", "--quiet", abs, branch}
	created := false
	_, err = r.store.Reference(refName)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		tip := plumbing.NewHash(base)
		if tip.IsZero() || tip.String() != strings.ToLower(base) {
			return fmt.Errorf("bad base commit %q", base)
		}
		if _, err := r.repo.CommitObject(tip); err != nil {
			return fmt.Errorf("read commit %s: %w", Short(base), err)
		}
		args, created = []string{"worktree", "add", "--quiet", "-b", branch, abs, tip.String()}, true
	case err != nil:
		return fmt.Errorf("read branch %s: %w", branch, err)
	}
	_, parentErr := os.Stat(filepath.Dir(abs))
	if _, err = r.git(ctx, gitRun{noIndex: true}, args...); err != nil {
		// git undoes the worktree of a failed checkout, not the branch
		// nor the directories it made for it.
		ctx := context.WithoutCancel(ctx)
		_, _ = r.git(ctx, gitRun{}, "worktree", "prune")
		if created {
			_, _ = r.git(ctx, gitRun{}, "branch", "-q", "-D", "--", branch)
		}
		if parentErr != nil {
			_ = os.Remove(filepath.Dir(abs))
		}
	}
	return err
}

// CheckCheckout reports what checking HEAD out in a new worktree
// (AddWorktree) could not do as git would: git checks out itself, so
// nothing, unless git is missing.
func (r *Repo) CheckCheckout() error {
	if r.gitBin == "" {
		return fmt.Errorf("check checkout: a linked worktree needs git: %w", ErrNoGit)
	}
	return nil
}

// RemoveWorktree deletes the linked worktree at path and its administrative
// directory (`git worktree remove --force`): work not committed in it is
// lost. Its branch stays. A path that is no worktree is an error.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	if r.gitBin == "" {
		return fmt.Errorf("remove worktree %s: %w", path, ErrNoGit)
	}
	end, err := r.begin()
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	defer end()
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if _, err := r.git(ctx, gitRun{noIndex: true}, "worktree", "remove", "--force", "--force", abs); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	return nil
}

// DeleteBranch deletes a branch that is no worktree's HEAD (`git branch
// -D`, its reflog too). A missing branch is no error.
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	if h, err := r.BranchHead(branch); err != nil || h == "" {
		return err
	}
	if r.gitBin == "" {
		return fmt.Errorf("delete branch %s: %w", branch, ErrNoGit)
	}
	if _, err := r.git(ctx, gitRun{}, "branch", "-q", "-D", "--", branch); err != nil {
		return fmt.Errorf("delete branch %s: %w", branch, err)
	}
	return nil
}

// treeFile is what a tree holds at one path (directories flattened away).
type treeFile struct {
	mode filemode.FileMode
	hash plumbing.Hash
}

// flatten lists every non-directory entry of a tree by slash path; the zero
// hash is the empty tree. debussy's own directory is left out.
func (r *Repo) flatten(tree plumbing.Hash) (map[string]treeFile, error) {
	out := map[string]treeFile{}
	var walk func(prefix string, h plumbing.Hash) error
	walk = func(prefix string, h plumbing.Hash) error {
		ents, err := r.treeEntries(h)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := prefix + e.Name
			if isStatePath(p) {
				continue
			}
			if e.Mode == filemode.Dir {
				if err := walk(p+"/", e.Hash); err != nil {
					return err
				}
				continue
			}
			out[p] = treeFile{mode: e.Mode, hash: e.Hash}
		}
		return nil
	}
	return out, walk("", tree)
}

// OpenLinked opens the worktree at dir (one AddWorktree made) with r's
// logger, clock and environment, less GIT_DIR and friends: they name the
// main worktree, and the linked one has its own .git file.
func (r *Repo) OpenLinked(dir string) (*Repo, error) {
	getenv := func(k string) string {
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE":
			return ""
		}
		return r.getenv(k)
	}
	same := func(lr *Repo) {
		lr.env, lr.osEnv, lr.now, lr.clock, lr.noGit = r.env, r.osEnv, r.now, r.clock, r.noGit
		if lr.env != nil {
			lr.env = withoutRepoEnv(lr.env)
		}
	}
	return Open(dir, WithLogger(r.log), WithGetenv(getenv), same)
}
