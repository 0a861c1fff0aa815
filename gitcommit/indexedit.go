package gitcommit

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// editIndex adds placeholder entries to, or takes entries out of, the
// private index file in one linear pass: git's update-index inserts and
// removes one entry at a time, each shifting the rest of the index, which
// made 20,000 of the user's files cost seconds a commit. The entries keep
// their bytes (stat data, flags); the cache tree is invalidated along the
// paths touched; the extensions that index entries by position or cache
// the worktree (untracked cache, fsmonitor, offset tables) are dropped,
// as git drops them when it cannot keep them. An index this code does not
// know how to edit (a split or sparse index, a required extension it does
// not know) is errIndexUnsupported: the caller has git do it.
var errIndexUnsupported = errors.New("index format not edited in place")

// A placeholder (named by its path) is a gitlink whatever path holds:
// git's walk does not enter a directory the index has as a gitlink, and
// preloading the index (git add's parallel lstat of every entry) skips
// gitlinks, where it stats an assume-unchanged file entry all the same —
// 10,000 of the user's files beside tracked ones cost git add -A about 6 ms
// more a commit as file entries (measured with git 2.39).

// rawEntry is one index entry: its fixed fields (stat data through the
// flags, and the extended flags in version 3 and up) and its name.
type rawEntry struct {
	fixed []byte
	name  []byte
}

func isGitlink(fixed []byte) bool { return binary.BigEndian.Uint32(fixed[24:28]) == 0o160000 }

func (e rawEntry) stage() uint16 { return binary.BigEndian.Uint16(e.fixed[60:62]) >> 12 & 3 }

// indexHeader reads an index file's version and entry count, refusing
// what this code does not read (see editIndex).
func indexHeader(b []byte) (version uint32, n int, err error) {
	if len(b) < 32 || string(b[:4]) != "DIRC" {
		return 0, 0, errIndexUnsupported
	}
	version = binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return 0, 0, errIndexUnsupported
	}
	return version, int(binary.BigEndian.Uint32(b[8:12])), nil
}

// nextEntry reads the index entry at off: its fixed fields, its name
// (prev is the entry before's: version 4 compresses a name against it)
// and where the next entry starts.
func nextEntry(body []byte, off int, version uint32, prev []byte) (fixed, name []byte, next int, err error) {
	start := off
	if off+62 > len(body) {
		return nil, nil, 0, errIndexUnsupported
	}
	fixedLen := 62
	if binary.BigEndian.Uint16(body[off+60:off+62])&0x4000 != 0 {
		if version < 3 {
			return nil, nil, 0, errIndexUnsupported
		}
		fixedLen = 64
	}
	off += fixedLen
	if version == 4 {
		strip, k := binary.Uvarint(body[off:])
		if k <= 0 || int(strip) > len(prev) {
			return nil, nil, 0, errIndexUnsupported
		}
		off += k
		end := bytes.IndexByte(body[off:], 0)
		if end < 0 {
			return nil, nil, 0, errIndexUnsupported
		}
		name = append(slices.Clip(prev[:len(prev)-int(strip)]), body[off:off+end]...)
		return body[start : start+fixedLen], name, off + end + 1, nil
	}
	end := bytes.IndexByte(body[off:], 0)
	if end < 0 {
		return nil, nil, 0, errIndexUnsupported
	}
	return body[start : start+fixedLen], body[off : off+end], start + (fixedLen+end+8)&^7, nil
}

// cachedTree is the tree the index's cache tree (its TREE extension)
// says its entries are: git keeps the root valid only while the stage-0
// entries are exactly that tree (any change to an entry invalidates the
// path to it, and an intent-to-add or unmerged entry keeps the root
// invalid), and trusts it to write commits. ok is false where the root is
// invalid, there is none, or p was not read.
func (p parsedIndex) cachedTree() (tree plumbing.Hash, ok bool) {
	root, err := p.cacheTree()
	if err != nil || root == nil || root.entries < 0 || len(root.oid) != len(tree) {
		return plumbing.ZeroHash, false
	}
	copy(tree[:], root.oid)
	return tree, true
}

