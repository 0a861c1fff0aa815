package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrConflict means a merge was refused: both sides changed the same path,
// or untracked files stand where the merge would write. Nothing was changed.
var ErrConflict = errors.New("merge conflict")

// ConflictError names the branch and the paths of a refused merge.
type ConflictError struct {
	Branch string
	Files  []string
	// Untracked is set when the paths are untracked files the merge would
	// overwrite, rather than paths both sides changed.
	Untracked bool
}

func (e *ConflictError) Error() string {
	if e.Untracked {
		return fmt.Sprintf("merge %s: untracked files would be overwritten: %s", e.Branch, strings.Join(e.Files, ", "))
	}
	return fmt.Sprintf("merge %s: both sides changed %s", e.Branch, strings.Join(e.Files, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Merge merges branch (a branch name, or a full ref name such as
// refs/remotes/origin/x) into the checked-out branch with a merge commit of
// two parents (msg, hooks and signing as CommitAll), and updates the work
// tree and the index to it. The merge is git's (`git merge-tree
// --write-tree`, git 2.38 or later: see mergegit.go); a path git cannot
// merge is a conflict. A conflict, or an untracked file where the merge
// would write, returns a *ConflictError and changes nothing but
// unreferenced objects. Tracked files must be unchanged (as after a
// commit); untracked files are left alone. A branch already merged returns
// ErrNothingToCommit. Without git it returns ErrNoGit.
func (r *Repo) Merge(ctx context.Context, branch, msg string, opts ...CommitOption) (Commit, error) {
	m, err := r.prepareMerge(ctx, branch)
	if err != nil {
		return Commit{}, err
	}
	if m.index != "" {
		defer os.Remove(m.index)
	}
	c, err := r.CommitAll(ctx, msg, append(opts, indexAsIs(m.index))...)
	if err != nil {
		if uerr := r.undoMerge(context.WithoutCancel(ctx), m); uerr != nil {
			return Commit{}, fmt.Errorf("merge %s: %w (and restoring the work tree: %w)", branch, err, uerr)
		}
		return Commit{}, fmt.Errorf("merge %s: %w", branch, err)
	}
	return c, nil
}

// pendingMerge is a merge written to the work tree but not committed.
type pendingMerge struct {
	oursTree, mergedTree plumbing.Hash
	// index is the merged index git checked the merge out into, beside
	// the repository's, which stays HEAD's until the merge is committed.
	index string
}

// prepareMerge computes the merge, refuses conflicts, and writes the merged
// files and MERGE_HEAD; CommitAll then makes the merge commit.
func (r *Repo) prepareMerge(ctx context.Context, branch string) (*pendingMerge, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("merge %s: %w", branch, err)
	}
	defer end()
	fail := func(err error) (*pendingMerge, error) { return nil, fmt.Errorf("merge %s: %w", branch, err) }
	if r.gitBin == "" {
		return fail(fmt.Errorf("merging needs git: %w", ErrNoGit))
	}

	if op := r.operationInProgress(); op != nil {
		return fail(op)
	}
	h, err := r.readHead()
	if err != nil {
		return fail(err)
	}
	if h.hash.IsZero() {
		return fail(errors.New("the current branch has no commit"))
	}
	name := plumbing.NewBranchReferenceName(branch)
	if strings.HasPrefix(branch, "refs/") { // a remote-tracking branch (--base deps)
		name = plumbing.ReferenceName(branch)
	}
	ref, err := r.store.Reference(name)
	if err != nil {
		return fail(fmt.Errorf("read branch: %w", err))
	}
	oursC, err := r.repo.CommitObject(h.hash)
	if err != nil {
		return fail(err)
	}
	theirsC, err := r.repo.CommitObject(ref.Hash())
	if err != nil {
		return fail(err)
	}
	bases, err := oursC.MergeBase(theirsC)
	if err != nil {
		return fail(fmt.Errorf("find the merge base: %w", err))
	}
	if len(bases) > 0 && bases[0].Hash == theirsC.Hash {
		return nil, ErrNothingToCommit
	}
	mergedTree, conflicts, err := r.mergeByGit(ctx, oursC.Hash, theirsC.Hash)
	if err != nil {
		return fail(err)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Branch: branch, Files: conflicts}
	}
	ours, err := r.flatten(oursC.TreeHash)
	if err != nil {
		return fail(err)
	}
	merged, err := r.flatten(mergedTree)
	if err != nil {
		return fail(err)
	}

	// The work tree must hold HEAD's tracked files: the merge commit is
	// exactly the merged tree, and nothing of the user's may be lost.
	dirty, err := r.dirtyTracked(ctx)
	if err != nil {
		return fail(err)
	}
	if len(dirty) > 0 {
		return fail(fmt.Errorf("uncommitted changes to tracked files: %s", strings.Join(dirty, ", ")))
	}
	if inWay := r.untrackedInWay(ours, merged); len(inWay) > 0 {
		return nil, &ConflictError{Branch: branch, Files: inWay, Untracked: true}
	}

	// A git process holding the index now would refuse the commit after
	// the work tree is written: ask first, and leave nothing behind.
	probe, err := r.acquireLock(r.indexFile)
	if err != nil {
		return fail(err)
	}
	probe.release()
	// MERGE_MODE "no-ff": git commit keeps both parents even where the
	// branch could be fast-forwarded, as `git merge --no-ff`.
	err = os.WriteFile(filepath.Join(r.gitDir, "MERGE_MODE"), []byte("no-ff"), 0o666)
	if err == nil {
		err = os.WriteFile(filepath.Join(r.gitDir, "MERGE_HEAD"), []byte(theirsC.Hash.String()+"\n"), 0o666)
	}
	if err != nil {
		_ = os.Remove(filepath.Join(r.gitDir, "MERGE_MODE"))
		return fail(err)
	}
	m := &pendingMerge{oursTree: oursC.TreeHash, mergedTree: mergedTree, index: filepath.Join(r.gitDir, "debussy-merge-index")}
	b, err := os.ReadFile(r.indexFile)
	if err == nil {
		err = os.WriteFile(m.index, b, 0o666)
	}
	if err != nil {
		return fail(err)
	}
	if err = r.checkoutTrees(ctx, m, m.oursTree, m.mergedTree); err != nil {
		err = fmt.Errorf("update the work tree: %w", err)
		if uerr := r.checkoutTrees(context.WithoutCancel(ctx), m, m.mergedTree, m.oursTree); uerr != nil {
			err = fmt.Errorf("%w (and restoring it: %w)", err, uerr)
		}
		_ = os.Remove(filepath.Join(r.gitDir, "MERGE_HEAD"))
		_ = os.Remove(filepath.Join(r.gitDir, "MERGE_MODE"))
		return fail(err)
	}
	return m, nil
}

// checkoutTrees turns the work tree and the merge's index from one tree
// into the other (`git read-tree -m -u`: git's checkout, with filters and
// eol conversion).
func (r *Repo) checkoutTrees(ctx context.Context, m *pendingMerge, fromTree, toTree plumbing.Hash) error {
	_, err := r.git(ctx, gitRun{env: []string{"GIT_INDEX_FILE=" + m.index}}, "read-tree", "-m", "-u", fromTree.String(), toTree.String())
	return err
}

// undoMerge puts the work tree and the index back to HEAD's files after
// the merge commit was refused (a hook, or a git process that took the
// index lock since prepareMerge).
func (r *Repo) undoMerge(ctx context.Context, m *pendingMerge) error {
	end, err := r.begin()
	if err != nil {
		return err
	}
	defer end()
	_ = os.Remove(filepath.Join(r.gitDir, "MERGE_HEAD"))
	_ = os.Remove(filepath.Join(r.gitDir, "MERGE_MODE"))
	if err := r.checkoutTrees(ctx, m, m.mergedTree, m.oursTree); err != nil {
		return err
	}
	// The refused commit may have made the merged index the repository's:
	// HEAD's, as the merge's own index now holds it, goes back.
	b, err := os.ReadFile(m.index)
	if err != nil {
		return err
	}
	lock, err := r.acquireLock(r.indexFile)
	if err != nil {
		return nil // held: the commit never got to write the index
	}
	defer lock.release()
	return lock.commit(b)
}

// untrackedInWay lists paths the merge adds (absent from ours) where the
// work tree already has something: an untracked file or directory, or an
// untracked file where the merge needs a directory.
func (r *Repo) untrackedInWay(ours, merged map[string]treeFile) []string {
	var out []string
	seen := map[string]bool{}
	for p := range merged {
		if _, ok := ours[p]; ok {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p))); !errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
			continue
		}
		for dir := path.Dir(p); dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			if _, ok := ours[dir]; ok {
				continue // a tracked file the merge deletes
			}
			fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(dir)))
			if err == nil && !fi.IsDir() || err != nil && !errors.Is(err, fs.ErrNotExist) {
				out = append(out, dir)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
