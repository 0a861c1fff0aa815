package gitcommit

import (
	"bytes"
	"slices"
)

// The private index a commit staged, with its placeholders still in, is
// kept in memory for the next commit: where HEAD is still that commit, the
// index still holds its entries (startsFrom) and the placeholders are the
// same, it is the next commit's start as it is — HEAD's tree with the same
// paths hidden — and the pass that puts placeholders into the index (a
// read and a rewrite of the whole index, about half of what 10,000 of the
// user's files beside tracked ones cost a commit) is not needed. It is kept only
// where the index git commit left is known to be that index less the
// placeholders: no hook of the user's ran (any may stage), nothing was
// put back or taken out after staging, and the index's format is one
// editIndex reads (not a split or sparse index, whose bytes name other
// files).
type keptIndex struct {
	commit string     // the commit made from it ("": nothing kept)
	index  indexBytes // as git add -A left it, parsed (its mtime for git's racy-entry rule)
	hidden []string
	set    pathSet // hidden's paths, kept with them: 20,000 cost about 1.5 ms a commit to build
}

// startsFrom says k is where a commit on h hiding hidden may start: the
// index (index, as read) is the one the commit left, or one with the same
// entries (an agent's `git status` rewrites the file with fresher stat
// data, nothing else; k's older stat data only make git look at a few
// files again).
func (r *Repo) startsFrom(k keptIndex, h head, hidden []string, index parsedIndex) bool {
	if k.commit == "" || k.commit != h.hash.String() || !slices.Equal(k.hidden, hidden) {
		return false
	}
	return r.indexIsHead(h) || sameEntries(index, k.index.parsedIndex, k.set)
}

// sameEntries says the index b holds kept's entries less the placeholders
// (skip): the same names, in the same order, the same but for their stat
// data (sameButStat).
func sameEntries(b, kept parsedIndex, skip pathSet) bool {
	if b.version == 0 || b.version != kept.version || len(b.entries)+len(skip) != len(kept.entries) {
		return false
	}
	i := 0
	for _, k := range kept.entries {
		// A placeholder is a gitlink: no other entry is looked up (one
		// that is not is compared, and differs).
		if isGitlink(k.fixed) && skip[string(k.name)] {
			continue
		}
		if i == len(b.entries) || !bytes.Equal(b.entries[i].name, k.name) || !sameButStat(b.entries[i], k) {
			return false
		}
		i++
	}
	return i == len(b.entries)
}