// isTree says p is tree (cachedTree), never for a zero tree.
func (p parsedIndex) isTree(tree plumbing.Hash) bool {
	got, ok := p.cachedTree()
	return ok && !tree.IsZero() && got == tree
}

// parsedIndex is an index file read: its version (0: not read), its
// entries in order (version 4's names whole again; the bytes are the
// file's) and its extensions.
type parsedIndex struct {
	version uint32
	entries []rawEntry
	exts    []indexExt
}

// indexExt is an extension of an index file: its signature and data.
type indexExt struct {
	sig  string
	data []byte
}

// parseIndex reads the index file b (see errIndexUnsupported).
func parseIndex(b []byte) (parsedIndex, error) {
	version, n, err := indexHeader(b)
	if err != nil {
		return parsedIndex{}, err
	}
	body := b[:len(b)-20]
	p := parsedIndex{version: version, entries: make([]rawEntry, 0, n)}
	off, prev := 12, []byte(nil)
	for range n {
		var fixed []byte
		if fixed, prev, off, err = nextEntry(body, off, version, prev); err != nil {
			return parsedIndex{}, err
		}
		p.entries = append(p.entries, rawEntry{fixed: fixed, name: prev})
	}
	for off+8 <= len(body) {
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		if off+8+size > len(body) {
			return parsedIndex{}, errIndexUnsupported
		}
		p.exts = append(p.exts, indexExt{sig: string(body[off : off+4]), data: body[off+8 : off+8+size]})
		off += 8 + size
	}
	if off != len(body) {
		return parsedIndex{}, errIndexUnsupported
	}
	return p, nil
}

// indexBytes is an index file as read: its bytes, its mtime (git's
// racy-entry rule holds against it) and what they say.
type indexBytes struct {
	data  []byte
	mtime time.Time
	parsedIndex
	// split: data are git's split form, the entries made whole from them
	// and a shared index since gone (resolve): written anew, never as is.
	split bool
}

// loadIndex reads and parses the index file at path. A format not read
// here is errIndexUnsupported, with the bytes read.
func loadIndex(path string) (indexBytes, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return indexBytes{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return indexBytes{}, err
	}
	p, err := parseIndex(b)
	return indexBytes{data: b, mtime: fi.ModTime(), parsedIndex: p}, err
}

// zeros pad a version 2 or 3 entry to its multiple of 8 (1 to 8 bytes).
var zeros [8]byte

// editBuffers keeps the buffers edit writes an index in: one a commit,
// the index's size (megabytes with the user's files), which zeroing anew
// each time cost about a tenth of the pass.
var editBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// editIndex adds placeholders to, and takes entries out of, the index file
// at path (see errIndexUnsupported).
func editIndex(path string, add []string, remove map[string]bool) error {
	src, err := loadIndex(path)
	if err != nil {
		return err
	}
	return src.edit(path, add, remove, parsedIndex{})
}

// edit writes src, edited, to path.
func (src indexBytes) edit(path string, add []string, remove map[string]bool, treesFrom parsedIndex) error {
	p, err := src.edited(add, remove, treesFrom)
	if err != nil {
		return err
	}
	out := editBuffers.Get().(*bytes.Buffer)
	defer editBuffers.Put(out)
	out.Reset()
	out.Grow(len(src.data) + len(add)*80)
	if err := p.encode(out); err != nil {
		return err
	}
	return overwrite(path, out.Bytes())
}

