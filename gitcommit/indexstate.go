package gitcommit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The index debussy's commit leaves is the commit's tree, as git commit
// wrote it. What it was is noted (the index file's stat data and the
// commit), so that the next commit, finding the same index file on the
// same HEAD, need not ask git how the index differs from HEAD: it does
// not. git replaces the index file whenever it writes it (a new inode),
// so any git command that changed it since, the agent's `git add`
// included, is seen.

// indexStateFile is where the note is kept, in the worktree's git dir.
func (r *Repo) indexStateFile() string { return filepath.Join(r.gitDir, "debussy-index-state") }

func (r *Repo) indexStat() (string, bool) {
	fi, err := os.Lstat(r.indexFile)
	if err != nil {
		return "", false
	}
	st := statOf(fi)
	return fmt.Sprintf("%d %d %d %d %d", st.ino, st.size, st.mtime, st.ctime, st.mode), true
}

// noteIndexIsHead notes that the index is HEAD's tree (at commit hash).
func (r *Repo) noteIndexIsHead(hash string) {
	st, ok := r.indexStat()
	if !ok {
		return
	}
	if err := os.WriteFile(r.indexStateFile(), []byte(st+" "+hash+"\n"), 0o666); err != nil {
		r.log.Debug("note the index", "err", err)
	}
}

// forgetIndex drops the note: the index may no longer be HEAD's.
func (r *Repo) forgetIndex() { _ = os.Remove(r.indexStateFile()) }

// indexIsHead says the index file is the one noted, on the noted HEAD.
func (r *Repo) indexIsHead(h head) bool {
	b, err := os.ReadFile(r.indexStateFile())
	if err != nil || h.hash.IsZero() {
		return false
	}
	st, ok := r.indexStat()
	return ok && strings.TrimSpace(string(b)) == st+" "+h.hash.String()
}
