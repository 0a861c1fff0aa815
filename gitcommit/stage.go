package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// stager computes what `git add -A` puts in the index: it refreshes every
// tracked entry from the worktree (the way git compares lstat data before
// reading a file) and, for CommitAll, walks the directories that are not
// ignored for new files.
type stager struct {
	r        *Repo
	write    bool      // store blobs; false only hashes (DirtyTracked)
	fileMode bool      // core.fileMode: whether the executable bit counts
	racy     time.Time // mtime of the index as read: entries at or after it are re-read

	entries  []*index.Entry
	unstaged []string // tracked paths whose worktree content differs from the index
	added    []string // untracked paths staged by the walk
	refresh  bool     // only stat data changed; the index is worth rewriting
	dirOK    map[string]bool
}

func (r *Repo) newStager(idx *index.Index, cfg gitConfig, write bool) *stager {
	return &stager{
		r:        r,
		write:    write,
		fileMode: cfg.bool("core.fileMode", true),
		racy:     idx.ModTime,
		dirOK:    map[string]bool{"": true},
	}
}

var emptyBlob = objectHash(plumbing.BlobObject, nil)

// isStateDirPath reports whether p lies inside a .debussy directory at any
// depth: those files are never staged, even when tracked.
func isStateDirPath(p string) bool {
	for {
		dir, rest, ok := strings.Cut(p, "/")
		if !ok {
			return false
		}
		if dir == stateDir {
			return true
		}
		p = rest
	}
}

func (s *stager) abs(name string) string {
	if name == "" {
		return s.r.root
	}
	return s.r.root + string(filepath.Separator) + filepath.FromSlash(name)
}

// statAll lstats every entry, in parallel: on a large tree these syscalls
// are most of a commit's cost, and git spreads them over threads too
// (core.preloadIndex).
func (s *stager) statAll(entries []*index.Entry) ([]fileStat, error) {
	stats := make([]fileStat, len(entries))
	workers := min(runtime.GOMAXPROCS(0), 8, len(entries)/1000+1)
	errs := make([]error, workers)
	chunk := (len(entries) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(entries))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				st, err := lstat(s.abs(entries[i].Name))
				if err != nil {
					errs[w] = err
					return
				}
				stats[i] = st
			}
		})
	}
	wg.Wait()
	return stats, errors.Join(errs...)
}

// refreshTracked brings every tracked entry up to date with the worktree and
// leaves the result in s.entries, sorted.
func (s *stager) refreshTracked(entries []*index.Entry) error {
	slices.SortStableFunc(entries, func(a, b *index.Entry) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(a.Stage) - int(b.Stage)
	})
	stats, err := s.statAll(entries)
	if err != nil {
		return err
	}
	out := make([]*index.Entry, 0, len(entries))
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].Name == entries[i].Name {
			j++
		}
		group, st := entries[i:j], stats[i]
		i = j
		e := group[0]

		switch {
		case isStateDirPath(e.Name), e.SkipWorktree && e.Stage == 0:
			out = append(out, group...)
			continue
		case len(group) > 1 || e.Stage != 0:
			// Unmerged: `git add -A` resolves the conflict with whatever
			// the worktree holds now.
			s.unstaged = append(s.unstaged, e.Name)
			ne, err := s.entryFromWorktree(e.Name)
			if err != nil {
				return err
			}
			if ne != nil {
				out = append(out, ne)
			}
			continue
		}

		keep, err := s.refreshEntry(e, st)
		if err != nil {
			return err
		}
		if keep {
			out = append(out, e)
		}
	}
	s.entries = out
	return nil
}

// refreshEntry updates e in place; false means the path is gone from the
// worktree (or is a directory now) and the entry must be dropped.
func (s *stager) refreshEntry(e *index.Entry, st fileStat) (bool, error) {
	abs := s.abs(e.Name)
	if st.kind != kindMissing && !s.parentsAreDirs(e.Name) {
		st.kind = kindMissing // reached through a symlinked directory: git sees it as deleted
	}

	if e.Mode == filemode.Submodule {
		return s.refreshGitlink(e, abs, st)
	}

	switch st.kind {
	case kindRegular, kindSymlink:
	default:
		// Deleted, replaced by a directory (the walk adds its content) or by
		// something git cannot track.
		s.unstaged = append(s.unstaged, e.Name)
		return false, nil
	}

	mode := s.modeOf(st, e.Mode)
	if mode == e.Mode && !e.IntentToAdd && s.statMatches(e, st) {
		return true, nil
	}
	h, ok, err := s.hashFile(abs, st)
	if err != nil {
		return false, err
	}
	if !ok { // vanished between lstat and read
		s.unstaged = append(s.unstaged, e.Name)
		return false, nil
	}
	if h == e.Hash && mode == e.Mode && !e.IntentToAdd {
		s.refresh = true
	} else {
		s.unstaged = append(s.unstaged, e.Name)
	}
	e.Hash, e.Mode, e.IntentToAdd = h, mode, false
	setStat(e, st)
	return true, nil
}

