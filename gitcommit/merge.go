package gitcommit

import (
	"errors"
	"fmt"
	"io"
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

// Merge merges branch (a branch name, or a full ref name such as
// refs/remotes/origin/x) into the checked-out branch with a merge commit of
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
func (r *Repo) Merge(branch, msg string, opts ...CommitOption) (Commit, error) {
	m, err := r.prepareMerge(branch)
	if err != nil {
		return Commit{}, err
	}
	c, err := r.CommitAll(msg, append(opts, withEntries(m.entries))...)
	if err != nil {
		if uerr := r.undoMerge(m); uerr != nil {
			return Commit{}, fmt.Errorf("merge %s: %w (and restoring the work tree: %w)", branch, err, uerr)
		}
		return Commit{}, fmt.Errorf("merge %s: %w", branch, err)
	}
	return c, nil
}

// pendingMerge is a merge written to the work tree but not committed.
type pendingMerge struct {
	ours, merged map[string]treeFile
	entries      []*index.Entry // the merged index
}

// prepareMerge computes the merge, refuses conflicts, and writes the merged
// files and MERGE_HEAD; CommitAll then makes the merge commit.
func (r *Repo) prepareMerge(branch string) (*pendingMerge, error) {
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
	merged, conflicts, err := r.mergeCommits(oursC, theirsC, baseTree, ours)
	if err != nil {
		return fail(err)
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Branch: branch, Files: conflicts}
	}

	// The work tree must hold HEAD's tracked files: the merge commit is
	// exactly the merged tree, and nothing of the user's may be lost.
	dirty, err := r.dirtyTracked()
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
	idx, err := r.readIndex()
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(r.gitDir, "MERGE_HEAD"), []byte(theirsC.Hash.String()+"\n"), 0o666); err != nil {
		return fail(err)
	}
	m := &pendingMerge{ours: ours, merged: merged}
	if m.entries, err = r.checkoutIndex(idx, ours, merged); err != nil {
		err = fmt.Errorf("update the work tree: %w", err)
		if _, uerr := r.checkoutIndex(idx, merged, ours); uerr != nil {
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
func (r *Repo) mergeCommits(oursC, theirsC *object.Commit, baseTree plumbing.Hash, ours map[string]treeFile) (map[string]treeFile, []string, error) {
	if bin := mergeEngine(); bin != "" {
		tree, conflicts, err := r.mergeByGit(bin, oursC.Hash, theirsC.Hash)
		if err != nil || len(conflicts) > 0 {
			return nil, conflicts, err
		}
		merged, err := r.flatten(tree)
		return merged, nil, err
	}
	base, err := r.flatten(baseTree)
	if err != nil {
		return nil, nil, err
	}
	theirs, err := r.flatten(theirsC.TreeHash)
	if err != nil {
		return nil, nil, err
	}
	lineMerge, err := r.lineMerger(base, ours, theirs)
	if err != nil {
		return nil, nil, err
	}
	return mergeFiles(base, ours, theirs, lineMerge)
}

// checkoutIndex is checkout in the work tree with idx as the old index,
// returning the whole new index: entries debussy never commits stay as
// they were.
func (r *Repo) checkoutIndex(idx *index.Index, from, to map[string]treeFile) ([]*index.Entry, error) {
	old := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		old[e.Name] = e
	}
	entries, err := r.checkout(r.root, from, to, old)
	if err != nil {
		return nil, err
	}
	for _, e := range idx.Entries {
		if isStateDirPath(e.Name) {
			entries = append(entries, e)
		}
	}
	sortEntries(entries)
	return entries, nil
}

// undoMerge puts the work tree and the index back to HEAD's files after
// the merge commit was refused (a hook, or a git process that took the
// index lock since prepareMerge). Without the lock the files are restored
// all the same: the commit never wrote the index, which holds HEAD's
// entries still, and merged files left in the work tree would be
// untracked files in the user's way.
func (r *Repo) undoMerge(m *pendingMerge) error {
	end, err := r.begin()
	if err != nil {
		return err
	}
	defer end()
	_ = os.Remove(filepath.Join(r.gitDir, "MERGE_HEAD"))
	lock, lockErr := r.acquireLock(r.indexFile)
	if lockErr == nil {
		defer lock.release()
	}
	idx, err := r.readIndex()
	if err != nil {
		return err
	}
	entries, err := r.checkoutIndex(idx, m.merged, m.ours)
	if err != nil || lockErr != nil {
		return err
	}
	b, err := r.encodeIndex(idx, entries, lock.created)
	if err != nil {
		return err
	}
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
func (r *Repo) lineMerger(base, ours, theirs map[string]treeFile) (textMerger, error) {
	cfg, err := r.readConfig()
	if err != nil {
		return nil, err
	}
	if cfg.bool("merge.renormalize", false) {
		return nil, nil
	}
	// git takes attributes from the work tree, which the merge is about to
	// change; when a .gitattributes differs between the trees, it is not
	// clear which version git would read.
	for p, f := range base {
		if path.Base(p) == ".gitattributes" && (ours[p] != f || theirs[p] != f) {
			return nil, nil
		}
	}
	for p := range ours {
		if _, ok := base[p]; !ok && path.Base(p) == ".gitattributes" {
			return nil, nil
		}
	}
	for p := range theirs {
		if _, ok := base[p]; !ok && path.Base(p) == ".gitattributes" {
			return nil, nil
		}
	}
	attrs := r.newAttrs(cfg)
	return func(p string, b, o, t treeFile) (treeFile, bool, error) {
		regular := func(f treeFile) bool { return f.mode == filemode.Regular || f.mode == filemode.Executable }
		if !regular(b) || !regular(o) || !regular(t) {
			return treeFile{}, false, nil // symlinks and submodules stay whole
		}
		// A merge attribute (binary, -merge, union, a driver) changes how
		// git merges the file: leave the file whole then.
		av, err := attrs.lookup(p)
		if err != nil {
			return treeFile{}, false, err
		}
		if v, ok := av["merge"]; ok && v.kind != attrUnspecified {
			return treeFile{}, false, nil
		}
		var content [3][]byte
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
		if st, err := lstat(filepath.Join(r.root, filepath.FromSlash(p))); err != nil || st.kind != kindMissing {
			out = append(out, p)
			continue
		}
		for dir := path.Dir(p); dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			if _, ok := ours[dir]; ok {
				continue // a tracked file the merge deletes
			}
			st, err := lstat(filepath.Join(r.root, filepath.FromSlash(dir)))
			if err != nil || (st.kind != kindMissing && st.kind != kindDir) {
				out = append(out, dir)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
