package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

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
	// Ignored lists the untracked paths left out as ignored, top-most only
	// (an ignored directory is not entered): VerifyOptions.Ignored.
	Ignored []string
	// Unstaged lists the Never paths found in the index (an agent's
	// `git add -f .env`) and taken back out of it, left in the worktree.
	Unstaged []string
	// GitReplaced lists the paths where debussy's staging differed from
	// git's and git's entry was committed instead (see CommitAll and
	// WriteRepro).
	GitReplaced []PathDisagreement
	// StagedByGit says git's verdict ran: `git add -A` staged the tree too,
	// before any hook ran, and GitReplaced is the whole difference. Asking
	// git again later (Verify) would report what a hook formatted, staged
	// or amended since, not what git would have committed.
	StagedByGit bool
}

// LongPathError is a worktree path longer than the system lets a program
// open: `git add -A` fails on it too ("unable to stat").
type LongPathError struct {
	Path string // relative to the worktree root
	Err  error
}

func (e *LongPathError) Error() string {
	top, _, _ := strings.Cut(e.Path, "/")
	return fmt.Sprintf("a path in the worktree is longer than the system allows (%d bytes): %s; "+
		"git cannot add it either: shorten or move it, or add %s/ to .gitignore", len(e.Path), shortenPath(e.Path, 60), shortenPath(top, 20))
}

func (e *LongPathError) Unwrap() error { return e.Err }

// longPathError names the path of an ENAMETOOLONG error relative to the
// root; the raw error holds all 4 KB of it and no way out.
func (r *Repo) longPathError(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return &LongPathError{Path: "(unknown)", Err: err}
	}
	p := pe.Path
	if rel, rerr := filepath.Rel(r.root, p); rerr == nil && !strings.HasPrefix(rel, "..") {
		p = filepath.ToSlash(rel)
	}
	return &LongPathError{Path: p, Err: syscall.ENAMETOOLONG}
}

// shortenPath keeps keep bytes at the start and the end of a long path.
func shortenPath(p string, keep int) string {
	if len(p) <= 2*keep {
		return p
	}
	head, tail := keep, len(p)-keep
	for head > 0 && !utf8.RuneStart(p[head]) {
		head--
	}
	for tail < len(p) && !utf8.RuneStart(p[tail]) {
		tail++
	}
	return p[:head] + "…" + p[tail:]
}