// edited is src with placeholders for add and without the entries remove
// names. Its cache tree is treesFrom's where that index agrees
// (treesAgreeing: the index a commit started from), else src's
// invalidated along the paths touched; of the other extensions, those
// keptExts keeps.
func (src indexBytes) edited(add []string, remove map[string]bool, treesFrom parsedIndex) (parsedIndex, error) {
	entries, found := src.without(remove, false)
	if found != len(remove) {
		entries, _ = src.without(remove, true)
	}
	// git's racy-entry rule holds against the index file's mtime, which
	// this rewrite moves: an entry as new as the file is smudged (size 0)
	// so git looks at its content again, as git does when it writes. "As
	// new" is to the second: a git built without USE_NSEC (Debian's 2.39)
	// compares seconds only, so an entry a few milliseconds older than
	// the file but in the same second is racy to it — left unsmudged, and
	// the rewrite moved into the next second, a same-size edit made in
	// that second was never seen (a commit missed it under load).
	racy := src.mtime.Unix()
	for i, e := range entries {
		if int64(binary.BigEndian.Uint32(e.fixed[8:12])) >= racy {
			entries[i].fixed = slices.Clone(e.fixed)
			binary.BigEndian.PutUint32(entries[i].fixed[36:40], 0)
		}
	}
	// TREE is invalidated where entries change.
	tree, reuc, err := src.keptExts()
	if err != nil {
		return parsedIndex{}, err
	}
	if len(add) > 0 {
		adds := make([]rawEntry, 0, len(add))
		for _, p := range add {
			adds = append(adds, placeholderEntry(p))
		}
		slices.SortFunc(adds, compareEntries)
		entries = mergeEntries(entries, adds)
		if entries == nil {
			return parsedIndex{}, errIndexUnsupported // a placeholder named like an entry
		}
	}
	if agreed, ok := treesAgreeing(treesFrom, entries); ok {
		tree = agreed
	} else if tree != nil {
		touched := slices.Concat(add, slices.Collect(maps.Keys(remove)))
		var err error
		if tree, err = invalidateCacheTree(tree, touched); err != nil {
			return parsedIndex{}, errIndexUnsupported
		}
	}
	p := parsedIndex{version: src.version, entries: entries}
	if tree != nil {
		p.exts = append(p.exts, indexExt{sig: "TREE", data: tree})
	}
	if reuc != nil {
		p.exts = append(p.exts, indexExt{sig: "REUC", data: reuc})
	}
	return p, nil
}

// encode writes p as an index file into out, with the extensions
// keptExts keeps.
func (p parsedIndex) encode(out *bytes.Buffer) error {
	tree, reuc, err := p.keptExts()
	if err != nil {
		return err
	}
	var exts bytes.Buffer
	writeKeptExts(&exts, tree, reuc)
	encodeIndex(out, p.version, p.entries, exts.Bytes())
	return nil
}

// encodeIndex writes an index file into out: version, entries, the
// extensions exts (encoded) and the checksum.
func encodeIndex(out *bytes.Buffer, version uint32, entries []rawEntry, exts []byte) {
	out.WriteString("DIRC")
	_ = binary.Write(out, binary.BigEndian, version)
	_ = binary.Write(out, binary.BigEndian, uint32(len(entries)))
	var prev []byte
	for _, e := range entries {
		start := out.Len()
		out.Write(e.fixed)
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(e.name) && prev[common] == e.name[common] {
				common++
			}
			out.Write(binary.AppendUvarint(nil, uint64(len(prev)-common)))
			out.Write(e.name[common:])
			out.WriteByte(0)
		} else {
			out.Write(e.name)
			pad := (len(e.fixed)+len(e.name)+8)&^7 - (out.Len() - start)
			out.Write(zeros[:pad])
		}
		prev = e.name
	}
	out.Write(exts)
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
}

// keptExts are the extensions an index rewritten by debussy keeps: its
// cache tree and resolve-undo data; the position- and worktree-bound ones
// (untracked cache, fsmonitor, offset tables) are dropped, as git drops
// them when it cannot keep them. Any other (link of a split index, sdir of
// a sparse one, one not known) is errIndexUnsupported.
func (p parsedIndex) keptExts() (tree, reuc []byte, err error) {
	for _, x := range p.exts {
		switch x.sig {
		case "TREE":
			tree = x.data
		case "REUC":
			reuc = x.data
		case "UNTR", "FSMN", "EOIE", "IEOT":
		default:
			return nil, nil, errIndexUnsupported
		}
	}
	return tree, reuc, nil
}

