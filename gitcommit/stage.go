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
	symlinks bool      // core.symlinks: false keeps a symlink entry checked out as a plain file
	racy     time.Time // mtime of the index as read: entries at or after it are re-read

	ignoreCase  bool // core.ignoreCase
	protectNTFS bool // core.protectNTFS (default on, as in git)
	protectHFS  bool // core.protectHFS (default on macOS only)

	orig     []*index.Entry // the index as read, for the walk's "is it tracked" questions
	entries  []*index.Entry
	unstaged []string     // tracked paths whose worktree content differs from the index
	added    []string     // untracked paths staged by the walk
	exclude  Fingerprints // untracked paths to leave out while unchanged (exclude.go)
	changed  []string     // paths of exclude staged because their content changed
	listing  Fingerprints // Untracked: collects instead of staging
	refresh  bool         // only stat data changed; the index is worth rewriting
	dirOK    map[string]bool

	conv *converter // clean filters, eol, ident (convert.go); close after staging
}

func (r *Repo) newStager(idx *index.Index, cfg gitConfig, write bool) *stager {
	return &stager{
		r:        r,
		write:    write,
		fileMode: cfg.bool("core.fileMode", true),
		symlinks: cfg.bool("core.symlinks", true),
		racy:     idx.ModTime,

		ignoreCase:  cfg.bool("core.ignoreCase", false),
		protectNTFS: cfg.bool("core.protectNTFS", true),
		protectHFS:  cfg.bool("core.protectHFS", runtime.GOOS == "darwin"),
		dirOK:       map[string]bool{"": true},
		conv:        r.newConverter(cfg),
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
	s.orig = slices.Clone(entries)
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
			ne, err := s.entryFromWorktree(e.Name, oursBlob(group))
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

	if s.r.assumeValid[e.Name] {
		// assume-unchanged: git keeps the entry and its flag whatever the
		// file holds now, even when it is gone (run_diff_files skips
		// CE_VALID entries before it looks for removed ones).
		return true, nil
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
	h, ok, err := s.hashFile(e.Name, st, e.Hash)
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
	// A file or symlink where the gitlink was: staged here, since the walk
	// passes over a path the index holds.
	s.unstaged = append(s.unstaged, e.Name)
	ne, err := s.entryFromWorktree(e.Name, plumbing.ZeroHash)
	if err != nil || ne == nil {
		return false, err
	}
	*e = *ne
	return true, nil
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
	// git's ce_mode_from_stat.
	switch {
	case st.kind == kindSymlink:
		return filemode.Symlink
	case !s.symlinks && old == filemode.Symlink:
		return old // core.symlinks=false: the checkout wrote the link as a file
	case !s.fileMode && (old == filemode.Regular || old == filemode.Executable):
		return old // core.fileMode=false: keep the recorded bit
	case !s.fileMode:
		return filemode.Regular // ... and a file new to the index is 100644
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
// ok is false if it disappeared meanwhile. cur is the blob the index holds
// for name now (zero if none): eol conversion depends on it. A file's content
// goes through s.conv (filters, eol, ident) as in `git add`; keep that when
// streaming (convert.go needs the whole content only where a conversion
// applies to the path).
func (s *stager) hashFile(name string, st fileStat, cur plumbing.Hash) (h plumbing.Hash, ok bool, err error) {
	abs := s.abs(name)
	if st.kind == kindRegular && st.size > streamThreshold {
		if converts, err := s.convertsContent(name); err != nil {
			return plumbing.ZeroHash, false, err
		} else if !converts {
			return s.streamFile(abs)
		}
	}
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
	if st.kind != kindSymlink {
		if content, err = s.conv.toGit(name, content, cur, s.write); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	h, err = s.r.putObject(plumbing.BlobObject, content, s.write)
	return h, err == nil, err
}

// convertsContent reports whether a clean filter, eol or ident conversion
// may apply to name, so its content must pass through memory.
func (s *stager) convertsContent(name string) (bool, error) {
	if s.conv == nil {
		return false, nil
	}
	if s.conv.autocrlf != "false" {
		return true, nil
	}
	none, err := s.conv.attrs.none(name)
	return !none, err
}

// streamFile is hashFile for a large file stored as it is; a file rewritten
// while it is read is read again, a few times.
func (s *stager) streamFile(abs string) (h plumbing.Hash, ok bool, err error) {
	for range 3 {
		h, err = s.r.streamBlob(abs, s.write)
		if !errors.Is(err, errChangedWhileRead) {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("read %s: %w", abs, err)
	}
	return h, true, nil
}

// entryFromWorktree builds a fresh stage-0 entry for name; nil if the path is
// not a file or symlink. With core.fileMode=false a new file is 100644, as in
// git.
func (s *stager) entryFromWorktree(name string, cur plumbing.Hash) (*index.Entry, error) {
	abs := s.abs(name)
	st, err := lstat(abs)
	if err != nil {
		return nil, err
	}
	if st.kind != kindRegular && st.kind != kindSymlink {
		return nil, nil
	}
	h, ok, err := s.hashFile(name, st, cur)
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

// addUntracked walks the worktree for files git would add, following git's
// dir.c (treat_one_path, treat_directory): it never enters .git, .debussy or
// ignored directories, so a large ignored node_modules costs one pattern
// match, not a walk. A directory that holds tracked files is walked even when
// it holds a nested repository (git does, and adds its new files as files: a
// gitlink there too would give the tree two entries of the same name, which
// fsck rejects as duplicateEntries). Any other directory with a valid .git
// is a nested repository and becomes a gitlink to its HEAD.
func (s *stager) addUntracked(excludes ignoreList) error {
	w := &walker{
		s:        s,
		inIndex:  make(map[string]filemode.FileMode, len(s.orig)),
		indexDir: map[string]bool{},
	}
	for _, e := range s.orig {
		w.inIndex[e.Name] = e.Mode
		for dir, _ := splitDir(e.Name); dir != "" && !w.indexDir[dir]; dir, _ = splitDir(dir) {
			w.indexDir[dir] = true
		}
	}
	if err := w.walkDir("", excludes); err != nil {
		return err
	}
	if len(w.invalid) > 0 {
		return &InvalidPathError{Paths: w.invalid}
	}
	if len(w.added) == 0 {
		return nil
	}
	s.entries = append(s.entries, w.added...)
	slices.SortFunc(s.entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// InvalidPathError lists paths `git add -A` would refuse to stage (a ".git"
// component in any case, ".git." and other names NTFS or HFS+ read as
// ".git", a symlinked ".gitmodules"). git refuses the whole add; so does
// CommitAll, leaving the work in the worktree.
type InvalidPathError struct{ Paths []string }

func (e *InvalidPathError) Error() string {
	const show = 5
	ps := e.Paths
	more := ""
	if len(ps) > show {
		more = fmt.Sprintf(" and %d more", len(ps)-show)
		ps = ps[:show]
	}
	return fmt.Sprintf("git would refuse to add %s%s (invalid path: a name git reserves); rename, remove or ignore it",
		strings.Join(ps, ", "), more)
}

// NestedRepoError is an untracked nested repository without a commit:
// `git add -A` fails on it ("does not have a commit checked out"), and so
// does CommitAll, instead of leaving its files out silently.
type NestedRepoError struct{ Path string }

func (e *NestedRepoError) Error() string {
	return fmt.Sprintf("%s/ is a nested git repository without a commit, which git add -A refuses too; "+
		"commit in it, add it to .gitignore, or remove its .git", e.Path)
}

type walker struct {
	s        *stager
	inIndex  map[string]filemode.FileMode // paths in the index as read
	indexDir map[string]bool              // directories with index entries below them
	added    []*index.Entry
	invalid  []string
}

func (w *walker) walkDir(rel string, patterns ignoreList) error {
	s := w.s
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
	base := ""
	if rel != "" {
		base = rel + "/"
	}
	if ps := s.r.readDirIgnore(absDir, base); len(ps) > 0 {
		patterns = append(patterns[:len(patterns):len(patterns)], ps...)
	}

	for _, de := range ents {
		name := de.Name()
		if name == ".git" || (s.ignoreCase && strings.EqualFold(name, ".git")) {
			continue
		}
		path := base + name
		typ := de.Type()
		isDir := typ.IsDir()
		if _, tracked := w.inIndex[path]; tracked && !isDir {
			continue // refreshTracked handled it
		}
		if !isDir && !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			continue // sockets, fifos, devices: git cannot track them
		}
		if isDir && name == stateDir {
			continue
		}
		if patterns.excluded(path, isDir, s.ignoreCase) {
			continue
		}
		if !isDir {
			if err := w.addFile(path, typ&fs.ModeSymlink != 0); err != nil {
				return err
			}
			continue
		}
		switch {
		case w.inIndex[path] == filemode.Submodule:
			continue // a gitlink: refreshTracked handled it
		case w.indexDir[path]:
		case isNonBareRepo(s.abs(path)):
			if err := w.addNested(path); err != nil {
				return err
			}
			continue
		}
		if err := w.walkDir(path, patterns); err != nil {
			return err
		}
	}
	return nil
}

func (w *walker) addFile(path string, symlink bool) error {
	s := w.s
	if out, err := s.keepOut(path, s.fileFingerprint(path)); out || err != nil {
		return err
	}
	if !verifyPath(path, symlink, s.protectNTFS, s.protectHFS) {
		w.invalid = append(w.invalid, path)
		return nil
	}
	e, err := s.entryFromWorktree(path, plumbing.ZeroHash)
	if err != nil || e == nil {
		return err
	}
	w.added = append(w.added, e)
	s.added = append(s.added, path)
	return nil
}

// addNested does what `git add -A` does with an untracked nested repository:
// a gitlink to its HEAD commit, never its files.
func (w *walker) addNested(rel string) error {
	if out, err := w.s.keepOut(rel, w.s.nestedFingerprint(rel)); out || err != nil {
		return err
	}
	h, ok := w.s.nestedHead(w.s.abs(rel))
	if !ok {
		return &NestedRepoError{Path: rel}
	}
	w.s.r.log.Info("nested git repository committed as a gitlink, not its files", "path", rel, "commit", h.String())
	w.added = append(w.added, &index.Entry{Name: rel, Hash: h, Mode: filemode.Submodule})
	w.s.added = append(w.s.added, rel)
	return nil
}

// isNonBareRepo is git's is_nonbare_repository_dir: dir/.git is a git
// directory, or a "gitdir:" file pointing at one, or a file git cannot read.
// An empty .git directory or a .git file of other text is not: git walks
// into such a directory and adds its files.
func isNonBareRepo(dir string) bool {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Stat(dotgit)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return isGitDirectory(dotgit)
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return true // git counts an unreadable .git file as a repository
	}
	target, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return false
	}
	target = strings.TrimRight(target, "\r\n\t ")
	if target == "" {
		return false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return isGitDirectory(target)
}

// isGitDirectory is git's is_git_directory: a valid HEAD, and objects/ and
// refs/ in the common directory.
func isGitDirectory(dir string) bool {
	if !validHeadRef(filepath.Join(dir, "HEAD")) {
		return false
	}
	common, err := readCommonDir(dir)
	if err != nil {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// validHeadRef is git's validate_headref: a symlink into refs/, "ref:
// refs/...", or a full object id.
func validHeadRef(path string) bool {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		return err == nil && strings.HasPrefix(target, "refs/")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	s := string(b)
	if rest, ok := strings.CutPrefix(s, "ref:"); ok {
		return strings.HasPrefix(strings.TrimLeft(rest, " \t\n\r"), "refs/")
	}
	s = strings.TrimRight(s, "\n")
	if len(s) < 40 {
		return false
	}
	for _, c := range s[:40] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
