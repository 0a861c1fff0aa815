package gitcommit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Change is one line of `git diff --no-renames --name-status`: A, M or D
// (a type change such as file to symlink is M).
type Change struct {
	Status string
	Path   string
}

// Changes lists the paths that differ between commit base ("" means the
// empty tree) and HEAD, sorted by path. base may be anything git accepts as
// a revision: a full or abbreviated hash, a branch, a tag.
func (r *Repo) Changes(base string) ([]Change, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer end()
	var from plumbing.Hash
	if base != "" {
		h, err := r.repo.ResolveRevision(plumbing.Revision(base))
		if err != nil {
			return nil, fmt.Errorf("changes: resolve %q: %w", base, err)
		}
		c, err := r.repo.CommitObject(*h)
		if err != nil {
			return nil, fmt.Errorf("changes: read commit %s: %w", base, err)
		}
		from = c.TreeHash
	}
	head, err := r.headHash()
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	var to plumbing.Hash
	if !head.IsZero() {
		c, err := r.repo.CommitObject(head)
		if err != nil {
			return nil, fmt.Errorf("changes: read HEAD commit: %w", err)
		}
		to = c.TreeHash
	}
	cs, err := r.diffTrees(from, to)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	return cs, nil
}

// DirtyTracked lists tracked paths with changes that are not committed:
// staged or not, including deletions and unmerged paths. Untracked files do
// not count, nor anything under .debussy/. Nothing is written, not even the
// index (`git status` without optional locks, or go-git's status).
func (r *Repo) DirtyTracked(ctx context.Context) ([]string, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("check dirty: %w", err)
	}
	defer end()
	out, err := r.dirtyTracked(ctx)
	if err != nil {
		return nil, fmt.Errorf("check dirty: %w", err)
	}
	return out, nil
}

func (r *Repo) dirtyTracked(ctx context.Context) ([]string, error) {
	var out []string
	if r.gitBin != "" {
		b, err := r.git(ctx, gitRun{env: []string{"GIT_OPTIONAL_LOCKS=0"}}, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--no-renames", "--ignore-submodules=none")
		if err != nil {
			return nil, err
		}
		for _, rec := range strings.Split(string(b), "\x00") {
			if len(rec) > 3 {
				out = append(out, rec[3:])
			}
		}
	} else {
		wt, err := r.repo.Worktree()
		if err != nil {
			return nil, err
		}
		st, err := wt.Status()
		if err != nil {
			return nil, err
		}
		for p, fs := range st {
			if fs.Worktree != git.Untracked && (fs.Worktree != git.Unmodified || fs.Staging != git.Unmodified) {
				out = append(out, p)
			}
		}
	}
	out = slices.DeleteFunc(out, isStatePath)
	slices.Sort(out)
	return out, nil
}