// refreshGitlink follows `git add -A` for a submodule or staged nested
// repository: record its current HEAD; drop it when the directory is gone.
func (s *stager) refreshGitlink(e *index.Entry, abs string, st fileStat) (bool, error) {
	switch st.kind {
	case kindDir:
		h, ok := s.nestedHead(abs)
		if ok && h != e.Hash {
			s.unstaged = append(s.unstaged, e.Name)
			e.Hash = h
		}
		return true, nil // not checked out, or no commit yet: keep what is recorded
	case kindMissing:
		s.unstaged = append(s.unstaged, e.Name)
		return false, nil
	}
	// A file where the gitlink was: the walk adds it as a file.
	s.unstaged = append(s.unstaged, e.Name)
	return false, nil
}

// parentsAreDirs reports whether every leading directory of name is a real
// directory, not a symlink to one (git's has_symlink_leading_path).
func (s *stager) parentsAreDirs(name string) bool {
	dir, _ := splitDir(name)
	if ok, seen := s.dirOK[dir]; seen {
		return ok
	}
	ok := s.parentsAreDirs(dir)
	if ok {
		st, err := lstat(s.abs(dir))
		ok = err == nil && st.kind == kindDir
	}
	s.dirOK[dir] = ok
	return ok
}

func splitDir(name string) (dir, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

func (s *stager) modeOf(st fileStat, old filemode.FileMode) filemode.FileMode {
	switch {
	case st.kind == kindSymlink:
		return filemode.Symlink
	case !s.fileMode && (old == filemode.Regular || old == filemode.Executable):
		return old // core.fileMode=false: keep the recorded bit
	case st.exec:
		return filemode.Executable
	}
	return filemode.Regular
}

// statMatches is git's ie_match_stat: equal size, mtime, ctime and inode mean
// unchanged, unless the file was written no earlier than the index itself
// ("racy git"), when only its content can tell.
func (s *stager) statMatches(e *index.Entry, st fileStat) bool {
	if e.Size != uint32(st.size) || !e.ModifiedAt.Equal(st.mtime) {
		return false
	}
	if !e.CreatedAt.IsZero() && !st.ctime.IsZero() && !e.CreatedAt.Equal(st.ctime) {
		return false
	}
	if e.Size == 0 && e.Hash != emptyBlob {
		return false // smudged as racily clean when written (see encodeIndex)
	}
	if e.Inode != 0 && st.ino != 0 && e.Inode != st.ino {
		return false
	}
	if s.racy.IsZero() || !e.ModifiedAt.Before(s.racy) {
		return false
	}
	return true
}

func setStat(e *index.Entry, st fileStat) {
	e.Size = uint32(st.size)
	e.ModifiedAt, e.CreatedAt = st.mtime, st.ctime
	e.Dev, e.Inode, e.UID, e.GID = st.dev, st.ino, st.uid, st.gid
}

// hashFile hashes (and with s.write stores) the blob for a file or symlink;
// ok is false if it disappeared meanwhile.
func (s *stager) hashFile(abs string, st fileStat) (h plumbing.Hash, ok bool, err error) {
	var content []byte
	if st.kind == kindSymlink {
		var target string
		target, err = os.Readlink(abs)
		content = []byte(target)
	} else {
		content, err = os.ReadFile(abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("read %s: %w", abs, err)
	}
	h, err = s.r.putObject(plumbing.BlobObject, content, s.write)
	return h, err == nil, err
}

// entryFromWorktree builds a fresh stage-0 entry for name; nil if the path is
// not a file or symlink. With core.fileMode=false a new file is 100644, as in
// git.
func (s *stager) entryFromWorktree(name string) (*index.Entry, error) {
	abs := s.abs(name)
	st, err := lstat(abs)
	if err != nil {
		return nil, err
	}
	if st.kind != kindRegular && st.kind != kindSymlink {
		return nil, nil
	}
	h, ok, err := s.hashFile(abs, st)
	if err != nil || !ok {
		return nil, err
	}
	e := &index.Entry{Name: name, Hash: h, Mode: s.modeOf(st, filemode.Regular)}
	setStat(e, st)
	return e, nil
}

// nestedHead returns the commit a nested repository's HEAD points to; false
// when it has none (fresh `git init`) or cannot be read.
func (s *stager) nestedHead(abs string) (plumbing.Hash, bool) {
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return plumbing.ZeroHash, false
	}
	ref, err := repo.Head()
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

// addUntracked walks the worktree for files git would add: it never enters
// .git, .debussy, ignored directories or nested repositories, so a large
// ignored node_modules costs one pattern match, not a walk.
func (s *stager) addUntracked(excludes []gitignore.Pattern) error {
	tracked := make(map[string]struct{}, len(s.entries))
	for _, e := range s.entries {
		tracked[e.Name] = struct{}{}
	}
	var added []*index.Entry
	if err := s.walkDir("", nil, excludes, tracked, &added); err != nil {
		return err
	}
	if len(added) == 0 {
		return nil
	}
	s.entries = append(s.entries, added...)
	slices.SortFunc(s.entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

func (s *stager) walkDir(rel string, comps []string, patterns []gitignore.Pattern, tracked map[string]struct{}, added *[]*index.Entry) error {
	absDir := s.abs(rel)
	ents, err := os.ReadDir(absDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		// git warns about an unreadable directory and carries on.
		s.r.log.Warn("skip unreadable directory", "dir", absDir, "err", err)
		return nil
	}

	if rel != "" && hasDotGit(ents) {
		return s.addNested(rel, absDir, added)
	}

	for _, de := range ents {
		if de.Name() == ".gitignore" && !de.IsDir() {
			b, err := os.ReadFile(filepath.Join(absDir, ".gitignore"))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.r.log.Warn("skip unreadable .gitignore", "dir", absDir, "err", err)
			}
			if ps := parsePatterns(b, comps); len(ps) > 0 {
				patterns = append(patterns[:len(patterns):len(patterns)], ps...)
			}
			break
		}
	}
	m := gitignore.NewMatcher(patterns)

	for _, de := range ents {
		name := de.Name()
		if name == ".git" {
			continue
		}
		path := name
		if rel != "" {
			path = rel + "/" + name
		}
		typ := de.Type()
		switch {
		case typ.IsDir():
			if name == stateDir {
				continue
			}
			if _, ok := tracked[path]; ok { // a gitlink: refreshTracked handled it
				continue
			}
			child := append(comps[:len(comps):len(comps)], name)
			if m.Match(child, true) {
				continue
			}
			if err := s.walkDir(path, child, patterns, tracked, added); err != nil {
				return err
			}
		case typ.IsRegular() || typ&fs.ModeSymlink != 0:
			if _, ok := tracked[path]; ok {
				continue
			}
			if m.Match(append(comps[:len(comps):len(comps)], name), false) {
				continue
			}
			e, err := s.entryFromWorktree(path)
			if err != nil {
				return err
			}
			if e != nil {
				*added = append(*added, e)
				s.added = append(s.added, path)
			}
		}
	}
	return nil
}

func hasDotGit(ents []os.DirEntry) bool {
	for _, de := range ents {
		if de.Name() == ".git" {
			return true
		}
	}
	return false
}

// addNested does what `git add -A` does with an untracked nested repository:
// a gitlink to its HEAD commit, never its files. git refuses the whole add
// when the nested repository has no commit yet; a checkpoint must not fail
// for that, so it is skipped with a warning instead.
func (s *stager) addNested(rel, abs string, added *[]*index.Entry) error {
	h, ok := s.nestedHead(abs)
	if !ok {
		s.r.log.Warn("skip nested git repository without commits; its files are not committed", "path", rel)
		return nil
	}
	s.r.log.Warn("nested git repository committed as a gitlink, not its files", "path", rel, "commit", h.String())
	*added = append(*added, &index.Entry{Name: rel, Hash: h, Mode: filemode.Submodule})
	s.added = append(s.added, rel)
	return nil
}
