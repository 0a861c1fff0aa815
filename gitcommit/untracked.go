package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Untracked files: the walk git add -A makes, what it refuses, and where a nested repository begins.

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
	if s.ignoreCase {
		w.inIndexFold = make(map[string]bool, len(s.orig))
	}
	for _, e := range s.orig {
		w.inIndex[e.Name] = e.Mode
		if w.inIndexFold != nil {
			w.inIndexFold[foldASCII(e.Name)] = true
		}
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
	if len(w.fsckBad) > 0 {
		return &FsckPathError{Paths: w.fsckBad, Problem: fsckPathProblem(w.fsckBad[0], w.fsckSymlink)}
	}
	if len(w.added) == 0 {
		return nil
	}
	s.entries = append(s.entries, w.added...)
	sortEntries(s.entries)
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
	// inIndexFold holds the index's paths ASCII-lower-cased, with core.ignoreCase only
	inIndexFold map[string]bool
	fsckBad     []string // paths verifyPath lets in and fsck rejects (fsckpath.go)
	// fsckSymlink: fsckBad[0] is a symlink
	fsckSymlink bool
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
		if w.inIndexFold != nil && !isDir && w.inIndexFold[foldASCII(path)] {
			// core.ignoreCase: git's index_file_exists matches the name
			// case-insensitively, so "README.md" is the tracked "Readme.md"
			// and is not added a second time (on macOS both would be one file).
			continue
		}
		if !isDir && !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			continue // sockets, fifos, devices: git cannot track them
		}
		if isDir && name == stateDir {
			continue
		}
		if patterns.excluded(path, isDir, s.ignoreCase) {
			s.ignored = append(s.ignored, path)
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
	if !s.inSparse(path) {
		s.outsideSparse = append(s.outsideSparse, path)
		return nil
	}
	if !verifyPath(path, symlink, s.protectNTFS, s.protectHFS) {
		w.invalid = append(w.invalid, path)
		return nil
	}
	if fsckPathProblem(path, symlink) != "" {
		if len(w.fsckBad) == 0 {
			w.fsckSymlink = symlink
		}
		w.fsckBad = append(w.fsckBad, path)
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
	if !w.s.inSparse(rel) {
		w.s.outsideSparse = append(w.s.outsideSparse, rel)
		return nil
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

// foldASCII lower-cases ASCII letters only, as git's case-insensitive name hash does.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = wmToLower(c)
	}
	return string(b)
}
