package gitcommit

import (
	"bytes"
	"encoding/binary"
	"path"
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

// treesAgreeing is the cache tree for entries, taken from the index file
// from: from's node for every directory whose entries below it are from's
// too (the same names, stages, modes, objects and flags), the others
// invalid. git keeps a node valid only while the entries below it are
// exactly its tree, and trusts it to write commits, so a node is as true
// here as it was there. ok is false where from has no cache tree or is an
// index this code does not read (a go-git-written index has none).
func treesAgreeing(from []byte, entries []rawEntry) (_ []byte, ok bool) {
	theirs, root, ok := indexCacheTree(from, true)
	if !ok {
		return nil, false
	}
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
			// Everything but the stat data: the mode, the object id and
			// the flags (the stage, intent-to-add among them).
			if !bytes.Equal(entries[i].fixed[24:28], theirs[j].fixed[24:28]) || !bytes.Equal(entries[i].fixed[40:], theirs[j].fixed[40:]) {
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

// indexCacheTree reads the index file b's cache tree, and its entries
// where collect is set; ok is false where there is none or b is not read
// here — with collect, a split or sparse index too, whose entries in b are
// not all of its entries.
func indexCacheTree(b []byte, collect bool) (entries []rawEntry, root *cacheTree, ok bool) {
	version, n, err := indexHeader(b)
	if err != nil {
		return nil, nil, false
	}
	body := b[:len(b)-20]
	if collect {
		entries = make([]rawEntry, 0, n)
	}
	off, prev := 12, []byte(nil)
	for range n {
		var fixed []byte
		if fixed, prev, off, err = nextEntry(body, off, version, prev); err != nil {
			return nil, nil, false
		}
		if collect {
			entries = append(entries, rawEntry{fixed: fixed, name: prev})
		}
	}
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if off+8+size > len(body) || collect && (sig == "link" || sig == "sdir") {
			return nil, nil, false
		}
		if sig == "TREE" {
			var rest []byte
			if root, rest, err = readCacheTree(body[off+8 : off+8+size]); err != nil || len(rest) != 0 {
				return nil, nil, false
			}
		}
		off += 8 + size
	}
	return entries, root, root != nil
}