// CommitAll stages everything `git add -A` would (see the package comment)
// and commits it with msg on the current branch (or detached HEAD). It
// returns ErrNothingToCommit when the resulting tree equals HEAD's, and an
// error wrapping ErrLocked when a git command holds the index or branch lock.
// A message is given a final newline; an empty one becomes
// "debussy: checkpoint" (git would refuse, and the work must be saved).
//
// Like `git add -A && git commit -m msg` it applies clean filters (including
// the long-running protocol git-lfs uses), core.autocrlf and the text, eol
// and ident attributes; runs the pre-commit, prepare-commit-msg, commit-msg
// and post-commit hooks (core.hooksPath honoured); signs when
// commit.gpgSign is set (openpgp, x509, ssh); and mid-merge makes a merge
// commit, mid-cherry-pick keeps the picked commit's author, and clears those
// operations' state. A refusing hook returns a *HookError (ErrHookRejected):
// nothing is committed, the work stays in the tree and staged. What it
// cannot honour is an *UnsupportedError (ErrUnsupported); Preflight reports
// those before any work starts. Options (Exclude) narrow what is staged.
//
// Where git is on PATH, git's verdict wins: git stages the worktree too
// (`git add -A` on a temporary copy of the index as it was, hooks off;
// Commit.StagedByGit), and wherever its entry differs from debussy's, git's
// is committed and the path listed in Commit.GitReplaced; when git add -A fails, nothing is
// committed (*GitRefusedError). Without git, debussy's staging stands.
func (r *Repo) CommitAll(msg string, opts ...CommitOption) (Commit, error) {
	var o commitOptions
	for _, opt := range opts {
		opt(&o)
	}
	end, err := r.begin()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	defer end()

	lock, err := r.acquireLock(r.indexFile)
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	defer lock.release()

	idx, err := r.readIndex()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	h, err := r.readHead()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	cfg, err := r.readConfig()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	excludes, err := r.excludePatterns(cfg)
	if err != nil {
		return Commit{}, fmt.Errorf("commit: read ignore rules: %w", err)
	}

	bin := "" // the git whose verdict stages this commit too (gitverdict.go)
	if o.entries == nil {
		bin = r.verdictGit()
	}
	s := r.newStager(idx, cfg, true)
	s.conv.deferEncoding = bin != ""
	s.sparse = r.sparsePatterns(cfg)
	s.exclude = o.exclude
	if s.never, err = r.notInHead(h, o.never); err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	if o.entries != nil {
		s.entries = o.entries
	} else {
		err = s.refreshTracked(idx.Entries)
		if err == nil {
			err = s.addUntracked(excludes)
		}
	}
	s.conv.close()
	if errors.Is(err, syscall.ENAMETOOLONG) {
		err = r.longPathError(err)
	}
	if err == nil && len(s.outsideSparse) > 0 {
		err = &SparsePathError{Paths: s.outsideSparse}
	}
	if err != nil {
		return Commit{}, fmt.Errorf("commit: stage: %w", err)
	}
	if o.entries == nil && cfg.bool("core.ignoreStat", false) {
		s.markAssumeUnchanged()
	}
	var replaced []PathDisagreement
	stagedByGit := false
	if o.entries == nil {
		if s.entries, replaced, stagedByGit, err = r.verdict(bin, s, cfg); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
	}

	tree, trees := buildTree(s.entries)
	var parentTree plumbing.Hash
	var parents []plumbing.Hash
	if !h.hash.IsZero() {
		pc, err := r.repo.CommitObject(h.hash)
		if err != nil {
			return Commit{}, fmt.Errorf("commit: read HEAD commit: %w", err)
		}
		parentTree, parents = pc.TreeHash, []plumbing.Hash{h.hash}
	}
	if err := r.storeTrees(trees, tree, parentTree); err != nil {
		return Commit{}, fmt.Errorf("commit: write trees: %w", err)
	}

	op, err := r.commitState()
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	changed := len(s.unstaged) > 0 || len(s.added) > 0 || len(replaced) > 0
	// Mid-merge, an unchanged tree is still a commit: the merge itself.
	empty := tree == parentTree && len(op.parents) == 0 && !(o.allowEmpty && !h.hash.IsZero())
	if !empty && len(op.parents) == 0 && !o.allowEmpty && r.onlyIgnoredSubmodules(cfg, s.entries, parentTree) {
		empty = true // diff.ignoreSubmodules=all: git commit sees nothing either
	}
	if empty || (h.hash.IsZero() && len(s.entries) == 0) {
		if changed || s.refresh {
			// Keep what `git add -A` would have staged and the refreshed
			// stat data, so the next check is cheap.
			b, err := r.encodeIndex(idx, s.entries, lock.created)
			if err == nil {
				err = lock.commit(b)
			}
			if err != nil {
				r.log.Warn("write refreshed index", "err", err)
			} else {
				r.postIndexChange(cfg)
			}
		}
		return Commit{}, ErrNothingToCommit
	}

	if len(s.changed) > 0 && o.note != nil {
		msg = o.note(msg, s.changed)
	}
	if strings.TrimSpace(msg) == "" {
		msg = "debussy: checkpoint" // git would refuse; losing the work is worse
	}
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	parents = append(parents, op.parents...)
	author, committer, err := r.signature(cfg)
	if err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	if op.author != nil {
		author = *op.author
	}

	// Hooks (hooks.go). pre-commit sees the index `git add -A` leaves, so
	// it is written first; git re-reads it afterwards, since the hook may
	// stage more.
	env := r.hookEnv(author)
	if _, ok := r.hookPath(cfg, "pre-commit"); ok {
		b, err := r.encodeIndex(idx, s.entries, lock.created)
		if err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		if err := lock.commit(b); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		r.postIndexChange(cfg)
		if _, err := r.runHook(cfg, "pre-commit", env); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		if tree, trees, s.entries, err = r.indexTree(); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		if err := r.storeTrees(trees, tree, parentTree); err != nil {
			return Commit{}, fmt.Errorf("commit: write trees: %w", err)
		}
		if tree == parentTree && len(op.parents) == 0 && !o.allowEmpty {
			return Commit{}, ErrNothingToCommit
		}
	}
	if msg, err = r.messageHooks(cfg, env, msg); err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}

	c := &object.Commit{
		Author:       author,
		Committer:    committer,
		Message:      msg,
		TreeHash:     tree,
		ParentHashes: parents,
	}
	if enc := cfg.get("i18n.commitEncoding"); enc != "" && !isUTF8Name(enc) {
		c.Encoding = object.MessageEncoding(enc) // git's "encoding" header
	}
	if cfg.bool("commit.gpgSign", false) {
		if err := r.signCommit(cfg, c); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
	}
	obj := r.store.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return Commit{}, fmt.Errorf("commit: encode: %w", err)
	}
	if r.shared != 0 {
		if _, err := r.objectDir(obj.Hash()); err != nil {
			return Commit{}, fmt.Errorf("commit: write commit object: %w", err)
		}
	}
	next, err := r.store.SetEncodedObject(obj)
	if err != nil {
		return Commit{}, fmt.Errorf("commit: write commit object: %w", err)
	}

	// The index goes first: if the ref update then fails, the work is staged
	// and the next CommitAll picks it up; the reverse order would show the
	// new commit's changes as staged reversals. (Already written if a
	// pre-commit hook ran.)
	if !lock.done {
		b, err := r.encodeIndex(idx, s.entries, lock.created)
		if err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		if err := lock.commit(b); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
		r.postIndexChange(cfg)
	}
	if o.written != nil {
		if err := o.written(next.String()); err != nil {
			return Commit{}, fmt.Errorf("commit: %w", err)
		}
	}
	reflog := reflogOpts{label: op.reflog, onlyExisting: !logAllRefUpdates(cfg)}
	if err := r.updateRef(h, next, committer, subjectOf(msg), reflog); err != nil {
		return Commit{}, fmt.Errorf("commit: %w", err)
	}
	op.finish(r)
	if _, err := r.runHook(cfg, "post-commit", env); err != nil {
		// git ignores post-commit's exit status.
		r.log.Warn("post-commit hook failed", "err", err)
	}

	files, err := r.countChanges(parentTree, tree)
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w", Short(next.String()), err)
	}
	r.log.Debug("committed", "commit", Short(next.String()), "files", files,
		"modified_or_deleted", len(s.unstaged), "added", len(s.added))
	return Commit{Hash: next.String(), Files: files, Changed: s.changed, Ignored: s.ignored, Unstaged: s.unstagedNever,
		GitReplaced: replaced, StagedByGit: stagedByGit}, nil
}

