package gitcommit

import (
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Fingerprints maps untracked paths to a fingerprint of their content: the
// blob hash `git add` would store (after clean filters and eol conversion),
// a nested repository's HEAD commit, or "" for a nested repository without
// a commit.
type Fingerprints map[string]string

// CommitOption adjusts one CommitAll.
type CommitOption func(*commitOptions)

type commitOptions struct {
	exclude    Fingerprints
	never      pathSet // Never
	note       func(msg string, changed []string) string
	allowEmpty bool
	// entries, when set, is the index to commit as it is (Merge): no
	// staging pass, so no untracked file can join the merge.
	entries []*index.Entry
	// written sees the commit's hash before the branch moves (Written).
	written func(hash string) error
}

func withEntries(es []*index.Entry) CommitOption {
	return func(o *commitOptions) { o.entries = es }
}

// Exclude leaves out of the commit every untracked path of files whose
// content still matches its fingerprint: files that were the user's when a
// run started (see Untracked). A path whose content changed is committed
// like any other new file and reported in Commit.Changed; when note is not
// nil, the message becomes note(msg, changed) so the commit can say so.
// Tracked paths are never affected.
func Exclude(files Fingerprints, note func(msg string, changed []string) string) CommitOption {
	return func(o *commitOptions) { o.exclude, o.note = files, note }
}

// Untracked lists what `git add -A` would add now, with each path's
// fingerprint: the untracked paths that no ignore rule covers. It writes
// no object and no index. Unlike CommitAll it lists, rather than refuses, a
// nested repository without a commit and a path git reserves: they are
// the user's, and excluding them lets the run commit around them.
func (r *Repo) Untracked() (Fingerprints, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	defer end()
	idx, err := r.readIndex()
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	cfg, err := r.readConfig()
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	excludes, err := r.excludePatterns(cfg)
	if err != nil {
		return nil, fmt.Errorf("list untracked files: read ignore rules: %w", err)
	}
	s := r.newStager(idx, cfg, false)
	s.orig = idx.Entries
	s.listing = Fingerprints{}
	s.conv.deferEncoding = r.verdictWillRun() // as CommitAll will
	err = s.addUntracked(excludes)
	s.conv.close()
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	return s.listing, nil
}

// keepOut decides an untracked path CommitAll's walk found: true leaves it
// out (unchanged since its fingerprint was taken); a changed one is noted
// in s.changed and staged. In Untracked's listing mode it records the path
// and always returns true. h is the path's fingerprint, computed by hash
// (without storing anything) only when needed.
func (s *stager) keepOut(path string, hash func() (string, bool, error)) (bool, error) {
	if s.never[path] && s.listing == nil {
		return true, nil
	}
	want, ok := s.exclude[path]
	if !ok && s.listing == nil {
		return false, nil
	}
	write := s.write
	s.write = false // a user's secret must not even become a loose object
	h, present, err := hash()
	s.write = write
	if err != nil || !present {
		return true, err // gone meanwhile: nothing to stage either way
	}
	if s.listing != nil {
		s.listing[path] = h
		return true, nil
	}
	if h == want {
		return true, nil
	}
	s.changed = append(s.changed, path)
	return false, nil
}

// fileFingerprint hashes an untracked file or symlink as CommitAll would
// stage it.
func (s *stager) fileFingerprint(path string) func() (string, bool, error) {
	return func() (string, bool, error) {
		n := len(s.deferred)
		e, err := s.entryFromWorktree(path, plumbing.ZeroHash)
		if err == nil && e == nil && len(s.deferred) > n {
			// Left to git (working-tree-encoding): the fingerprint only
			// tells a change, so the bytes as they are will do.
			s.deferred = s.deferred[:n]
			b, rerr := os.ReadFile(s.abs(path))
			if rerr != nil {
				return "", false, nil
			}
			return "raw:" + objectHash(plumbing.BlobObject, b).String(), true, nil
		}
		if err != nil || e == nil {
			return "", false, err
		}
		return e.Hash.String(), true, nil
	}
}

// nestedFingerprint is a nested repository's HEAD, or "" without a commit.
func (s *stager) nestedFingerprint(path string) func() (string, bool, error) {
	return func() (string, bool, error) {
		h, ok := s.nestedHead(s.abs(path))
		if !ok {
			return "", true, nil
		}
		return h.String(), true, nil
	}
}
