package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit is the result of CommitAll.
type Commit struct {
	Hash  string // full hash of the new commit
	Files int    // paths changed by it (added, modified, deleted)
	// Changed lists the paths of an Exclude set committed because their
	// content changed.
	Changed []string
	// Unstaged lists the Never paths found in the index (an agent's
	// `git add -f .env`) and taken back out of it, left in the worktree.
	Unstaged []string
}

// CommitAll stages everything `git add -A` would and commits it with msg
// on the current branch (or detached HEAD), as `git add -A && git commit
// -m msg` does (see the package comment): git stages where it is
// installed, go-git where it is not. It returns ErrNothingToCommit when the
// tree equals HEAD's, and an error wrapping ErrLocked when a git command
// holds the index or branch lock. An empty message becomes "debussy:
// checkpoint" (git would refuse, and the work must be saved).
//
// The hooks run as git runs them (pre-commit, prepare-commit-msg,
// commit-msg, post-commit); a refusing hook returns a *HookError
// (ErrHookRejected): nothing is committed and the index is as it was. It
// signs when commit.gpgSign is set; mid-merge it makes a merge commit,
// mid-cherry-pick it keeps the picked commit's author. When ctx ends
// (Ctrl-C) every git command and hook is killed with its process group
// and nothing is committed: the index and the work are as they were.
func (r *Repo) CommitAll(ctx context.Context, msg string, opts ...CommitOption) (Commit, error) {
	var o commitOptions
	for _, opt := range opts {
		opt(&o)
	}
	end, err := r.begin()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	defer end()
	c, err := r.commitAll(ctx, msg, o)
	if errors.Is(err, ErrNothingToCommit) {
		return Commit{}, ErrNothingToCommit
	}
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	return c, nil
}

func (r *Repo) commitAll(ctx context.Context, msg string, o commitOptions) (Commit, error) {
	if r.gitBin != "" {
		return r.commitByGit(ctx, msg, o)
	}
	return r.commitByGoGit(ctx, msg, o)
}

// indexBackup is the index before a commit staged: a hard link, kept until
// the commit is made.
func (r *Repo) indexBackup() string { return r.indexFile + ".debussy-before" }

// installIndex makes the staged lock file the index, keeping the old one.
func (r *Repo) installIndex(ctx context.Context, lock *lockFile) error {
	_ = os.Remove(r.indexBackup())
	if err := os.Link(r.indexFile, r.indexBackup()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Debug("keep the index", "err", err) // only an interrupted commit needs it
	}
	return lock.commitFile()
}

// restoreIndex puts the index back when ctx ended the commit (Ctrl-C during
// a hook); a refusing hook leaves the work staged, as git does.
func (r *Repo) restoreIndex(ctx context.Context, err *error) {
	defer os.Remove(r.indexBackup())
	if *err == nil || ctx.Err() == nil && !errors.Is(*err, context.Canceled) {
		return
	}
	if _, serr := os.Stat(r.indexBackup()); serr != nil {
		return
	}
	lock, lerr := acquireLock(r.indexFile)
	if lerr != nil {
		r.log.Warn("restore the index after the interrupted commit", "err", lerr)
		return
	}
	defer lock.release()
	if rerr := os.Rename(r.indexBackup(), r.indexFile); rerr != nil {
		r.log.Warn("restore the index after the interrupted commit", "err", rerr)
	}
}