// AllowEmpty makes CommitAll commit even when the tree equals HEAD's, like
// `git commit --allow-empty`: hooks and signing apply as to any commit. A
// branch without a commit still has nothing to commit. Phase outcomes use
// it so that git history records every phase's end (see ReadLedger).
func AllowEmpty() CommitOption {
	return func(o *commitOptions) { o.allowEmpty = true }
}

// Written has CommitAll call record with the new commit's hash once the
// commit is in the object store and before the branch moves to it; an
// error from record stops the commit there (the branch stays, the work is
// staged). A caller that keeps its own ledger of commits records the commit
// there first, so a crash at any moment never leaves the branch at a commit
// the ledger does not list.
func Written(record func(hash string) error) CommitOption {
	return func(o *commitOptions) { o.written = record }
}

func subjectOf(msg string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	return strings.TrimSpace(first)
}

// countChanges counts the paths that differ between two trees.
func (r *Repo) countChanges(from, to plumbing.Hash) (int, error) {
	ch, err := r.diffTrees(from, to)
	return len(ch), err
}

// treeEntries reads one tree object's entries; the zero hash is the empty
// tree.
func (r *Repo) treeEntries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := r.repo.TreeObject(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", Short(h.String()), err)
	}
	return t.Entries, nil
}

// diffTrees is `git diff --no-renames --name-status` between two trees (a
// zero hash is the empty tree), sorted by path. It reads only the subtrees
// whose hashes differ; go-git's DiffTree loads every sibling of a changed
// directory, which on a wide tree costs more than the whole commit.
func (r *Repo) diffTrees(from, to plumbing.Hash) ([]Change, error) {
	var out []Change
	if err := r.diffTree("", from, to, &out); err != nil {
		return nil, err
	}
	sortChanges(out)
	return out, nil
}

func (r *Repo) diffTree(prefix string, from, to plumbing.Hash, out *[]Change) error {
	if from == to {
		return nil
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
		if err := r.diffEntry(prefix+y.Name, x, y, out); err != nil {
			return err
		}
	}
	for _, x := range inA {
		if err := r.diffEntry(prefix+x.Name, x, nil, out); err != nil {
			return err
		}
	}
	return nil
}

// diffEntry compares what one path holds on each side (nil: nothing). A
// directory on one side and a file on the other is a delete plus an add.
func (r *Repo) diffEntry(path string, x, y *object.TreeEntry, out *[]Change) error {
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
		if err := r.diffTree(path+"/", from, to, out); err != nil {
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
			*out = append(*out, Change{Status: "M", Path: path, fromMode: x.Mode, fromHash: x.Hash})
		}
	case x != nil:
		*out = append(*out, Change{Status: "D", Path: path, fromMode: x.Mode, fromHash: x.Hash})
	case y != nil:
		*out = append(*out, Change{Status: "A", Path: path})
	}
	return nil
}
