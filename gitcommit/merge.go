package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
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

// Merge merges branch into the checked-out branch with a merge commit of
// two parents (msg, hooks and signing as CommitAll), and updates the work
// tree and the index to it. The merged tree is git's: with git (2.38 or
// later) installed, `git merge-tree` computes it (see mergegit.go), and a
// path git cannot merge is a conflict. Without git, debussy's own
// three-way merge stands in: against the merge base, a path changed on
// one side takes that side's content; a text file changed on both sides
// is merged line by line when the changes are apart (see mergeText: only
// where git's merge gives the same bytes); anything else changed on both
// sides to different results is a conflict. A conflict, or an untracked
// file where the merge would write, returns a *ConflictError and changes
// nothing but unreferenced objects. Tracked files must be unchanged (as
// after a commit); untracked files are left alone. A branch already merged
// returns ErrNothingToCommit.
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
	ours, merged         map[string]treeFile
	oursTree, mergedTree plumbing.Hash
	// index is the merged index git checked the merge out into, beside
	// the repository's, which stays HEAD's until the merge is committed;
	// "" when debussy checked it out (go-git mode).
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
	ref, err := r.store.Reference(plumbing.NewBranchReferenceName(branch))
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
	var baseTree plumbing.Hash
	if len(bases) > 0 {
		if bases[0].Hash == theirsC.Hash {
			return nil, ErrNothingToCommit
		}
		baseTree = bases[0].TreeHash
	}
	ours, err := r.flatten(oursC.TreeHash)
	if err != nil {
		return fail(err)
	}
	merged, mergedTree, conflicts, err := r.mergeCommits(ctx, oursC, theirsC, baseTree, ours)
	if err != nil {
		return fail(err)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Branch: branch, Files: conflicts}
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
	if err := os.WriteFile(filepath.Join(r.gitDir, "MERGE_HEAD"), []byte(theirsC.Hash.String()+"\n"), 0o666); err != nil {
		return fail(err)
	}
	m := &pendingMerge{ours: ours, merged: merged, oursTree: oursC.TreeHash, mergedTree: mergedTree}
	if r.gitBin != "" && !mergedTree.IsZero() {
		m.index = filepath.Join(r.gitDir, "debussy-merge-index")
		b, err := os.ReadFile(r.indexFile)
		if err == nil {
			err = os.WriteFile(m.index, b, 0o666)
		}
		if err != nil {
			return fail(err)
		}
	}
	if err = r.checkoutTrees(ctx, m, m.ours, m.merged, m.oursTree, m.mergedTree); err != nil {
		err = fmt.Errorf("update the work tree: %w", err)
		if uerr := r.checkoutTrees(context.WithoutCancel(ctx), m, m.merged, m.ours, m.mergedTree, m.oursTree); uerr != nil {
			err = fmt.Errorf("%w (and restoring it: %w)", err, uerr)
		}
		_ = os.Remove(filepath.Join(r.gitDir, "MERGE_HEAD"))
		return fail(err)
	}
	return m, nil
}

// mergeCommits merges theirs into ours: by git when it is installed (see
// mergegit.go), else by debussy's own merge of the flattened trees against
// baseTree (zero: none). It returns the merged files, or the conflicting
// paths, sorted.
func (r *Repo) mergeCommits(ctx context.Context, oursC, theirsC *object.Commit, baseTree plumbing.Hash, ours map[string]treeFile) (map[string]treeFile, plumbing.Hash, []string, error) {
	if bin := mergeEngine(); bin != "" && r.gitBin != "" {
		tree, conflicts, err := r.mergeByGit(ctx, bin, oursC.Hash, theirsC.Hash)
		if err != nil || len(conflicts) > 0 {
			return nil, plumbing.ZeroHash, conflicts, err
		}
		merged, err := r.flatten(tree)
		return merged, tree, nil, err
	}
	base, err := r.flatten(baseTree)
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	theirs, err := r.flatten(theirsC.TreeHash)
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	lineMerge, err := r.lineMerger(ctx, base, ours, theirs)
	if err != nil {
		return nil, plumbing.ZeroHash, nil, err
	}
	merged, conflicts, err := mergeFiles(base, ours, theirs, lineMerge)
	return merged, plumbing.ZeroHash, conflicts, err
}

// checkoutTrees turns the work tree and the index from one tree into the
// other: `git read-tree -m -u` where git is installed (its checkout runs
// filters and eol conversion), else debussy's checkout of the blobs as they
// are. Entries under .debussy/ stay as they were.
func (r *Repo) checkoutTrees(ctx context.Context, m *pendingMerge, from, to map[string]treeFile, fromTree, toTree plumbing.Hash) error {
	if m.index != "" {
		_, err := r.git(ctx, gitRun{env: []string{"GIT_INDEX_FILE=" + m.index}}, "read-tree", "-m", "-u", fromTree.String(), toTree.String())
		return err
	}
	return r.checkoutFiles(from, to, false)
}

