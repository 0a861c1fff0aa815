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
	ignored  []string     // the walk's top-most ignored paths (Commit.Ignored)
	exclude  Fingerprints // untracked paths to leave out while unchanged (exclude.go)
	never    pathSet      // paths HEAD lacks to leave out whatever their content (Never)
	// unstagedNever lists never paths dropped from the index (Commit.Unstaged).
	unstagedNever []string
	changed       []string     // paths of exclude staged because their content changed
	listing       Fingerprints // Untracked: collects instead of staging
	refresh       bool         // only stat data changed; the index is worth rewriting
	dirOK         map[string]bool

	conv *converter // clean filters, eol, ident (convert.go); close after staging
	// deferred are the paths left to git's verdict (errDeferToGit).
	deferred []string
	// sparse is the sparse-checkout definition CommitAll stages under (nil:
	// none); outsideSparse the paths git add -A refuses for it (sparse.go).
	sparse        ignoreList
	outsideSparse []string
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
	sortEntries(entries)
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
		case s.never[e.Name] && s.listing == nil:
			// A copy Never names that the agent staged (git add -f):
			// taken back out of the index, as `git rm --cached` would.
			s.unstaged = append(s.unstaged, e.Name)
			s.unstagedNever = append(s.unstagedNever, e.Name)
			continue
		case len(group) > 1 || e.Stage != 0:
			// Unmerged: `git add -A` resolves the conflict with whatever
			// the worktree holds now.
			s.unstaged = append(s.unstaged, e.Name)
			if st.kind == kindDir && s.parentsAreDirs(e.Name) {
				// A submodule both sides moved (or one replaced with a
				// file) is a repository here: git records its HEAD, where
				// hashing a file found none and deleted the submodule.
				if h, ok := s.nestedHead(s.abs(e.Name)); ok {
					out = append(out, &index.Entry{Name: e.Name, Mode: filemode.Submodule, Hash: h})
					continue
				}
			}
			ne, err := s.entryFromWorktree(e.Name, oursBlob(group))
			if err != nil {
				return err
			}
			if ne != nil {
				out = append(out, ne)
			}
			continue
		}

		if !s.inSparse(e.Name) {
			// Outside the sparse-checkout definition git add -A leaves an
			// edit or a deletion unstaged (sparse.go).
			out = append(out, e)
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
	case kindOther:
		// A FIFO, socket or device where a tracked file was: git add -A
		// fails on it ("can only add regular files, symbolic links or
		// git-directories"); deleting the entry would commit what git won't.
		return false, fmt.Errorf("%s is now a FIFO, socket or device, which git add -A refuses too; remove it, or run `git rm --cached %s`", e.Name, e.Name)
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
	// Racy in git's whole seconds (git is built without USE_NSEC by
	// default): an entry written in the index's second may hide a same-second
	// edit, or a conversion that changed since (.gitattributes), so git
	// re-reads it.
	if s.racy.IsZero() || e.ModifiedAt.Unix() >= s.racy.Unix() {
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
		if conv, ok, err := s.streamConvFor(name, cur); err != nil {
			return plumbing.ZeroHash, false, err
		} else if ok {
			return s.streamFile(abs, conv)
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
		if content, err = s.conv.toGit(name, content, cur, s.write); errors.Is(err, errDeferToGit) {
			// git's verdict stages it: keep the index's entry, add no new one.
			s.deferred = append(s.deferred, name)
			return cur, !cur.IsZero(), nil
		} else if err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	h, err = s.r.putObject(plumbing.BlobObject, content, s.write)
	return h, err == nil, err
}

// streamFile is hashFile for a large file stored as it is or with conv's
// CRLF conversion; a file rewritten while it is read is read again, a few
// times.
func (s *stager) streamFile(abs string, conv *streamConv) (h plumbing.Hash, ok bool, err error) {
	for range 3 {
		h, err = s.r.streamBlob(abs, s.write, conv)
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
