package gitcommit

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// git add -A writes back every entry of the index it read: with the
// user's files as placeholders, a third of what they cost it (git 2.39,
// 20,000 placeholders in a 20,000-file tree: 75 ms for git add against 63
// with none). So the private index goes to git add in git's split form:
// its entries in a shared index file of their own ($GIT_DIR/
// sharedindex.<its checksum>, as git names them) and the index file only a
// link to it, and git add writes back only the entries it changed (61 ms,
// the same as with none). The removal pass reads git's answer through the
// link (resolveSplit) and writes the whole index, as git commit and the
// user's git read it; the shared files go once it has. Only where the
// user's own git does not split (core.splitIndex unset, their index not
// split), so that no shared index of theirs is ever touched.

// emptyEWAH is an empty EWAH bitmap as git writes one: no bits, one
// empty run-length word, which is the last.
var emptyEWAH = []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// splitInto writes p (entries and extensions) at path in git's split
// form, dated mtime (git's racy-entry rule holds against it): the entries
// to a shared index in gitDir, whose path it returns, and at path an index
// of no entries of its own with the link to them, the cache tree and the
// resolve-undo data.
func splitInto(gitDir, path string, p parsedIndex, mtime time.Time) (string, error) {
	if p.version != 2 && p.version != 3 {
		return "", errIndexUnsupported
	}
	tree, reuc, err := p.keptExts()
	if err != nil {
		return "", err
	}
	out := editBuffers.Get().(*bytes.Buffer)
	defer editBuffers.Put(out)
	out.Reset()
	encodeIndex(out, p.version, p.entries, nil)
	sum := out.Bytes()[out.Len()-20:]
	shared := filepath.Join(gitDir, "sharedindex."+hex.EncodeToString(sum))
	if err := os.WriteFile(shared, out.Bytes(), 0o666); err != nil {
		return "", fmt.Errorf("write %s: %w", shared, err)
	}
	var exts bytes.Buffer
	writeExt(&exts, "link", bytes.Join([][]byte{sum, emptyEWAH, emptyEWAH}, nil))
	writeKeptExts(&exts, tree, reuc)
	out.Reset()
	encodeIndex(out, p.version, nil, exts.Bytes())
	err = os.WriteFile(path, out.Bytes(), 0o666)
	if err == nil {
		err = errors.Join(os.Chtimes(path, mtime, mtime), os.Chtimes(shared, mtime, mtime))
	}
	if err != nil {
		_ = os.Remove(shared)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return shared, nil
}

// resolveSplit is p whole where it is git's split form: the shared
// index's entries (in gitDir) less those the delete bitmap marks, with
// those the replace bitmap marks replaced by p's first entries in order
// (named as the shared entry where p's is stripped of its name), and p's
// other entries added. shared is the shared index's path ("" where p is
// not split); known are the entries of shared indexes by path, read
// from the file where it is not among them.
func resolveSplit(gitDir string, p parsedIndex, known map[string][]rawEntry) (whole parsedIndex, shared string, err error) {
	var link []byte
	var exts []indexExt
	for _, x := range p.exts {
		if x.sig == "link" {
			link = x.data
			continue
		}
		exts = append(exts, x)
	}
	if link == nil {
		return p, "", nil
	}
	if len(link) < 20 {
		return parsedIndex{}, "", errIndexUnsupported
	}
	shared = filepath.Join(gitDir, "sharedindex."+hex.EncodeToString(link[:20]))
	del, rest, err := readEWAH(link[20:])
	if err != nil {
		return parsedIndex{}, shared, err
	}
	repl, rest, err := readEWAH(rest)
	if err != nil || len(rest) != 0 {
		return parsedIndex{}, shared, errIndexUnsupported
	}
	baseEntries, ok := known[shared]
	if !ok {
		b, err := os.ReadFile(shared)
		if err != nil {
			return parsedIndex{}, shared, errIndexUnsupported
		}
		base, err := parseIndex(b)
		if err != nil || base.isSplit() {
			return parsedIndex{}, shared, errIndexUnsupported
		}
		baseEntries = base.entries
	}
	entries := make([]rawEntry, 0, len(baseEntries)+len(p.entries))
	next := 0 // p's next replacing entry
	for i, e := range baseEntries {
		switch {
		case bitSet(del, i):
		case bitSet(repl, i):
			if next == len(p.entries) {
				return parsedIndex{}, shared, errIndexUnsupported
			}
			r := p.entries[next]
			next++
			if len(r.name) == 0 { // stripped: the name is the shared entry's
				r.fixed = bytes.Clone(r.fixed)
				flags := binary.BigEndian.Uint16(r.fixed[60:62])&^0xfff | uint16(min(len(e.name), 0xfff))
				binary.BigEndian.PutUint16(r.fixed[60:62], flags)
				r.name = e.name
			}
			entries = append(entries, r)
		default:
			entries = append(entries, e)
		}
	}
	return parsedIndex{version: p.version, entries: mergeSorted(entries, p.entries[next:]), exts: exts}, shared, nil
}

// readEWAH decodes one of git's EWAH bitmaps (ewah/ewah_io.c): its size
// in bits, its 64-bit words (run-length words, each followed by its
// literal words: bit 0 the running bit, bits 1–32 the run's length in
// words, bits 33–63 how many literal words follow), and the position of
// the last run-length word. It returns the bitmap's words, least
// significant bit first, and what follows it.
func readEWAH(b []byte) (words []uint64, rest []byte, err error) {
	if len(b) < 8 {
		return nil, nil, errIndexUnsupported
	}
	n := int(binary.BigEndian.Uint32(b[4:8]))
	if n < 0 || len(b) < 8+8*n+4 {
		return nil, nil, errIndexUnsupported
	}
	raw := b[8 : 8+8*n]
	for i := 0; i < n; {
		rlw := binary.BigEndian.Uint64(raw[8*i:])
		i++
		run, lits := (rlw>>1)&0xffffffff, int(rlw>>33)
		if run > 1<<26 || i+lits > n { // no index has 2^32 entries
			return nil, nil, errIndexUnsupported
		}
		fill := uint64(0)
		if rlw&1 != 0 {
			fill = ^uint64(0)
		}
		for range run {
			words = append(words, fill)
		}
		for range lits {
			words = append(words, binary.BigEndian.Uint64(raw[8*i:]))
			i++
		}
	}
	return words, b[8+8*n+4:], nil
}

// bitSet says bit i of the bitmap words is set.
func bitSet(words []uint64, i int) bool {
	return i/64 < len(words) && words[i/64]&(1<<(i%64)) != 0
}

// sharedFiles are the shared indexes a staging wrote or git wrote for
// it, removed when it is done. None can be the user's: they hold the
// placeholders, which no index of the user's does, and the user's own git
// does not split (gitAdd.split). The entries of those debussy wrote are
// kept (wrote), so that reading git's answer does not read them again.
type sharedFiles struct {
	paths []string
	wrote map[string][]rawEntry
}

func (s *sharedFiles) add(p string, entries []rawEntry) {
	if p == "" {
		return
	}
	if !slices.Contains(s.paths, p) {
		s.paths = append(s.paths, p)
	}
	if entries != nil {
		if s.wrote == nil {
			s.wrote = map[string][]rawEntry{}
		}
		s.wrote[p] = entries
	}
}

func (s *sharedFiles) remove() {
	for _, p := range s.paths {
		_ = os.Remove(p)
	}
}

// isSplit says p is in git's split form (it has a link extension).
func (p parsedIndex) isSplit() bool {
	return slices.ContainsFunc(p.exts, func(x indexExt) bool { return x.sig == "link" })
}

// resolve makes b's entries whole where b is split (resolveSplit), noting
// its shared index in shared.
func (b *indexBytes) resolve(gitDir string, shared *sharedFiles) error {
	whole, path, err := resolveSplit(gitDir, b.parsedIndex, shared.wrote)
	shared.add(path, nil)
	if err == nil && path != "" {
		b.parsedIndex, b.split = whole, true
	}
	return err
}

// placeSplit adds placeholders for ps to the private index in the lock
// and writes it in git's split form, in one pass: the edited entries go
// to the shared index as they are, never written whole first. Where the
// index cannot be edited here, git adds them (addToIndex) and the index
// stays whole; where the split form cannot hold it (version 4), it is
// written whole.
func (r *Repo) placeSplit(ctx context.Context, lock *lockFile, ps []string, shared *sharedFiles) error {
	src, err := loadIndex(lock.lockPath())
	var p parsedIndex
	if err == nil {
		p, err = src.edited(ps, nil, parsedIndex{})
	}
	if errors.Is(err, errIndexUnsupported) {
		return r.addToIndex(ctx, lock.lockPath(), ps)
	}
	if err != nil {
		return err
	}
	path, err := splitInto(r.gitDir, lock.lockPath(), p, src.mtime)
	shared.add(path, p.entries)
	if !errors.Is(err, errIndexUnsupported) {
		return err
	}
	var out bytes.Buffer
	if err := p.encode(&out); err != nil {
		return err
	}
	return overwrite(lock.lockPath(), out.Bytes())
}

// seedKept writes the kept staged index into the lock: split where split
// says so, whole where its bytes are a split form whose shared index is
// gone, as it is otherwise.
func (r *Repo) seedKept(lock *lockFile, split bool, shared *sharedFiles) error {
	k := r.kept.index
	if split {
		path, err := splitInto(r.gitDir, lock.lockPath(), k.parsedIndex, k.mtime)
		shared.add(path, k.entries)
		if !errors.Is(err, errIndexUnsupported) {
			return err
		}
	}
	if !k.split {
		return lock.seedWith(k)
	}
	var out bytes.Buffer
	if err := k.encode(&out); err != nil {
		return err
	}
	return lock.seedWith(indexBytes{data: out.Bytes(), mtime: k.mtime})
}
