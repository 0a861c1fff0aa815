// Package worktree fills a phase's git worktree with what git does not
// check out there but the project needs to run: copies of the user's
// ignored files that .worktreeinclude names (.env, local settings), the
// convention of Claude Code, Codex, Conductor and ccmanager.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/debussy-dev/debussy/gitcommit"
)

// IncludeFile names, in gitignore syntax, ignored files of the user's
// checkout each phase worktree gets a copy of.
const IncludeFile = ".worktreeinclude"

// Includes lists the files that repo's IncludeFile selects and git ignores
// in the user's checkout: never a tracked file. found is false when the
// repository has no IncludeFile.
func Includes(ctx context.Context, repo *gitcommit.Repo) (files []gitcommit.IgnoredFile, found bool, err error) {
	b, err := os.ReadFile(filepath.Join(repo.Root(), IncludeFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read %s: %w", IncludeFile, err)
	}
	if files, err = repo.IgnoredMatching(ctx, b); err != nil {
		return nil, true, fmt.Errorf("%s: %w", IncludeFile, err)
	}
	return files, true, nil
}

// CopyIncludes copies files (Includes', in the user's checkout at src)
// into the worktree at dst with their permissions, and returns how
// many it copied. A file already there (a resumed worktree: the agent may
// have changed it) is kept. Through os.Root neither side is left through
// a symlink; a symlink among the files is copied only when it is relative
// and stays inside the repository, else skipped with a warning, as is a
// file whose directory in the worktree is a symlink.
func CopyIncludes(log *slog.Logger, src, dst string, files []gitcommit.IgnoredFile) (int, error) {
	if len(files) == 0 {
		return 0, nil
	}
	from, err := os.OpenRoot(src)
	if err != nil {
		return 0, err
	}
	defer from.Close()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return 0, err
	}
	defer to.Close()
	n := 0
	for _, f := range files {
		name := filepath.FromSlash(f.Path)
		if why := symlinkedDir(to, name); why != "" {
			log.Warn("not copied into the phase's worktree: "+why, "file", f.Path)
			continue
		}
		if f.Mode&fs.ModeSymlink != 0 {
			target, err := from.Readlink(name)
			if err != nil {
				return n, err
			}
			if filepath.IsAbs(target) || !filepath.IsLocal(filepath.Join(filepath.Dir(name), target)) {
				log.Warn("not copied into the phase's worktree: a symlink pointing out of the repository", "file", f.Path, "target", target)
				continue
			}
			if err := to.MkdirAll(filepath.Dir(name), 0o777); err != nil {
				return n, err
			}
			switch err := to.Symlink(target, name); {
			case errors.Is(err, fs.ErrExist):
			case err != nil:
				return n, err
			default:
				n++
			}
			continue
		}
		copied, err := copyFile(from, to, name, f.Mode.Perm())
		if err != nil {
			return n, fmt.Errorf("%s: %w", f.Path, err)
		}
		if copied {
			n++
		}
	}
	return n, nil
}

// symlinkedDir says why name cannot be written in root when one of its
// directories there is a symlink (a tracked one in the worktree): writing
// through it would write somewhere else.
func symlinkedDir(root *os.Root, name string) string {
	for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
		if st, err := root.Lstat(dir); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Sprintf("its directory %s is a symlink in the worktree", filepath.ToSlash(dir))
		}
	}
	return ""
}

// copyFile copies the regular file name from one root to the other with
// permissions perm, unless it exists there already.
func copyFile(from, to *os.Root, name string, perm fs.FileMode) (bool, error) {
	in, err := from.Open(name)
	if err != nil {
		return false, err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return false, err // changed since it was listed: not a file to copy
	}
	if err := to.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return false, err
	}
	out, err := to.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm) // the umask narrowed it
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = to.Remove(name) // no half copy
		return false, err
	}
	return true, nil
}
