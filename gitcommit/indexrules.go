package gitcommit

import (
	"math"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A tracked .gitignore or .gitattributes marked skip-worktree and absent
// from disk (what a non-cone sparse checkout leaves) is read from the
// index, as git's dir.c (read_skip_worktree_file_from_index) and attr.c
// (read_attr_from_index) read it: without this, the files it ignores were
// committed and its eol rules skipped.

// noteRuleFiles keeps the skip-worktree .gitignore and .gitattributes
// entries of the index just read.
func (r *Repo) noteRuleFiles(entries []*index.Entry) {
	r.ruleBlobs = nil
	for _, e := range entries {
		if !e.SkipWorktree || e.Stage != 0 {
			continue
		}
		if b := path.Base(e.Name); b == ".gitignore" || b == ".gitattributes" {
			if r.ruleBlobs == nil {
				r.ruleBlobs = map[string]plumbing.Hash{}
			}
			r.ruleBlobs[e.Name] = e.Hash
		}
	}
}

// ruleFileFromIndex is the content of rel (a .gitignore or .gitattributes
// missing from the worktree) when the index holds it skip-worktree.
func (r *Repo) ruleFileFromIndex(rel string) ([]byte, bool) {
	h, ok := r.ruleBlobs[rel]
	if !ok {
		return nil, false
	}
	b, _, err := r.readBlob(h, math.MaxInt64)
	if err != nil {
		r.log.Warn("read skip-worktree rules from the index", "file", rel, "err", err)
		return nil, false
	}
	return b, true
}

// markAssumeUnchanged is core.ignoreStat: git's add_to_index marks every
// entry it writes (a new file, a changed one) assume-unchanged, so that
// later commands trust it without a stat.
func (s *stager) markAssumeUnchanged() {
	if s.r.assumeValid == nil {
		s.r.assumeValid = map[string]bool{}
	}
	for _, p := range s.unstaged {
		s.r.assumeValid[p] = true
	}
	for _, p := range s.added {
		s.r.assumeValid[p] = true
	}
}
