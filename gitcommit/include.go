package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// A .worktreeinclude (gitignore syntax, at the root; the convention of
// Claude Code, Codex, Conductor and ccmanager) names the files a new
// worktree needs that git does not check out: .env, local settings. Only
// files git ignores qualify, so a copy can never be a tracked file, and
// the same ignore rules CommitAll follows decide it.

// IgnoredFile is one file IgnoredMatching found.
type IgnoredFile struct {
	Path string      // slash-separated, relative to the root
	Mode fs.FileMode // from lstat: a regular file or a symlink, with its permissions
}

// IgnoredMatching lists, sorted, the files of the worktree that git ignores
// and that patterns (gitignore syntax) select: never a tracked file, nothing
// under .git or .debussy, nothing inside a nested repository. A directory
// a pattern selects selects every ignored file below it, as an ignored
// directory ignores everything below it. Symlinks are listed, never
// followed; sockets, fifos and devices are left out.
func (r *Repo) IgnoredMatching(patterns []byte) ([]IgnoredFile, error) {
	include := ignoreList(parseIgnoreFile(patterns, ""))
	if len(include) == 0 {
		return nil, nil
	}
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	defer end()
	idx, err := r.readIndex()
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	cfg, err := r.readConfig()
	if err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	excludes, err := r.excludePatterns(cfg)
	if err != nil {
		return nil, fmt.Errorf("list ignored files: read ignore rules: %w", err)
	}
	w := &ignoredWalk{r: r, include: include, fold: cfg.bool("core.ignoreCase", false),
		tracked: map[string]bool{}, trackedDir: map[string]bool{}}
	for _, e := range idx.Entries {
		w.tracked[e.Name] = true
		for dir, _ := splitDir(e.Name); dir != "" && !w.trackedDir[dir]; dir, _ = splitDir(dir) {
			w.trackedDir[dir] = true
		}
	}
	if err := w.walk("", excludes, false, false); err != nil {
		return nil, fmt.Errorf("list ignored files: %w", err)
	}
	slices.SortFunc(w.out, func(a, b IgnoredFile) int { return strings.Compare(a.Path, b.Path) })
	return w.out, nil
}

type ignoredWalk struct {
	r                   *Repo
	include             ignoreList
	fold                bool
	tracked, trackedDir map[string]bool
	out                 []IgnoredFile
}

// walk lists rel's entries; ignored and included say whether rel itself
// is (then everything below is).
func (w *ignoredWalk) walk(rel string, patterns ignoreList, ignored, included bool) error {
	abs := w.r.root
	base := ""
	if rel != "" {
		abs += string(os.PathSeparator) + rel
		base = rel + "/"
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		w.r.log.Warn("skip unreadable directory", "dir", abs, "err", err)
		return nil
	}
	if !ignored {
		if ps := w.r.readDirIgnore(abs, base); len(ps) > 0 {
			patterns = append(patterns[:len(patterns):len(patterns)], ps...)
		}
	}
	for _, de := range ents {
		name := de.Name()
		typ := de.Type()
		isDir := typ.IsDir()
		if strings.EqualFold(name, ".git") || (isDir && name == stateDir) {
			continue
		}
		path := base + name
		ign := ignored || patterns.excluded(path, isDir, w.fold)
		inc := included || w.include.excluded(path, isDir, w.fold)
		switch {
		case isDir:
			if !w.trackedDir[path] && isNonBareRepo(abs+string(os.PathSeparator)+name) {
				continue // another repository's files are not this one's
			}
			if !inc && !w.mayHold(path) {
				continue
			}
			if err := w.walk(path, patterns, ign, inc); err != nil {
				return err
			}
		case !typ.IsRegular() && typ&fs.ModeSymlink == 0, w.tracked[path], !ign, !inc:
		default:
			info, err := de.Info()
			if err != nil {
				continue // gone meanwhile
			}
			w.out = append(w.out, IgnoredFile{Path: path, Mode: info.Mode()})
		}
	}
	return nil
}

// mayHold reports whether an include pattern could select a path below dir:
// any basename pattern can; a path pattern only when its literal prefix
// and dir agree. It spares the walk directories no pattern reaches.
func (w *ignoredWalk) mayHold(dir string) bool {
	for i := range w.include {
		ip := &w.include[i]
		if ip.flags&patNegative != 0 {
			continue
		}
		if ip.flags&patNoDir != 0 {
			return true
		}
		lit := strings.TrimPrefix(ip.pattern, "/")
		if i := strings.IndexAny(lit, "*?[\\"); i >= 0 {
			lit = lit[:i]
		}
		d := dir + "/"
		if w.fold {
			lit, d = strings.ToLower(lit), strings.ToLower(d)
		}
		if strings.HasPrefix(lit, d) || strings.HasPrefix(d, lit) {
			return true
		}
	}
	return false
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

// notInHead is never without the paths HEAD's tree has: those are the
// branch's files, committed as usual.
func (r *Repo) notInHead(h head, never pathSet) (pathSet, error) {
	if len(never) == 0 || h.hash.IsZero() {
		return never, nil
	}
	c, err := r.repo.CommitObject(h.hash)
	if err != nil {
		return nil, fmt.Errorf("read HEAD commit: %w", err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read HEAD tree: %w", err)
	}
	out := make(pathSet, len(never))
	for p := range never {
		_, err := tree.FindEntry(p)
		switch {
		case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound):
			out[p] = true
		case err != nil:
			return nil, fmt.Errorf("read HEAD tree at %s: %w", p, err)
		}
	}
	return out, nil
}
