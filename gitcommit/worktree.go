package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Linked worktrees: `git worktree add` where git is installed (its checkout
// runs the filters and eol conversion). Without git they are made by hand
// as git makes them, go-git v5 cannot: the administrative directory
// <common>/worktrees/<name> holds HEAD, commondir, gitdir and the index; the
// worktree's .git file points back to it; files are written as the blobs
// hold them (go-git mode's documented difference).

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

	// The branch: kept if it exists (a resumed phase), else created at base
	// once the checkout is known to be possible.
	tip := plumbing.NewHash(base)
	ref, err := r.store.Reference(refName)
	created := false
	switch {
	case err == nil:
		tip = ref.Hash()
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if tip.IsZero() || tip.String() != strings.ToLower(base) {
			return fmt.Errorf("bad base commit %q", base)
		}
		created = true
	default:
		return fmt.Errorf("read branch %s: %w", branch, err)
	}
	c, err := r.repo.CommitObject(tip)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", Short(tip.String()), err)
	}
	if r.gitBin != "" {
		args := []string{"worktree", "add", "--quiet", abs, branch}
		if created {
			args = []string{"worktree", "add", "--quiet", "-b", branch, abs, tip.String()}
		}
		if _, err := r.git(ctx, gitRun{noIndex: true}, args...); err != nil {
			return err
		}
		return nil
	}
	tree, err := r.flatten(c.TreeHash)
	if err != nil {
		return err
	}
	if created {
		if err := r.createRef(refName, tip, "branch: Created from "+base); err != nil {
			return err
		}
	}

	// The administrative directory, named like git names it (the path's
	// base name, made unique).
	admin, err := uniqueDir(filepath.Join(r.commonDir, "worktrees"), filepath.Base(abs))
	if err != nil {
		return err
	}
	if err := r.populateWorktree(abs, admin, refName, tree); err != nil {
		// Undone as `git worktree add` undoes a failed checkout.
		_ = os.RemoveAll(abs)
		_ = os.RemoveAll(admin)
		if created {
			_ = r.deleteBranch(refName)
		}
		return err
	}
	return nil
}

// CheckCheckout reports what checking HEAD out in a new worktree
// (AddWorktree) could not do as git would. With git installed git checks
// out itself, so nothing; without git, nothing is converted (go-git mode).
func (r *Repo) CheckCheckout() error { return nil }

// populateWorktree writes the administrative files, the worktree's .git
// file, its files and its index. Files are checked out by the new
// worktree's own Repo: filters run there, as git runs them.
func (r *Repo) populateWorktree(abs, admin string, refName plumbing.ReferenceName, tree map[string]treeFile) error {
	files := map[string]string{
		"HEAD":      "ref: " + refName.String() + "\n",
		"commondir": "../..\n",
		"gitdir":    filepath.Join(abs, ".git") + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(admin, name), []byte(content), 0o666); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(abs, ".git"), []byte("gitdir: "+admin+"\n"), 0o666); err != nil {
		return err
	}
	lr, err := r.OpenLinked(abs)
	if err != nil {
		return err
	}
	entries, err := lr.checkout(abs, nil, tree, nil)
	if err != nil {
		return err
	}
	return writeIndexFile(filepath.Join(admin, "index"), &index.Index{Version: 2, Entries: entries})
}

// uniqueDir creates parent/name, or parent/name1, name2… when taken.
func uniqueDir(parent, name string) (string, error) {
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		dir := filepath.Join(parent, name)
		if i > 0 {
			dir += fmt.Sprint(i)
		}
		err := os.Mkdir(dir, 0o777)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
}

// RemoveWorktree deletes the linked worktree at path and its administrative
// directory, as `git worktree remove --force` does: work not committed in
// it is lost. Its branch stays. A path that is no worktree is an error.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	end, err := r.begin()
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	defer end()
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if r.gitBin != "" {
		if _, err := r.git(ctx, gitRun{noIndex: true}, "worktree", "remove", "--force", "--force", abs); err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
		return nil
	}
	admin, err := readGitFile(filepath.Join(abs, ".git"))
	if err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if filepath.Dir(admin) != filepath.Join(r.commonDir, "worktrees") {
		return fmt.Errorf("remove worktree %s: not a linked worktree of %s", path, r.root)
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	if err := os.RemoveAll(admin); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	return nil
}

// DeleteBranch deletes a branch that is no worktree's HEAD, as `git branch
// -D` does (its reflog too). A missing branch is no error.
func (r *Repo) DeleteBranch(branch string) error {
	end, err := r.begin()
	if err != nil {
		return fmt.Errorf("delete branch %s: %w", branch, err)
	}
	defer end()
	if err := r.deleteBranch(plumbing.NewBranchReferenceName(branch)); err != nil {
		return fmt.Errorf("delete branch %s: %w", branch, err)
	}
	return nil
}

