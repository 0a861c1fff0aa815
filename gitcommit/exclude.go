package gitcommit

import (
	"context"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
)

// Fingerprints maps untracked paths to a fingerprint of their content: the
// blob hash of a file's bytes as they are, a symlink's target, a nested
// repository's HEAD commit, or "" for a nested repository without a commit.
type Fingerprints map[string]string

// CommitOption adjusts one CommitAll.
type CommitOption func(*commitOptions)

type commitOptions struct {
	exclude    Fingerprints
	never      pathSet // Never
	note       func(msg string, changed []string) string
	allowEmpty bool
	// asIs commits the index as it is (Merge): no staging pass, so no
	// untracked file can join the merge; from, when set, is the index file
	// to commit instead of the repository's (the merge's own).
	asIs bool
	from string
	// written sees the commit's hash before the branch moves (Written).
	written func(hash string) error
}

func indexAsIs(from string) CommitOption {
	return func(o *commitOptions) { o.asIs, o.from = true, from }
}

// Exclude leaves out of the commit every untracked path of files whose
// content still matches its fingerprint: files that were the user's when a
// run started (see Untracked). A path whose content changed is committed
// like any other new file and reported in Commit.Changed; when note is not
// nil, the message becomes note(msg, changed) so the commit can say so.
// Tracked paths are never affected.
func Exclude(files Fingerprints, note func(msg string, changed []string) string) CommitOption {
	return func(o *commitOptions) { o.exclude, o.note = files, note }
}

// Untracked lists what `git add -A` would add now, with each path's
// fingerprint: the untracked paths that no ignore rule covers, a nested
// repository as one path (git's `ls-files --others --exclude-standard`, or
// go-git's status without git). It writes no object and no index.
func (r *Repo) Untracked(ctx context.Context) (Fingerprints, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	defer end()
	var paths []string
	if r.gitBin != "" {
		out, err := r.git(ctx, gitRun{}, "ls-files", "-z", "--others", "--exclude-standard")
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		for _, p := range strings.Split(string(out), "\x00") {
			if p = strings.TrimSuffix(p, "/"); p != "" {
				paths = append(paths, p)
			}
		}
	} else {
		wt, err := r.repo.Worktree()
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		st, err := wt.Status()
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		for p, fs := range st {
			if fs.Worktree == git.Untracked {
				paths = append(paths, p)
			}
		}
	}
	out := Fingerprints{}
	for _, p := range paths {
		if isStatePath(p) {
			continue
		}
		res, err := r.fingerprint(p)
		h, present := res.fp, res.present
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		if present {
			out[p] = h
		}
	}
	return out, nil
}
