package gitcommit

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// The private index a commit staged, with its placeholders still in, is
// kept in memory for the next commit: where the index is still the one
// that commit left (indexIsHead) and the placeholders are the same, it is
// the next commit's start as it is — HEAD's tree with the same paths
// hidden — and the pass that puts placeholders into the index (a read and
// a rewrite of the whole index, about half of what 10,000 of the user's
// files beside tracked ones cost a commit) is not needed. It is kept only
// where the index git commit left is known to be that index less the
// placeholders: no hook of the user's ran (any may stage), nothing was
// put back or taken out after staging, and the index's format is one
// editIndex reads (not a split or sparse index, whose bytes name other
// files).
type keptIndex struct {
	commit string // the commit made from it ("": nothing kept)
	bytes  []byte
	mtime  time.Time // the file's, for git's racy-entry rule
	hidden []placeholder
}

// snapshot reads the private index at path as git add -A left it.
func snapshot(path string, hidden []placeholder) keptIndex {
	fi, err := os.Stat(path)
	if err != nil {
		return keptIndex{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return keptIndex{}
	}
	return keptIndex{bytes: b, mtime: fi.ModTime(), hidden: hidden}
}

// startsFrom says k is where a commit on h hiding hidden may start.
func (r *Repo) startsFrom(k keptIndex, h head, hidden []placeholder) bool {
	return k.commit != "" && k.commit == h.hash.String() && r.indexIsHead(h) && slices.Equal(k.hidden, hidden)
}

// seedKept writes k into the lock file, dated as git wrote it.
func (l *lockFile) seedKept(k keptIndex) error {
	_ = l.f.Close()
	if err := os.WriteFile(l.lockPath(), k.bytes, 0o666); err != nil {
		return fmt.Errorf("write %s: %w", l.lockPath(), err)
	}
	return os.Chtimes(l.lockPath(), k.mtime, k.mtime)
}
