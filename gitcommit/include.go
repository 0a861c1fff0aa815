package gitcommit

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// A .worktreeinclude (gitignore syntax, at the root; the convention of
// Claude Code, Codex, Conductor and ccmanager) names the files a new
// worktree needs that git does not check out: .env, local settings. Only
// files git ignores qualify, so a copy can never be a tracked file, and
// git's own ignore rules decide it.

// IgnoredFile is one file IgnoredMatching found.
type IgnoredFile struct {
	Path string      // slash-separated, relative to the root
	Mode fs.FileMode // from lstat: a regular file or a symlink, with its permissions
}

// IgnoredMatching lists, sorted, the files of the worktree that git ignores
// and that patterns (gitignore syntax) select: never a tracked file, nothing
// under .git or .debussy, nothing inside a nested repository. A directory
// a pattern selects selects every ignored file below it. Symlinks are
// listed, never followed; sockets, fifos and devices are left out. Where
// git is installed, git decides both (`git ls-files --others --ignored`).
func (r *Repo) IgnoredMatching(ctx context.Context, patterns []byte) ([]IgnoredFile, error) {
	if len(bytes.TrimSpace(patterns)) == 0 {
		return nil, nil
	}
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	defer end()
	if r.gitBin == "" {
		return nil, fmt.Errorf("list ignored files: %w", ErrNoGit) // only a linked worktree needs them
	}
	paths, err := r.ignoredByGit(ctx, patterns)
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	var out []IgnoredFile
	for _, p := range paths {
		if isStatePath(p) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		out = append(out, IgnoredFile{Path: p, Mode: fi.Mode()})
	}
	slices.SortFunc(out, func(a, b IgnoredFile) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// ignoredByGit is the untracked files patterns select that git ignores.
func (r *Repo) ignoredByGit(ctx context.Context, patterns []byte) ([]string, error) {
	f, err := os.CreateTemp("", "debussy-include-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(patterns)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	selected, err := r.git(ctx, gitRun{}, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+f.Name())
	if err != nil {
		return nil, err
	}
	ignored, err := r.git(ctx, gitRun{}, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--no-empty-directory")
	if err != nil {
		return nil, err
	}
	ign := map[string]bool{}
	for _, p := range strings.Split(string(ignored), "\x00") {
		ign[p] = true
	}
	var out []string
	for _, p := range strings.Split(string(selected), "\x00") {
		if p == "" || strings.HasSuffix(p, "/") {
			continue
		}
		for q := p; ; {
			if ign[q] {
				out = append(out, p)
				break
			}
			i := strings.LastIndexByte(strings.TrimSuffix(q, "/"), '/')
			if i < 0 {
				break
			}
			q = q[:i+1]
		}
	}
	return out, nil
}

// Never leaves the paths out of the commit whatever their content and
// whatever the ignore rules say by then: copies IgnoredMatching listed (a
// worktree's .env), which an agent editing .gitignore, or running
// `git add -f .env`, must not get committed. One the agent staged is taken
// back out of the index (Commit.Unstaged); the file stays. A path HEAD
// tracks is committed as usual.
func Never(paths []string) CommitOption {
	return func(o *commitOptions) {
		if len(paths) == 0 {
			return
		}
		if o.never == nil {
			o.never = make(pathSet, len(paths))
		}
		for _, p := range paths {
			o.never[p] = true
		}
	}
}

// pathSet is a set of slash paths.
type pathSet map[string]bool

// pathSetOf is the set of paths.
func pathSetOf(paths []string) pathSet {
	set := make(pathSet, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	return set
}

// notInHead is never without the paths HEAD's tree (zero: none) has:
// those are the branch's files, committed as usual.
func (r *Repo) notInHead(tree plumbing.Hash, never pathSet) (pathSet, error) {
	if len(never) == 0 || tree.IsZero() {
		return never, nil
	}
	out := make(pathSet, len(never))
	for p := range never {
		h := tree
		for comp := range strings.SplitSeq(p, "/") {
			es, err := r.treeEntries(h)
			if err != nil {
				return nil, err
			}
			h = plumbing.ZeroHash
			for _, e := range es {
				if e.Name == comp {
					h = e.Hash
				}
			}
			if h.IsZero() {
				out[p] = true // not HEAD's: the name may hold any byte
				break
			}
		}
	}
	return out, nil
}
