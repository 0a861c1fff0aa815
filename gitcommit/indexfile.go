package gitcommit

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// A direct codec for index versions 2, 3 and 4. go-git's codec reads and
// writes every field through reflection and costs more than the rest of a
// commit on a 20,000-file tree, and it has no place for the assume-unchanged
// flag: through it a version 4 index lost the flag, and the next commit
// took the edited file git keeps out.

const (
	indexHeaderLen   = 12
	entryFixedLen    = 62     // stat fields, hash and flags, before the name
	flagAssumeValid  = 0x8000 // CE_VALID: `git update-index --assume-unchanged`
	flagExtended     = 0x4000
	flagNameMask     = 0x0fff
	extIntentToAdd   = 0x2000
	extSkipWorktree  = 0x4000
	indexChecksumLen = sha1.Size
)

var errIndexFormat = errors.New("malformed index")

// decodeIndex parses b (a whole index file); ok is false for a version this
// codec leaves to go-git. assumeValid names the entries marked
// assume-unchanged, a flag go-git's Entry cannot hold.
func decodeIndex(b []byte) (idx *index.Index, assumeValid map[string]bool, ok bool, err error) {
	if len(b) < indexHeaderLen+indexChecksumLen || string(b[:4]) != "DIRC" {
		return nil, nil, true, fmt.Errorf("%w: bad header", errIndexFormat)
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return nil, nil, false, nil
	}
	body, sum := b[:len(b)-indexChecksumLen], b[len(b)-indexChecksumLen:]
	// index.skipHash writes a zero checksum; anything else must match.
	if h := sha1.Sum(body); !bytes.Equal(sum, h[:]) && !bytes.Equal(sum, make([]byte, indexChecksumLen)) {
		return nil, nil, true, fmt.Errorf("%w: checksum mismatch", errIndexFormat)
	}
	n := int(binary.BigEndian.Uint32(b[8:]))
	idx = &index.Index{Version: version, Entries: make([]*index.Entry, 0, n)}
	entries := make([]index.Entry, n)
	off := indexHeaderLen
	var prev string // version 4: names are stored as a change to the previous one
	for i := range n {
		if off+entryFixedLen > len(body) {
			return nil, nil, true, fmt.Errorf("%w: truncated entry %d", errIndexFormat, i)
		}
		p := body[off:]
		e := &entries[i]
		e.CreatedAt = unixTime(p[0:], p[4:])
		e.ModifiedAt = unixTime(p[8:], p[12:])
		e.Dev = binary.BigEndian.Uint32(p[16:])
		e.Inode = binary.BigEndian.Uint32(p[20:])
		e.Mode = filemode.FileMode(binary.BigEndian.Uint32(p[24:]))
		e.UID = binary.BigEndian.Uint32(p[28:])
		e.GID = binary.BigEndian.Uint32(p[32:])
		e.Size = binary.BigEndian.Uint32(p[36:])
		copy(e.Hash[:], p[40:60])
		flags := binary.BigEndian.Uint16(p[60:])
		e.Stage = index.Stage(flags>>12) & 3
		fixed := entryFixedLen
		if flags&flagExtended != 0 {
			if version < 3 || off+fixed+2 > len(body) {
				return nil, nil, true, fmt.Errorf("%w: bad extended flags in entry %d", errIndexFormat, i)
			}
			ext := binary.BigEndian.Uint16(p[fixed:])
			e.IntentToAdd = ext&extIntentToAdd != 0
			e.SkipWorktree = ext&extSkipWorktree != 0
			fixed += 2
		}
		strip := 0
		if version == 4 {
			v, k := decodeVarint(p[fixed:])
			if k == 0 || v > uint64(len(prev)) {
				return nil, nil, true, fmt.Errorf("%w: bad name prefix in entry %d", errIndexFormat, i)
			}
			strip, fixed = int(v), fixed+k
		}
		nul := bytes.IndexByte(p[fixed:], 0)
		if nul < 0 {
			return nil, nil, true, fmt.Errorf("%w: unterminated name in entry %d", errIndexFormat, i)
		}
		e.Name = string(p[fixed : fixed+nul])
		if version == 4 {
			e.Name = prev[:len(prev)-strip] + e.Name
			prev = e.Name
		}
		if flags&flagAssumeValid != 0 {
			if assumeValid == nil {
				assumeValid = map[string]bool{}
			}
			assumeValid[e.Name] = true
		}
		// Entries are padded with 1-8 NULs to a multiple of 8 bytes, but
		// in version 4 end at their name's NUL.
		if version == 4 {
			off += fixed + nul + 1
		} else {
			off += (fixed + nul + 8) &^ 7
		}
		idx.Entries = append(idx.Entries, e)
	}
	// Extensions: optional ones (upper-case signature, such as the cached
	// tree) are dropped on rewrite, which git tolerates; a required one
	// (split index "link", sparse "sdir") changes what the entries mean.
	for off+8 <= len(body) {
		sig := body[off : off+4]
		size := int(binary.BigEndian.Uint32(body[off+4:]))
		if sig[0] < 'A' || sig[0] > 'Z' {
			return nil, nil, true, requiredExtensionError(string(sig))
		}
		off += 8 + size
	}
	if off > len(body) {
		return nil, nil, true, fmt.Errorf("%w: truncated extension", errIndexFormat)
	}
	return idx, assumeValid, true, nil
}