func (r *Repo) deleteBranch(name plumbing.ReferenceName) error {
	if err := r.store.RemoveReference(name); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return err
	}
	logPath := filepath.Join(r.commonDir, "logs", filepath.FromSlash(name.String()))
	if err := os.Remove(logPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("remove reflog", "ref", name, "err", err)
	}
	// Empty directories left in refs/heads/ and logs/refs/heads/, as git
	// removes them.
	branch := name.Short()
	for _, root := range []string{filepath.Join(r.commonDir, "refs", "heads"), filepath.Join(r.commonDir, "logs", "refs", "heads")} {
		removeEmptyParents(root, filepath.Dir(filepath.Join(root, filepath.FromSlash(branch))))
	}
	return nil
}

// createRef writes a new loose ref under its lock, with the reflog line git
// writes for `git branch`.
func (r *Repo) createRef(name plumbing.ReferenceName, to plumbing.Hash, why string) error {
	path := r.refPath(name)
	lock, err := r.acquireLock(path)
	if err != nil {
		return err
	}
	defer lock.release()
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("create %s: it exists", name)
	}
	if err := lock.commit([]byte(to.String() + "\n")); err != nil {
		return err
	}
	// The ref is made; without a committer only the reflog line is lost.
	cfg, _ := r.readConfig(context.Background())
	if _, who, err := r.identity(context.Background(), cfg); err == nil {
		line := reflogLine(plumbing.ZeroHash, to, who, why)
		if err := r.appendLine(filepath.Join(r.commonDir, "logs", filepath.FromSlash(name.String())), line); err != nil {
			r.log.Warn("append reflog", "ref", name, "err", err)
		}
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

// checkout turns the files of root from tree from into tree to (nil: empty)
// and returns the index entries for to, sorted: old entries (the index as
// read, by path) are kept where the path did not change, the others carry
// the stat data of the file just written. Untracked files are not touched
// except where to puts a file; callers check that first.
func (r *Repo) checkout(root string, from, to map[string]treeFile, old map[string]*index.Entry) ([]*index.Entry, error) {
	paths := make([]string, 0, len(to))
	var write []string
	for p, f := range to {
		paths = append(paths, p)
		if prev, ok := from[p]; !ok || prev != f {
			write = append(write, p)
		}
	}
	slices.Sort(paths)
	slices.Sort(write)
	// Deletions first, so a file can become a directory.
	var gone []string
	for p := range from {
		if _, ok := to[p]; !ok {
			gone = append(gone, p)
		}
	}
	slices.Sort(gone)
	for _, p := range slices.Backward(gone) {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if from[p].mode != filemode.Submodule {
				return nil, fmt.Errorf("remove %s: %w", p, err)
			}
		}
		removeEmptyParents(root, filepath.Dir(abs))
	}
	entries := make([]*index.Entry, 0, len(to))
	for _, p := range paths {
		f := to[p]
		if prev, ok := from[p]; ok && prev == f {
			if e := old[p]; e != nil && e.Hash == f.hash && e.Mode == f.mode && e.Stage == 0 {
				entries = append(entries, e)
				continue
			}
		}
		abs := filepath.Join(root, filepath.FromSlash(p))
		if prev, ok := from[p]; !ok || prev != f {
			if err := r.writeFile(abs, f); err != nil {
				return nil, fmt.Errorf("write %s: %w", p, err)
			}
		}
		e := &index.Entry{Name: p, Hash: f.hash, Mode: f.mode}
		if f.mode != filemode.Submodule {
			fi, err := os.Lstat(abs)
			if err != nil {
				return nil, fmt.Errorf("write %s: %w", p, err)
			}
			e.ModifiedAt, e.Size = fi.ModTime(), uint32(fi.Size())
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// writeFile writes a blob where a checkout puts it: a file (executable or
// not, as the blob holds it), a symlink, or an empty directory for a
// submodule.
func (r *Repo) writeFile(abs string, f treeFile) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
		return err
	}
	if f.mode == filemode.Submodule {
		return os.MkdirAll(abs, 0o777)
	}
	blob, err := r.repo.BlobObject(f.hash)
	if err != nil {
		return err
	}
	rd, err := blob.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	var src io.Reader = rd
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if f.mode == filemode.Symlink {
		target, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		return os.Symlink(string(target), abs)
	}
	perm := os.FileMode(0o666)
	if f.mode == filemode.Executable {
		perm = 0o777
	}
	w, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := w.ReadFrom(src); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// removeEmptyParents removes dir and its parents up to root while empty.
func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
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
	sameEnv := func(lr *Repo) { lr.env, lr.osEnv = r.env, r.osEnv } // git's verdict drops GIT_DIR and friends itself
	return Open(dir, WithLogger(r.log), WithClock(r.now), WithGetenv(getenv), sameEnv)
}
