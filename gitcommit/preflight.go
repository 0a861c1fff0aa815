package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

var (
	// ErrUnsupported marks a repository feature debussy's commits cannot
	// honour the way git would; see UnsupportedError.
	ErrUnsupported = errors.New("unsupported git feature")
	// ErrInProgress means a merge, rebase, cherry-pick, revert or bisect is
	// under way; see InProgressError.
	ErrInProgress = errors.New("git operation in progress")
)

// UnsupportedError names a feature a commit by debussy would not honour as
// git does, and what the user can do about it.
type UnsupportedError struct {
	Feature string // e.g. "filter.lfs.process"
	Detail  string // where it was found
	WayOut  string // what to change so debussy can run
}

func (e *UnsupportedError) Error() string {
	msg := e.Feature + " is not supported by debussy's commits"
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	if e.WayOut != "" {
		msg += "; " + e.WayOut
	}
	return msg
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// InProgressError is a git operation the user started and has not finished.
type InProgressError struct {
	Operation string // "merge", "rebase", "cherry-pick", "revert", "bisect", "am"
	Marker    string // the file or directory that shows it, relative to the git dir
	Finish    string // how to finish or abort it
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("the repository is in the middle of a %s (%s exists); %s, then run debussy again",
		e.Operation, e.Marker, e.Finish)
}

func (e *InProgressError) Unwrap() error { return ErrInProgress }

// inProgress lists, in the order git's own status reports them, the
// per-worktree markers of unfinished operations.
var inProgress = []InProgressError{
	{Operation: "rebase", Marker: "rebase-merge", Finish: "finish it with `git rebase --continue` or give up with `git rebase --abort`"},
	{Operation: "am", Marker: "rebase-apply/applying", Finish: "finish it with `git am --continue` or give up with `git am --abort`"},
	{Operation: "rebase", Marker: "rebase-apply", Finish: "finish it with `git rebase --continue` or give up with `git rebase --abort`"},
	{Operation: "merge", Marker: "MERGE_HEAD", Finish: "finish it with `git merge --continue` (after `git add` of the resolved files) or give up with `git merge --abort`"},
	{Operation: "cherry-pick", Marker: "CHERRY_PICK_HEAD", Finish: "finish it with `git cherry-pick --continue` or give up with `git cherry-pick --abort`"},
	{Operation: "revert", Marker: "REVERT_HEAD", Finish: "finish it with `git revert --continue` or give up with `git revert --abort`"},
	{Operation: "cherry-pick or revert sequence", Marker: "sequencer", Finish: "finish it with `git cherry-pick --continue` / `git revert --continue`, or give up with `--abort`"},
	{Operation: "bisect", Marker: "BISECT_LOG", Finish: "end it with `git bisect reset`"},
}

// operationInProgress returns the first unfinished operation found, or nil.
func (r *Repo) operationInProgress() *InProgressError {
	for _, op := range inProgress {
		if _, err := os.Lstat(filepath.Join(r.gitDir, filepath.FromSlash(op.Marker))); err == nil {
			e := op
			return &e
		}
	}
	return nil
}

// Preflight reports, before any work starts, what would make a later
// CommitAll differ from `git add -A && git commit`: an unfinished git
// operation (an *InProgressError) or a feature not supported yet (an
// *UnsupportedError). Every problem found is returned, joined.
func (r *Repo) Preflight() error {
	end, err := r.begin()
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	defer end()

	var errs []error
	if op := r.operationInProgress(); op != nil {
		errs = append(errs, op)
	}
	cfg, err := r.readConfig(context.Background())
	if err != nil {
		return errors.Join(append(errs, err)...) // every git command would fail on it too
	}
	errs = append(errs, r.unsupportedConfig(cfg)...)
	if r.gitBin != "" {
		errs = append(errs, r.unsupportedHooks(cfg)...)
		return errors.Join(errs...)
	}
	errs = append(errs, r.gitlessConfig(cfg)...)
	h, err := r.readHead()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var tree plumbing.Hash
	if !h.hash.IsZero() {
		c, err := r.repo.CommitObject(h.hash)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("read HEAD commit: %w", err))...)
		}
		tree = c.TreeHash
	}
	errs = append(errs, r.gitlessTree(r.indexFile, tree))
	return errors.Join(errs...)
}

// unsupportedConfig checks the configuration a commit would fail on.
func (r *Repo) unsupportedConfig(cfg gitConfig) []error {
	var errs []error
	if cfg.bool("commit.gpgSign", false) && r.gitBin != "" {
		if err := signFormatSupported(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// unsupportedHooks refuses the user's reference-transaction hook: debussy
// answers the commit's transaction itself (commitshim.go) and runs the
// user's from its own, which would then see a transaction debussy may
// still refuse.
func (r *Repo) unsupportedHooks(cfg gitConfig) []error {
	var errs []error
	for _, name := range []string{"reference-transaction"} {
		if p, ok := r.hookPath(cfg, name); ok {
			errs = append(errs, &UnsupportedError{
				Feature: "the " + name + " hook",
				Detail:  p,
				WayOut:  "remove it or make it non-executable while debussy runs",
			})
		}
	}
	return errs
}

// opState is what an unfinished operation changes about a commit made in
// the middle of it, as `git commit` does.
type opState struct {
	parents []plumbing.Hash   // MERGE_HEAD: the merged commits
	author  *object.Signature // CHERRY_PICK_HEAD: the picked commit's author
	remove  []string          // files under the git dir git removes after the commit
	reflog  string            // "merge" or "cherry-pick": the reflog's "commit (…)" label
}

// commitState reads MERGE_HEAD and CHERRY_PICK_HEAD / REVERT_HEAD so that
// a commit made mid-merge is a merge commit and one mid-cherry-pick keeps the
// original author, and the markers go away afterwards, as with `git commit`.
func (r *Repo) commitState() (opState, error) {
	var st opState
	b, err := os.ReadFile(filepath.Join(r.gitDir, "MERGE_HEAD"))
	switch {
	case err == nil:
		for _, f := range strings.Fields(string(b)) {
			h := plumbing.NewHash(f)
			if h.IsZero() || h.String() != strings.ToLower(f) {
				return opState{}, fmt.Errorf("read MERGE_HEAD: bad object %q", f)
			}
			st.parents = append(st.parents, h)
		}
		st.remove = append(st.remove, "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE")
		st.reflog = "merge"
	case !errors.Is(err, fs.ErrNotExist):
		return opState{}, fmt.Errorf("read MERGE_HEAD: %w", err)
	}
	b, err = os.ReadFile(filepath.Join(r.gitDir, "CHERRY_PICK_HEAD"))
	switch {
	case err == nil:
		c, err := r.repo.CommitObject(plumbing.NewHash(strings.TrimSpace(string(b))))
		if err != nil {
			return opState{}, fmt.Errorf("read CHERRY_PICK_HEAD: %w", err)
		}
		a := c.Author
		st.author = &a
		st.remove = append(st.remove, "CHERRY_PICK_HEAD")
		st.reflog = "cherry-pick"
	case !errors.Is(err, fs.ErrNotExist):
		return opState{}, fmt.Errorf("read CHERRY_PICK_HEAD: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(r.gitDir, "REVERT_HEAD")); err == nil {
		st.remove = append(st.remove, "REVERT_HEAD")
	}
	return st, nil
}

// finish removes the operation's markers once the commit is made.
func (st opState) finish(r *Repo) {
	for _, f := range st.remove {
		if err := os.Remove(filepath.Join(r.gitDir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("remove finished operation's state", "file", f, "err", err)
		}
	}
}
