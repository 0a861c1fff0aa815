package gitcommit

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitInfo is one commit as `git show --name-status --no-renames` tells
// it: its subject, trailers and the paths it changed against its first
// parent (all paths for a root commit).
type CommitInfo struct {
	Hash     string
	Subject  string
	When     time.Time // committer date
	Trailers []Trailer
	Changes  []Change
}

// Trailer returns the value of the first trailer named key (compared as
// git does, ignoring case), or "".
func (c CommitInfo) Trailer(key string) string {
	for _, t := range c.Trailers {
		if strings.EqualFold(t.Key, key) {
			return t.Value
		}
	}
	return ""
}

// ReadCommit reads the commit hash (a full or abbreviated hash, or any
// revision git accepts): what a report lists as a session's work.
func (r *Repo) ReadCommit(hash string) (CommitInfo, error) {
	end, err := r.begin()
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit: %w", err)
	}
	defer end()
	h, err := r.repo.ResolveRevision(plumbing.Revision(hash))
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s: %w", Short(hash), err)
	}
	c, err := r.repo.CommitObject(*h)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s: %w", Short(hash), err)
	}
	var from plumbing.Hash
	if len(c.ParentHashes) > 0 {
		p, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return CommitInfo{}, fmt.Errorf("read commit %s: parent: %w", Short(hash), err)
		}
		from = p.TreeHash
	}
	changes, err := r.diffTrees(from, c.TreeHash)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("read commit %s: %w", Short(hash), err)
	}
	return CommitInfo{Hash: c.Hash.String(), Subject: subjectOf(c.Message), When: c.Committer.When,
		Trailers: ParseTrailers(c.Message), Changes: changes}, nil
}
