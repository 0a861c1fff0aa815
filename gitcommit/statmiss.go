package gitcommit

import (
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// git compares stat data in whole seconds (it is built without USE_NSEC by
// default): a same-size edit whose mtime was put back, inside the second
// of the entry's ctime, looks clean to `git add -A` and is not staged.
// debussy compares nanoseconds and commits the edit. Its verdict then
// keeps debussy's entry: git did not look at the file, and nothing the
// agent wrote is lost. This is the one documented difference from git.

// gitMissesEdit says git's entry g for a path is the index's entry as it
// was (orig) only because git's stat check passed over the file, while
// debussy read new content (m).
func (r *Repo) gitMissesEdit(name string, m, g, orig *index.Entry, origValid bool, indexSec int64, trustCtime bool) bool {
	if m == nil || g == nil || orig == nil || m.Stage != 0 || g.Stage != 0 || orig.Stage != 0 {
		return false
	}
	if origValid || orig.SkipWorktree || orig.IntentToAdd || g.SkipWorktree || g.IntentToAdd {
		return false // git keeps these entries by design; a difference there is debussy's
	}
	if g.Hash != orig.Hash || g.Mode != orig.Mode || m.Hash == orig.Hash || m.Mode != orig.Mode {
		return false
	}
	st, err := lstat(r.root + "/" + name)
	if err != nil || st.kind != kindRegular && st.kind != kindSymlink {
		return false
	}
	switch {
	case uint32(st.size) != orig.Size || st.mtime.Unix() != orig.ModifiedAt.Unix():
		return false
	case trustCtime && st.ctime.Unix() != orig.CreatedAt.Unix():
		return false
	case orig.Inode != 0 && st.ino != orig.Inode:
		return false
	case orig.ModifiedAt.Unix() >= indexSec:
		return false // racily clean: git would have read it
	}
	return true
}