// checkoutFiles is checkoutTrees by debussy; filesOnly restores the files
// even when the index is locked (undoing a merge whose commit was refused:
// the index still holds HEAD's entries).
func (r *Repo) checkoutFiles(from, to map[string]treeFile, filesOnly bool) error {
	lock, err := r.acquireLock(r.indexFile)
	if err != nil && !filesOnly {
		return err
	}
	if err == nil {
		defer lock.release()
	}
	idx, err := readIndexFile(r.indexFile)
	if err != nil {
		return err
	}
	old := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		old[e.Name] = e
	}
	entries, err := r.checkout(r.root, from, to, old)
	if err != nil || lock == nil {
		return err
	}
	for _, e := range idx.Entries {
		if isStatePath(e.Name) {
			entries = append(entries, e)
		}
	}
	sortEntries(entries)
	idx.Entries = entries
	idx.Cache = nil
	if err := writeIndexFile(lock.lockPath(), idx); err != nil {
		return err
	}
	return lock.commitFile()
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
	if err := r.checkoutTrees(ctx, m, m.merged, m.ours, m.mergedTree, m.oursTree); err != nil || m.index == "" {
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

// sortEntries puts index entries in git's index order: by name, then stage.
func sortEntries(es []*index.Entry) {
	slices.SortStableFunc(es, func(a, b *index.Entry) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(a.Stage) - int(b.Stage)
	})
}

// textMerger merges a path both sides changed, present in all three
// trees; ok is false for a conflict.
type textMerger func(path string, base, ours, theirs treeFile) (merged treeFile, ok bool, err error)

// mergeFiles is the three-way merge of flattened trees, file by file, with
// lineMerge (nil: none) for paths both sides changed. It returns the merged
// files and the conflicting paths, sorted.
func mergeFiles(base, ours, theirs map[string]treeFile, lineMerge textMerger) (map[string]treeFile, []string, error) {
	merged := map[string]treeFile{}
	conflict := map[string]bool{}
	paths := map[string]bool{}
	for _, m := range []map[string]treeFile{base, ours, theirs} {
		for p := range m {
			paths[p] = true
		}
	}
	for p := range paths {
		b, bok := base[p]
		o, ook := ours[p]
		t, tok := theirs[p]
		var f treeFile
		var ok bool
		switch {
		case ook == tok && o == t: // the same on both sides
			f, ok = o, ook
		case bok == ook && b == o: // only theirs changed it
			f, ok = t, tok
		case bok == tok && b == t: // only ours changed it
			f, ok = o, ook
		case bok && ook && tok && lineMerge != nil:
			var err error
			if f, ok, err = lineMerge(p, b, o, t); err != nil {
				return nil, nil, fmt.Errorf("merge %s: %w", p, err)
			}
			if !ok {
				conflict[p] = true
				continue
			}
		default:
			conflict[p] = true
			continue
		}
		if ok {
			merged[p] = f
		}
	}
	// A file on one side where the other put a directory.
	for p := range merged {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := merged[dir]; ok {
				conflict[p], conflict[dir] = true, true
			}
		}
	}
	out := make([]string, 0, len(conflict))
	for p := range conflict {
		out = append(out, p)
	}
	slices.Sort(out)
	return merged, out, nil
}

// lineMerger returns the line merge for this merge's paths, or nil when
// there must be none: git would read merge attributes or renormalize, and
// debussy does not follow either.
func (r *Repo) lineMerger(ctx context.Context, base, ours, theirs map[string]treeFile) (textMerger, error) {
	cfg, err := r.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.bool("merge.renormalize", false) {
		return nil, nil
	}
	// Attributes (merge=union, -merge, binary, drivers) change how git
	// merges; without git debussy does not read them, so where any could
	// apply a path both sides changed is a conflict.
	if _, err := os.Stat(filepath.Join(r.commonDir, "info", "attributes")); err == nil {
		return nil, nil
	}
	for _, side := range []map[string]treeFile{base, ours, theirs} {
		for p := range side {
			if path.Base(p) == ".gitattributes" {
				return nil, nil
			}
		}
	}
	return func(p string, b, o, t treeFile) (treeFile, bool, error) {
		regular := func(f treeFile) bool { return f.mode == filemode.Regular || f.mode == filemode.Executable }
		if !regular(b) || !regular(o) || !regular(t) {
			return treeFile{}, false, nil // symlinks and submodules stay whole
		}
		var content [3][]byte
		var err error
		for i, f := range []treeFile{b, o, t} {
			var small bool
			if content[i], small, err = r.readBlob(f.hash, maxMergeText); err != nil || !small {
				return treeFile{}, false, err
			}
		}
		merged, ok := mergeText(content[0], content[1], content[2])
		if !ok {
			return treeFile{}, false, nil
		}
		// The mode merges like a one-line file: a side that kept it gives way.
		f := treeFile{mode: o.mode}
		if o.mode == b.mode {
			f.mode = t.mode
		}
		if f.hash, err = r.putObject(plumbing.BlobObject, merged, true); err != nil {
			return treeFile{}, false, err
		}
		return f, true, nil
	}, nil
}

// readBlob returns a blob's content, or small false when it is larger
// than limit.
func (r *Repo) readBlob(h plumbing.Hash, limit int64) (content []byte, small bool, err error) {
	blob, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, false, fmt.Errorf("read blob %s: %w", h, err)
	}
	if blob.Size > limit {
		return nil, false, nil
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, false, fmt.Errorf("read blob %s: %w", h, err)
	}
	defer rd.Close()
	if content, err = io.ReadAll(rd); err != nil {
		return nil, false, fmt.Errorf("read blob %s: %w", h, err)
	}
	return content, true, nil
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
