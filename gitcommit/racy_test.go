package gitcommit

import "testing"

// Stat data vouch for what was read with them only where the file was
// written well before the reading (git's racy-entry rule): the kept
// fingerprints, directory listings and ignore answer all ask vouches. On
// a file system with nanosecond timestamps a rewrite always shows in the
// stat data, so the rule is pinned here, where coarse timestamps are
// what it guards against.
func TestRacyStatDataDoNotVouch(t *testing.T) {
	const at = int64(1_000_000_000_000)
	for _, tc := range []struct {
		name  string
		st    fpStat
		vouch bool
	}{
		{"written well before", fpStat{size: 3, mtime: at - 2*racyMargin, ctime: at - 2*racyMargin}, true},
		{"written in the margin", fpStat{size: 3, mtime: at - racyMargin/2, ctime: at - 2*racyMargin}, false},
		{"inode changed in the margin", fpStat{size: 3, mtime: at - 2*racyMargin, ctime: at - racyMargin/2}, false},
		{"written as it was read", fpStat{size: 3, mtime: at, ctime: at}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Repo{fps: fingerprintCache{"a": {stat: tc.st, fp: "x", at: at}}}
			if _, ok := r.cached("a", tc.st); ok != tc.vouch {
				t.Errorf("fingerprint kept: %v, want %v", ok, tc.vouch)
			}
			if ok := (dirListing{stat: tc.st, at: at}).holds(tc.st); ok != tc.vouch {
				t.Errorf("listing kept: %v, want %v", ok, tc.vouch)
			}
			untracked := []string{"build"}
			m := ignoredMemo{untracked: untracked, stats: []fpStat{tc.st}, at: at, names: []string{"src"}}
			if ok := m.holds(untracked, []fpStat{tc.st}); ok != tc.vouch {
				t.Errorf("ignore answer kept: %v, want %v", ok, tc.vouch)
			}
		})
	}
}