// fsckTrees has git check the commit's new trees as `git fsck --strict`
// and every remote that checks what it receives do (index-pack --strict of
// a pack of them): names git add takes but fsck rejects (".g\u200cit", a
// directory .gitmodules) are refused rather than pushed in vain.
func (r *Repo) fsckTrees(ctx context.Context, trees []plumbing.Hash) error {
	if r.gitBin == "" || len(trees) == 0 {
		return nil
	}
	// The trees, and the .gitattributes and .gitmodules blobs they name:
	// fsck reads those too, and would find them missing from the pack.
	var ids strings.Builder
	for _, t := range trees {
		ids.WriteString(t.String() + "\n")
		es, err := r.treeEntries(t)
		if err != nil {
			return err
		}
		for _, e := range es {
			if name := strings.ToLower(e.Name); e.Mode.IsFile() && (name == ".gitattributes" || name == ".gitmodules") {
				ids.WriteString(e.Hash.String() + "\n")
			}
		}
	}
	pack, err := r.git(ctx, gitRun{stdin: strings.NewReader(ids.String())}, "pack-objects", "-q", "--stdout")
	if err != nil {
		return fmt.Errorf("check the new trees: %w", err)
	}
	tmp, err := os.MkdirTemp("", "debussy-fsck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The pack and its index go to tmp, not into the repository.
	_, err = r.git(ctx, gitRun{stdin: bytes.NewReader(pack)}, "index-pack", "--strict", "--stdin",
		"-o", filepath.Join(tmp, "new.idx"), filepath.Join(tmp, "new.pack"))
	var ge *GitError
	if errors.As(err, &ge) {
		return fmt.Errorf("git fsck would reject the commit's tree, and so would a remote that checks what it receives; rename, remove or ignore the path: %s", strings.TrimSpace(ge.Stderr))
	}
	return err
}

// fsckMayReject says a changed path may spell .git* as fsck reads names
// (case, NTFS "git~1" and "gi7eba~1", HFS+'s ignored non-ASCII points).
func fsckMayReject(c Change) bool {
	lower := strings.ToLower(c.Path)
	return c.Status != "D" && (strings.Contains(lower, "git") || strings.Contains(lower, "gi7") ||
		strings.ContainsFunc(c.Path, func(r rune) bool { return r >= 0x80 }))
}

var emptyTreeHash = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904") // no entries

// AllowEmpty is `git commit --allow-empty` (not on an unborn branch): phase
// outcomes use it so that git history records every phase's end.
func AllowEmpty() CommitOption {
	return func(o *commitOptions) { o.allowEmpty = true }
}

// Written has CommitAll call record with the new commit's hash before the
// branch moves to it (an error stops the commit there, the work staged): a
// ledger that lists it first never misses a commit the branch points at.
func Written(record func(hash string) error) CommitOption {
	return func(o *commitOptions) { o.written = record }
}

// treeEntries reads one tree object's entries; the zero hash is the empty
// tree.
func (r *Repo) treeEntries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() || h == emptyTreeHash {
		return nil, nil
	}
	if es, ok := r.trees[h]; ok {
		return es, nil
	}
	t, err := r.repo.TreeObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", Short(h.String()), err)
	}
	// Trees never change: kept across commits, which mostly read the
	// same ones again, up to a bound.
	if r.trees == nil || len(r.trees) > maxCachedTrees {
		r.trees = map[plumbing.Hash][]object.TreeEntry{}
	}
	r.trees[h] = t.Entries
	return t.Entries, nil
}

// maxCachedTrees bounds treeEntries' cache (a 100,000-file tree has a few
// thousand).
const maxCachedTrees = 20000

// diffTrees is `git diff --no-renames --name-status` between two trees (a
// zero hash is the empty tree), sorted by path. It reads only the subtrees
// whose hashes differ; go-git's DiffTree loads every sibling of a changed
// directory, which on a wide tree costs more than the whole commit.
func (r *Repo) diffTrees(from, to plumbing.Hash) ([]Change, error) {
	return r.diffTreesInto(from, to, nil)
}

// treeDiff is what a diff collects beside its changes (checkMade): the
// trees of to it read (those not in from), and the object each path to
// adds holds.
type treeDiff struct {
	trees []plumbing.Hash
	added map[string]plumbing.Hash
}

// diffTreesInto is diffTrees, collecting into d when not nil.
func (r *Repo) diffTreesInto(from, to plumbing.Hash, d *treeDiff) ([]Change, error) {
	var out []Change
	if d != nil && d.added == nil {
		d.added = map[string]plumbing.Hash{}
	}
	if err := r.diffTree("", from, to, &out, d); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func (r *Repo) diffTree(prefix string, from, to plumbing.Hash, out *[]Change, d *treeDiff) error {
	if from == to {
		return nil
	}
	if d != nil && !to.IsZero() {
		d.trees = append(d.trees, to)
	}
	a, err := r.treeEntries(from)
	if err != nil {
		return err
	}
	b, err := r.treeEntries(to)
	if err != nil {
		return err
	}
	inA := make(map[string]*object.TreeEntry, len(a))
	for i := range a {
		inA[a[i].Name] = &a[i]
	}
	for i := range b {
		y := &b[i]
		x := inA[y.Name]
		delete(inA, y.Name)
		if err := r.diffEntry(prefix+y.Name, x, y, out, d); err != nil {
			return err
		}
	}
	for _, x := range inA {
		if err := r.diffEntry(prefix+x.Name, x, nil, out, d); err != nil {
			return err
		}
	}
	return nil
}

// diffEntry compares what one path holds on each side (nil: nothing). A
// directory on one side and a file on the other is a delete plus an add.
func (r *Repo) diffEntry(path string, x, y *object.TreeEntry, out *[]Change, d *treeDiff) error {
	xDir := x != nil && x.Mode == filemode.Dir
	yDir := y != nil && y.Mode == filemode.Dir
	if xDir || yDir {
		var from, to plumbing.Hash
		if xDir {
			from = x.Hash
		}
		if yDir {
			to = y.Hash
		}
		if err := r.diffTree(path+"/", from, to, out, d); err != nil {
			return err
		}
	}
	if xDir {
		x = nil
	}
	if yDir {
		y = nil
	}
	switch {
	case x != nil && y != nil:
		if x.Hash != y.Hash || x.Mode != y.Mode {
			*out = append(*out, Change{Status: "M", Path: path})
		}
	case x != nil:
		*out = append(*out, Change{Status: "D", Path: path})
	case y != nil:
		*out = append(*out, Change{Status: "A", Path: path})
		if d != nil {
			d.added[path] = y.Hash
		}
	}
	return nil
}
