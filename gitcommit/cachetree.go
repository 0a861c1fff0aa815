package gitcommit

import (
	"bytes"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The cache tree (the index's TREE extension) is git's record of which
// directories' entries are exactly a tree it already wrote: git commit
// hashes again only the directories whose node is invalid. Taking the
// placeholders out of the private index touches every directory that held
// one of the user's files, so beside tracked files git commit hashed some
// 200 trees again a commit that the index it started from already knew
// (about 5 ms with 10,000 user files; issue 55). treesAgreeing gives those
// directories their nodes back from that index where their entries are its
// own.

// cacheTree is a node of the TREE extension.
type cacheTree struct {
	name    string
	entries int // -1: invalid
	oid     []byte
	subs    []*cacheTree
}

// invalidateCacheTree marks invalid every cache-tree node along paths.
func invalidateCacheTree(data []byte, paths []string) ([]byte, error) {
	root, rest, err := readCacheTree(data)
	if err != nil || len(rest) != 0 {
		return nil, errIndexUnsupported
	}
	root.entries, root.oid = -1, nil
	seen := map[string]bool{}
	for _, p := range paths {
		dir := path.Dir(p)
		if seen[dir] || dir == "." {
			continue
		}
		seen[dir] = true
		node := root
		for _, d := range strings.Split(dir, "/") {
			var next *cacheTree
			for _, s := range node.subs {
				if s.name == d {
					next = s
					break
				}
			}
			if next == nil {
				break
			}
			next.entries, next.oid = -1, nil
			node = next
		}
	}
	var out bytes.Buffer
	writeCacheTree(&out, root)
	return out.Bytes(), nil
}

func readCacheTree(b []byte) (*cacheTree, []byte, error) {
	nul := bytes.IndexByte(b, 0)
	if nul < 0 {
		return nil, nil, errIndexUnsupported
	}
	t := &cacheTree{name: string(b[:nul])}
	b = b[nul+1:]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return nil, nil, errIndexUnsupported
	}
	var subs int
	f := strings.Fields(string(b[:nl]))
	if len(f) != 2 {
		return nil, nil, errIndexUnsupported
	}
	var err error
	if t.entries, err = strconv.Atoi(f[0]); err != nil {
		return nil, nil, err
	}
	if subs, err = strconv.Atoi(f[1]); err != nil {
		return nil, nil, err
	}
	b = b[nl+1:]
	if t.entries >= 0 {
		if len(b) < 20 {
			return nil, nil, errIndexUnsupported
		}
		t.oid, b = b[:20], b[20:]
	}
	for range subs {
		s, rest, err := readCacheTree(b)
		if err != nil {
			return nil, nil, err
		}
		t.subs, b = append(t.subs, s), rest
	}
	return t, b, nil
}

func writeCacheTree(w *bytes.Buffer, t *cacheTree) {
	w.WriteString(t.name)
	w.WriteByte(0)
	w.WriteString(strconv.Itoa(t.entries) + " " + strconv.Itoa(len(t.subs)) + "\n")
	if t.entries >= 0 {
		w.Write(t.oid)
	}
	for _, s := range t.subs {
		writeCacheTree(w, s)
	}
}

// treesAgreeing is the cache tree for entries, taken from the index
// from: from's node for every directory whose entries below it are from's
// too (sameButStat), the others invalid. git keeps a node valid only
// while the entries below it are exactly its tree, and trusts it to write
// commits, so a node is as true here as it was there. ok is false where
// from has no cache tree (a go-git-written index has none), was not read,
// or its file does not hold all its entries (a split or sparse index).
func treesAgreeing(from parsedIndex, entries []rawEntry) (_ []byte, ok bool) {
	root, err := from.cacheTree()
	if err != nil || root == nil || from.partial() {
		return nil, false
	}
	theirs := from.entries
	// A directory is dirty where an entry below it is in one index and
	// not the other, or differs.
	dirty := map[string]bool{}
	mark := func(name []byte) {
		for d := path.Dir(string(name)); ; d = path.Dir(d) {
			if d == "." {
				d = ""
			}
			if dirty[d] {
				return
			}
			dirty[d] = true
			if d == "" {
				return
			}
		}
	}
	for i, j := 0, 0; i < len(entries) || j < len(theirs); {
		c := -1 // which comes first in index order: entries[i] (<0) or theirs[j] (>0)
		switch {
		case i == len(entries):
			c = 1
		case j < len(theirs):
			c = compareEntries(entries[i], theirs[j])
		}
		switch {
		case c < 0:
			mark(entries[i].name)
			i++
		case c > 0:
			mark(theirs[j].name)
			j++
		default:
			if !sameButStat(entries[i], theirs[j]) {
				mark(entries[i].name)
			}
			i++
			j++
		}
	}
	var keep func(t *cacheTree, p string)
	keep = func(t *cacheTree, p string) {
		if dirty[p] {
			t.entries, t.oid = -1, nil
		}
		for _, s := range t.subs {
			keep(s, strings.TrimPrefix(p+"/"+s.name, "/"))
		}
	}
	keep(root, "")
	var out bytes.Buffer
	writeCacheTree(&out, root)
	return out.Bytes(), true
}

// sameButStat says a and b, entries of the same name, are the same but
// for their stat data: the mode, the object id and the flags (the stage,
// assume-unchanged, skip-worktree and intent-to-add among them).
func sameButStat(a, b rawEntry) bool {
	return bytes.Equal(a.fixed[24:28], b.fixed[24:28]) && bytes.Equal(a.fixed[40:], b.fixed[40:])
}

// cacheTree is p's cache tree, nil where it has none.
func (p parsedIndex) cacheTree() (*cacheTree, error) {
	for _, x := range p.exts {
		if x.sig == "TREE" {
			root, rest, err := readCacheTree(x.data)
			if err == nil && len(rest) != 0 {
				err = errIndexUnsupported
			}
			return root, err
		}
	}
	return nil, nil
}

// partial says p's file does not hold all its entries: a split index
// (link) or a sparse one (sdir).
func (p parsedIndex) partial() bool {
	return slices.ContainsFunc(p.exts, func(x indexExt) bool { return x.sig == "link" || x.sig == "sdir" })
}
