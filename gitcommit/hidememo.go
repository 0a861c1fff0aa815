package gitcommit

import (
	"hash/maphash"
	"os"
	"path"
	"path/filepath"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
)

// What a commit hides from git add -A (candidates, placeholders) rests on
// a few facts only: whether some paths are in HEAD's tree, and what some
// directories list. A run's commits ask the same questions (the user's
// files are the same all run), and the answers change only where a commit
// adds or removes one of those paths, or where a directory's stat data
// move — so an answer is kept with the facts it read and reused while they
// hold. Working them out again cost about 17 ms a commit with 20,000 user
// files (issue 55), more than the commit itself is allowed to grow.

// hideFacts are the facts an answer read (recorded by inTree and listing
// while r.facts is set).
type hideFacts struct {
	present map[string]bool  // path → the tree has it (a file or a directory)
	listed  map[string]int64 // directory → its listing's time (0: not a directory, -1: unreadable)
}

// hideMemo is one kept answer: for the tree and the inputs (key) it was
// worked out for.
type hideMemo[T any] struct {
	set   bool
	tree  plumbing.Hash
	key   uint64
	facts hideFacts
	val   T
}

// memoized returns m's answer if it was worked out for the same inputs
// and its facts still hold in tree; otherwise compute's, kept in m. The
// answer is shared: callers must not change it.
func memoized[T any](r *Repo, m *hideMemo[T], tree plumbing.Hash, key uint64, compute func() (T, error)) (T, error) {
	if m.set && m.key == key && r.factsHold(&m.facts, m.tree, tree) {
		m.tree = tree
		return m.val, nil
	}
	m.set = false
	f := &hideFacts{present: map[string]bool{}, listed: map[string]int64{}}
	r.facts = f
	v, err := compute()
	r.facts = nil
	if err != nil {
		return v, err
	}
	*m = hideMemo[T]{set: true, tree: tree, key: key, facts: *f, val: v}
	return v, nil
}

// factsHold says every fact in f, read in tree from, is still true in tree
// to and on disk: a path's presence changes only where the diff between
// the trees touches it or a path below it, and a directory's listing is
// kept only while its stat data vouch for it (listing's racy rule).
func (r *Repo) factsHold(f *hideFacts, from, to plumbing.Hash) bool {
	if from != to {
		changes, err := r.diffTrees(from, to)
		if err != nil {
			return false
		}
		var touched []string // asked about, and the diff touches it or below it
		for _, c := range changes {
			for q := c.Path; q != "." && q != "/"; q = path.Dir(q) {
				if _, asked := f.present[q]; asked {
					touched = append(touched, q)
				}
			}
		}
		now, err := r.inTree(to, touched)
		if err != nil {
			return false
		}
		for _, q := range touched {
			if now[q] != f.present[q] {
				return false
			}
		}
	}
	for dir, at := range f.listed {
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(dir)))
		if at == 0 {
			if err == nil && fi.IsDir() {
				return false
			}
			continue
		}
		if err != nil || !fi.IsDir() {
			return false
		}
		c, ok := r.dirs[dir]
		if !ok || c.at != at || !c.holds(statOf(fi)) {
			return false
		}
	}
	return true
}

// pathsKey is an order-free digest of sets of paths (a role per set, so
// the same path in two roles differs).
type pathsKey struct {
	sum uint64
	n   uint64
}

var keySeed = maphash.MakeSeed()

func (k *pathsKey) add(role uint64, p string) {
	k.sum += maphash.String(keySeed, p) * (2*role + 1)
	k.n++
}

func (k *pathsKey) value() uint64 { return k.sum ^ k.n*0x9e3779b97f4a7c15 }

// sameList says a and b are the same list, not only equal ones: a kept
// (memoized) answer, never changed in place, is known by its identity
// without comparing its paths.
func sameList(a, b []string) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
