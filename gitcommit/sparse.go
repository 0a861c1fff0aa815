package gitcommit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A sparse checkout (core.sparseCheckout) as `git add -A` treats it: a new
// path outside the sparse-checkout definition makes it exit 1 after
// staging the rest, so `git add -A && git commit` commits nothing; a
// tracked file outside it that was edited or deleted (no skip-worktree bit)
// is left as the index has it. debussy committed all of them.

// SparsePathError lists paths outside the sparse-checkout definition that
// `git add -A` refuses to update. Nothing is committed; the work stays.
type SparsePathError struct{ Paths []string }

func (e *SparsePathError) Error() string {
	ps, more := e.Paths, ""
	if len(ps) > 5 {
		ps, more = ps[:5], fmt.Sprintf(" and %d more", len(e.Paths)-5)
	}
	return fmt.Sprintf("git add -A refuses %s%s: outside of your sparse-checkout definition, so not updated in the index; "+
		"widen the definition (git sparse-checkout add), or move or remove them", strings.Join(ps, ", "), more)
}

// sparsePatterns reads info/sparse-checkout of the worktree's git dir when
// core.sparseCheckout is on; nil when off (or the file is missing: git
// then leaves everything in).
func (r *Repo) sparsePatterns(cfg gitConfig) ignoreList {
	if !cfg.bool("core.sparseCheckout", false) {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.gitDir, "info", "sparse-checkout"))
	if err != nil {
		return nil
	}
	return parseIgnoreFile(b, "")
}

// inSparse is git's path_in_sparse_checkout: the last pattern matching the
// path decides, else its parent directory's, up to the root (not in).
func (s *stager) inSparse(path string) bool {
	if s.sparse == nil {
		return true
	}
	isDir := false
	for p := path; p != ""; {
		if in, decided := s.sparse.decide(p, isDir, s.ignoreCase); decided {
			return in
		}
		p, _ = splitDir(p)
		isDir = true
	}
	return false
}

// decide is excluded with "no pattern matches" told apart.
func (l ignoreList) decide(path string, isDir, fold bool) (in, decided bool) {
	basename := path[strings.LastIndexByte(path, '/')+1:]
	for i := len(l) - 1; i >= 0; i-- {
		ip := &l[i]
		if ip.flags&patMustBeDir != 0 && !isDir {
			continue
		}
		var m bool
		if ip.flags&patNoDir != 0 {
			m = ip.matchBasename(basename, fold)
		} else {
			m = ip.matchPathname(path, fold)
		}
		if m {
			return ip.flags&patNegative == 0, true
		}
	}
	return false, false
}
