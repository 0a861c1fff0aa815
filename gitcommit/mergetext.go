package gitcommit

import "bytes"

// The line-level merge of a file both sides changed: debussy's own merge,
// used only where no git that can merge is installed (with git, Merge asks
// `git merge-tree`, see mergegit.go). It stays because debussy commits
// through go-git and runs without a git binary; being conservative, it
// never gives a result git would not — on TestMergeCorpusAgainstGit's 200
// nearby edits it calls about a third of git's clean merges conflicts.
//
// No diff3 library is used: the two the project considered
// (epiclabs-io/diff3, nasdf/diff3) cannot be fetched here, and a library
// diff would not be git's anyway. git aligns lines with Myers (merge-file)
// or histogram (merge), then slides each changed group up or down over
// equal lines; where two alignments tie, which one it picks is an
// implementation detail. So debussy does not try to reproduce the
// alignment. It merges only when every alignment git could choose gives
// the same clean result, and calls everything else a conflict:
//
//   - Each side's change is one region of the base: what is left between
//     the common prefix and the common suffix with the base. git trims
//     exactly that prefix and suffix (xdl_trim_ends) before aligning, so
//     all its change groups start inside the region.
//   - The groups may then slide out of it, but only over a base line equal
//     to a line of the group; a group only ever holds lines of the region
//     (of the base or of that side) and lines it slid over, so the region
//     grown over neighbouring base lines found in that set bounds every
//     place a group can end up.
//   - git merges two sides cleanly when their groups are apart by at least
//     one unchanged base line (a change touching the other's, or two
//     insertions at one point, conflict). If the two grown regions are that
//     far apart, so are git's groups, whatever it chose, and its result is
//     the base with both regions replaced: the bytes built here.
//
// The price is conservatism: a side that changed two places around the
// other side's change is one region that overlaps it, and a conflict
// where git would merge; TestMergeTextFuzz counts how often.

// maxMergeText is the size above which a file is merged whole: the line
// merge holds the three versions in memory (git's own limit is ~1 GiB).
const maxMergeText = 64 << 20

// isBinary is git's test (buffer_is_binary): a NUL in the first 8000 bytes.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// mergeText merges the changes from base to ours and from base to theirs
// line by line. ok is false for a conflict, and for anything git might
// merge differently; the result is then nil. Binary content (git's
// heuristic) is never merged.
func mergeText(base, ours, theirs []byte) (merged []byte, ok bool) {
	// A side whose content did not change (its mode may have) gives way,
	// binary or not, as in git.
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return ours, true
	case bytes.Equal(base, ours):
		return theirs, true
	}
	if isBinary(base) || isBinary(ours) || isBinary(theirs) {
		return nil, false
	}
	if len(base) > maxMergeText || len(ours) > maxMergeText || len(theirs) > maxMergeText {
		return nil, false
	}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	ro, rt := changedRegion(b, o), changedRegion(b, t)
	switch {
	case ro.hi < rt.lo:
	case rt.hi < ro.lo:
		ro, rt = rt, ro
	default:
		return nil, false
	}
	// ro is the earlier region now; rebuild base with both replaced.
	var out bytes.Buffer
	out.Grow(len(ours) + len(theirs) - len(base))
	for _, part := range [][][]byte{b[:ro.start], ro.lines, b[ro.end:rt.start], rt.lines, b[rt.end:]} {
		for _, l := range part {
			out.Write(l)
		}
	}
	return out.Bytes(), true
}

// region is one side's change: base lines [start, end) became lines, and
// every change group git could make of it lies within base lines [lo, hi]
// (an insertion at hi included).
type region struct {
	start, end int
	lines      [][]byte
	lo, hi     int
}

func changedRegion(base, side [][]byte) region {
	n := min(len(base), len(side))
	pre := 0
	for pre < n && bytes.Equal(base[pre], side[pre]) {
		pre++
	}
	// The suffix may not reuse prefix lines, as in xdl_trim_ends.
	suf := 0
	for suf < n-pre && bytes.Equal(base[len(base)-1-suf], side[len(side)-1-suf]) {
		suf++
	}
	r := region{start: pre, end: len(base) - suf, lines: side[pre : len(side)-suf]}
	in := map[string]bool{}
	for _, l := range base[r.start:r.end] {
		in[string(l)] = true
	}
	for _, l := range r.lines {
		in[string(l)] = true
	}
	r.lo, r.hi = r.start, r.end
	for r.lo > 0 && in[string(base[r.lo-1])] {
		r.lo--
	}
	for r.hi < len(base) && in[string(base[r.hi])] {
		r.hi++
	}
	return r
}

// splitLines splits after each '\n'; a last line without one is a line
// of its own, different from the same text with it, as for git.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		out = append(out, b[:i:i])
		b = b[i:]
	}
	return out
}