// without is src's entries less those remove names, and how many it took
// out. A placeholder is a gitlink: unless every entry is looked up, only
// gitlinks and unmerged entries are (edit looks again at every entry
// where that did not find every path: one may be some other entry).
func (src indexBytes) without(remove map[string]bool, every bool) (_ []rawEntry, found int) {
	out := make([]rawEntry, 0, len(src.entries))
	for _, e := range src.entries {
		if (every || isGitlink(e.fixed) || e.stage() != 0) && remove[string(e.name)] {
			found++
			continue
		}
		out = append(out, e)
	}
	return out, found
}

// overwrite writes b over the file at path, in place, and cuts it to b's
// length. The index edited is the private one in the lock file, which no
// one else reads meanwhile; writing over its pages saves freeing and
// zeroing megabytes of them a commit (with 20,000 placeholders, about 2 ms
// of the pass on tmpfs).
func overwrite(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// placeholderEntry is an assume-unchanged gitlink for p: no stat data,
// never written to a tree (taken out first).
func placeholderEntry(p string) rawEntry {
	fixed := make([]byte, 62)
	binary.BigEndian.PutUint32(fixed[24:28], 0o160000)
	oid := plumbing.NewHash(emptyBlob)
	copy(fixed[40:60], oid[:])
	binary.BigEndian.PutUint16(fixed[60:62], 0x8000|uint16(min(len(p), 0xfff)))
	return rawEntry{fixed: fixed, name: []byte(p)}
}

// compareEntries is git's index order: the name's bytes, then the stage.
func compareEntries(a, b rawEntry) int {
	if c := bytes.Compare(a.name, b.name); c != 0 {
		return c
	}
	return int(a.stage()) - int(b.stage())
}

// mergeEntries merges two sorted lists; nil when a name is in both, or
// one is a directory of the other (git's update-index would replace).
func mergeEntries(a, b []rawEntry) []rawEntry {
	has := func(name []byte) bool {
		_, found := slices.BinarySearchFunc(a, name, func(e rawEntry, n []byte) int { return bytes.Compare(e.name, n) })
		return found
	}
	for _, e := range b {
		if has(e.name) {
			return nil
		}
		for i := bytes.LastIndexByte(e.name, '/'); i > 0; i = bytes.LastIndexByte(e.name[:i], '/') {
			if has(e.name[:i]) {
				return nil // a file where the placeholder needs a directory
			}
		}
		dir := append(slices.Clip(e.name), '/')
		k, _ := slices.BinarySearchFunc(a, dir, func(e rawEntry, n []byte) int { return bytes.Compare(e.name, n) })
		if k < len(a) && bytes.HasPrefix(a[k].name, dir) {
			return nil // entries below where the placeholder is a file
		}
	}
	return mergeSorted(a, b)
}

// mergeSorted merges two lists of entries in git's index order.
func mergeSorted(a, b []rawEntry) []rawEntry {
	out := make([]rawEntry, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || i < len(a) && compareEntries(a[i], b[j]) < 0 {
			out = append(out, a[i])
			i++
			continue
		}
		out = append(out, b[j])
		j++
	}
	return out
}

// writeKeptExts writes the extensions keptExts keeps.
func writeKeptExts(w *bytes.Buffer, tree, reuc []byte) {
	if tree != nil {
		writeExt(w, "TREE", tree)
	}
	if reuc != nil {
		writeExt(w, "REUC", reuc)
	}
}

func writeExt(w *bytes.Buffer, sig string, data []byte) {
	w.WriteString(sig)
	_ = binary.Write(w, binary.BigEndian, uint32(len(data)))
	w.Write(data)
}