func unixTime(sec, nsec []byte) time.Time {
	s, ns := binary.BigEndian.Uint32(sec), binary.BigEndian.Uint32(nsec)
	if s == 0 && ns == 0 {
		return time.Time{}
	}
	return time.Unix(int64(s), int64(ns))
}

// encodeIndexEntries writes entries (sorted, stage 0) as a version 2 index, or 3
// when an entry needs extended flags, or 4 (prefix-compressed names) when
// v4 says so; assumeValid entries keep that flag.
func encodeIndexEntries(entries []*index.Entry, assumeValid map[string]bool, v4 bool) []byte {
	version := uint32(2)
	size := indexHeaderLen + indexChecksumLen
	for _, e := range entries {
		fixed := entryFixedLen
		if e.IntentToAdd || e.SkipWorktree {
			version, fixed = 3, fixed+2
		}
		size += (fixed + len(e.Name) + 8) &^ 7
	}
	if v4 {
		version = 4
	}
	var prev string
	b := make([]byte, 0, size)
	b = append(b, "DIRC"...)
	b = binary.BigEndian.AppendUint32(b, version)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		start := len(b)
		b = appendTime(b, e.CreatedAt)
		b = appendTime(b, e.ModifiedAt)
		for _, v := range []uint32{e.Dev, e.Inode, uint32(e.Mode), e.UID, e.GID, e.Size} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		b = append(b, e.Hash[:]...)
		flags := uint16(e.Stage&3) << 12
		flags |= uint16(min(len(e.Name), flagNameMask))
		if assumeValid[e.Name] {
			flags |= flagAssumeValid
		}
		ext := e.IntentToAdd || e.SkipWorktree
		if ext {
			flags |= flagExtended
		}
		b = binary.BigEndian.AppendUint16(b, flags)
		if ext {
			var x uint16
			if e.IntentToAdd {
				x |= extIntentToAdd
			}
			if e.SkipWorktree {
				x |= extSkipWorktree
			}
			b = binary.BigEndian.AppendUint16(b, x)
		}
		if v4 {
			common := 0
			for common < len(prev) && common < len(e.Name) && prev[common] == e.Name[common] {
				common++
			}
			b = appendVarint(b, uint64(len(prev)-common))
			b = append(b, e.Name[common:]...)
			b = append(b, 0)
			prev = e.Name
			continue
		}
		b = append(b, e.Name...)
		pad := 8 - (len(b)-start)%8
		b = append(b, make([]byte, pad)...)
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// decodeVarint reads git's offset varint (varint.c); k is the bytes used,
// 0 if b ends first.
func decodeVarint(b []byte) (v uint64, k int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v, k = uint64(c&127), 1
	for c&128 != 0 {
		if k >= len(b) || k > 9 {
			return 0, 0
		}
		c = b[k]
		k++
		v = ((v + 1) << 7) | uint64(c&127)
	}
	return v, k
}

// appendVarint is git's encode_varint.
func appendVarint(b []byte, v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return append(b, buf[pos:]...)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(t.Unix()))
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

// requiredExtensionError refuses an index extension that changes what the
// entries mean, naming the way back to a plain index.
func requiredExtensionError(sig string) error {
	switch sig {
	case "link":
		return &UnsupportedError{Feature: "split index", Detail: "core.splitIndex or update-index --split-index",
			WayOut: "run `git update-index --no-split-index` (and `git config core.splitIndex false`)"}
	case "sdir":
		return &UnsupportedError{Feature: "sparse index", Detail: "index.sparse",
			WayOut: "run `git sparse-checkout init --no-sparse-index`"}
	}
	return fmt.Errorf("%w: unsupported required extension %q", errIndexFormat, sig)
}
