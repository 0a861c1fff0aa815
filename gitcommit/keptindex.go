package gitcommit

import (
	"bytes"
	"fmt"
	"os"
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
	index  indexBytes // as git add -A left it (its mtime for git's racy-entry rule)
	hidden []string
	set    pathSet // hidden's paths
}

// startsFrom says k is where a commit on h hiding hidden may start: the
// index (index, as read) is the one the commit left, or one with the same
// entries (an agent's `git status` rewrites the file with fresher stat
// data, nothing else; k's older stat data only make git look at a few
// files again).
func (r *Repo) startsFrom(k keptIndex, h head, hidden []string, index []byte) bool {
	if k.commit == "" || k.commit != h.hash.String() || !slices.Equal(k.hidden, hidden) {
		return false
	}
	return r.indexIsHead(h) || sameEntries(index, k.index.data, k.set)
}

// sameEntries says the index file b holds kept's entries less the
// placeholders (skip): the same names, modes, objects and flags, in the
// same order (stat data aside).
func sameEntries(b, kept []byte, skip pathSet) bool {
	v, n, err := indexHeader(b)
	kv, kn, kerr := indexHeader(kept)
	if err != nil || kerr != nil || v != kv || n+len(skip) != kn {
		return false
	}
	body, keptBody := b[:len(b)-20], kept[:len(kept)-20]
	off, koff := 12, 12
	var prev, kprev, fixed, name []byte
	for range kn {
		var kfixed, kname []byte
		if kfixed, kname, koff, err = nextEntry(keptBody, koff, kv, kprev); err != nil {
			return false
		}
		kprev = kname
		// A placeholder is a gitlink: no other entry is looked up (one
		// that is not is compared, and differs).
		if isGitlink(kfixed) && skip[string(kname)] {
			continue
		}
		if n == 0 {
			return false
		}
		if fixed, name, off, err = nextEntry(body, off, v, prev); err != nil {
			return false
		}
		prev, n = name, n-1
		// The mode, the object id and the flags (extended ones too): all
		// but the stat data.
		if !bytes.Equal(name, kname) || !bytes.Equal(fixed[24:28], kfixed[24:28]) || !bytes.Equal(fixed[40:], kfixed[40:]) {
			return false
		}
	}
	return n == 0
}

// seedKept writes k into the lock file, dated as git wrote it.
func (l *lockFile) seedKept(k keptIndex) error {
	_ = l.f.Close()
	if err := os.WriteFile(l.lockPath(), k.index.data, 0o666); err != nil {
		return fmt.Errorf("write %s: %w", l.lockPath(), err)
	}
	return os.Chtimes(l.lockPath(), k.index.mtime, k.index.mtime)
}
