package gitcommit

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// objectHash is the git object id of content. crypto/sha1 rather than
// go-git's collision-detecting SHA-1: the bytes are our own worktree's, and
// the hash is the same.
func objectHash(t plumbing.ObjectType, content []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(t.Bytes())
	h.Write([]byte{' '})
	h.Write(strconv.AppendInt(nil, int64(len(content)), 10))
	h.Write([]byte{0})
	h.Write(content)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// putObject hashes content as an object of type t and, with write, stores it
// unless the object store already has it.
func (r *Repo) putObject(t plumbing.ObjectType, content []byte, write bool) (plumbing.Hash, error) {
	h := objectHash(t, content)
	if !write || r.store.HasEncodedObject(h) == nil {
		return h, nil
	}
	obj := r.store.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return h, fmt.Errorf("write %s object: %w", t, err)
	}
	if _, err := w.Write(content); err != nil {
		return h, fmt.Errorf("write %s object: %w", t, err)
	}
	if err := w.Close(); err != nil {
		return h, fmt.Errorf("write %s object: %w", t, err)
	}
	if r.shared != 0 {
		if _, err := r.objectDir(h); err != nil {
			return h, fmt.Errorf("write %s object: %w", t, err)
		}
	}
	if _, err := r.store.SetEncodedObject(obj); err != nil {
		return h, fmt.Errorf("write %s object: %w", t, err)
	}
	return h, nil
}

// builtTree is a tree object computed from the index but not yet stored.
type builtTree struct {
	content []byte
	subdirs map[string]plumbing.Hash
}

// buildTree computes the trees for stage-0 entries sorted by name and
// returns the root's hash, with every tree by hash. Sorted index order is
// git's tree order (a directory sorts as "name/"), so one pass over
// contiguous prefixes builds them all.
func buildTree(entries []*index.Entry) (plumbing.Hash, map[plumbing.Hash]*builtTree) {
	trees := map[plumbing.Hash]*builtTree{}
	var build func(entries []*index.Entry, prefix int) plumbing.Hash
	build = func(entries []*index.Entry, prefix int) plumbing.Hash {
		var buf []byte
		t := &builtTree{}
		for i := 0; i < len(entries); {
			name := entries[i].Name[prefix:]
			mode, hash := entries[i].Mode, entries[i].Hash
			if slash := strings.IndexByte(name, '/'); slash < 0 {
				i++
			} else {
				dirPrefix := entries[i].Name[:prefix+slash+1]
				j := i + 1
				for j < len(entries) && strings.HasPrefix(entries[j].Name, dirPrefix) {
					j++
				}
				name, mode, hash = name[:slash], filemode.Dir, build(entries[i:j], len(dirPrefix))
				if t.subdirs == nil {
					t.subdirs = map[string]plumbing.Hash{}
				}
				t.subdirs[name] = hash
				i = j
			}
			buf = strconv.AppendUint(buf, uint64(mode), 8)
			buf = append(buf, ' ')
			buf = append(buf, name...)
			buf = append(buf, 0)
			buf = append(buf, hash[:]...)
		}
		t.content = buf
		h := objectHash(plumbing.TreeObject, buf)
		trees[h] = t
		return h
	}
	return build(entries, 0), trees
}

// storeTrees writes the trees of root that the store lacks. It descends only
// where root differs from old (HEAD's tree, whose objects all exist) and
// stops at any tree already stored, since its subtrees are stored too: a
// commit touching one directory writes and checks only the trees on its path.
func (r *Repo) storeTrees(trees map[plumbing.Hash]*builtTree, root, old plumbing.Hash) error {
	if root == old {
		return nil
	}
	t := trees[root]
	if t == nil || r.store.HasEncodedObject(root) == nil {
		return nil
	}
	var oldDirs map[string]plumbing.Hash
	if len(t.subdirs) > 0 && !old.IsZero() {
		es, err := r.treeEntries(old)
		if err != nil {
			return err
		}
		oldDirs = map[string]plumbing.Hash{}
		for _, e := range es {
			if e.Mode == filemode.Dir {
				oldDirs[e.Name] = e.Hash
			}
		}
	}
	for name, h := range t.subdirs {
		if err := r.storeTrees(trees, h, oldDirs[name]); err != nil {
			return err
		}
	}
	_, err := r.putObject(plumbing.TreeObject, t.content, true)
	return err
}

// lockFile is git's lock protocol: create path.lock exclusively, write the
// new content into it, rename it over path. A git command running at the
// same time fails on the lock instead of losing its update or ours.
type lockFile struct {
	path    string
	f       *os.File
	created time.Time // the lock's mtime: the filesystem's "now" when we began
	done    bool
	owner   string // the owner record (lockowner.go), removed before the lock
}

// acquireLock takes path's lock; with core.sharedRepository the lock file
// (the file once renamed) gets the shared permissions, as git's lockfiles do.
func (r *Repo) acquireLock(path string) (*lockFile, error) {
	l, err := acquireLock(path)
	if err == nil && r.shared != 0 {
		if err = r.adjustSharedPerm(path + ".lock"); err != nil {
			l.release()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	if err == nil {
		r.recordOwner(l)
	}
	return l, err
}

func acquireLock(path string) (*lockFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("lock %s: %s.lock exists; if no git process is running, remove it: %w", path, path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &lockFile{path: path, f: f}
	if fi, err := f.Stat(); err == nil {
		l.created = fi.ModTime()
	}
	return l, nil
}

// commit replaces path with content.
func (l *lockFile) commit(content []byte) error {
	if _, err := l.f.Write(content); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	l.dropOwner()
	if err := os.Rename(l.path+".lock", l.path); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	l.done = true
	return nil
}

// emptyIndex is an index of no entries, as git writes it.
var emptyIndex = func() []byte {
	b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00")
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}()

// lockPath is the lock file's path: the private index while a commit is
// staged.
func (l *lockFile) lockPath() string { return l.path + ".lock" }

// seed fills the lock with the file as it is (again, when a commit stages
// twice), with its mtime so that git's racy-entry check is the one it
// would make on the file itself.
func (l *lockFile) seed(ctx context.Context, r *Repo, from string) error {
	_ = l.f.Close()
	if from == "" {
		from = l.path
	}
	src, err := loadIndex(from)
	if errors.Is(err, fs.ErrNotExist) {
		// git refuses a zero-byte index: an empty one, in the repository's
		// hash, by git.
		if r.gitBin == "" {
			return os.WriteFile(l.lockPath(), emptyIndex, 0o666)
		}
		_ = os.Truncate(l.lockPath(), 0)
		_, err := r.git(ctx, gitRun{env: []string{"GIT_INDEX_FILE=" + l.lockPath()}}, append(noHooks, "read-tree", "--empty")...)
		return err
	}
	if src.data == nil {
		return fmt.Errorf("read %s: %w", from, err)
	}
	return l.seedWith(src)
}

// seedWith writes src into the lock file, dated as src was.
func (l *lockFile) seedWith(src indexBytes) error {
	_ = l.f.Close() // ours to write now, by name
	if err := os.WriteFile(l.lockPath(), src.data, 0o666); err != nil {
		return fmt.Errorf("write %s: %w", l.lockPath(), err)
	}
	return os.Chtimes(l.lockPath(), src.mtime, src.mtime)
}

// commitFile renames the lock file, as written by others, over path.
func (l *lockFile) commitFile() error {
	if l.done {
		return nil
	}
	l.dropOwner()
	if _, err := os.Stat(l.lockPath()); errors.Is(err, fs.ErrNotExist) {
		l.done = true
		return nil // nothing was ever staged: no index to write
	}
	if err := os.Rename(l.lockPath(), l.path); err != nil {
		return fmt.Errorf("write %s: %w", l.path, err)
	}
	l.done = true
	return nil
}

// release drops the lock if commit did not happen; safe to defer always.
func (l *lockFile) release() {
	if l.done {
		return
	}
	l.done = true
	_ = l.f.Close()
	l.dropOwner()
	_ = os.Remove(l.path + ".lock")
}

// head is what HEAD resolves to: the ref a commit advances (HEAD itself when
// detached) and its current commit (zero on an unborn branch).
type head struct {
	ref  plumbing.ReferenceName
	hash plumbing.Hash
}

func (r *Repo) readHead() (head, error) {
	ref, err := r.store.Reference(plumbing.HEAD)
	if err != nil {
		return head{}, fmt.Errorf("read HEAD: %w", err)
	}
	if ref.Type() == plumbing.HashReference {
		return head{ref: plumbing.HEAD, hash: ref.Hash()}, nil
	}
	// A chain (HEAD -> refs/heads/alias -> refs/heads/main) is followed to
	// the ref that holds a hash, which the commit advances, as git does.
	for range maxSymrefDepth {
		h := head{ref: ref.Target()}
		target, err := r.store.Reference(ref.Target())
		switch {
		case errors.Is(err, plumbing.ErrReferenceNotFound):
			return h, nil
		case err != nil:
			return head{}, fmt.Errorf("read %s: %w", ref.Target(), err)
		case target.Type() == plumbing.HashReference:
			h.hash = target.Hash()
			return h, nil
		}
		ref = target
	}
	return head{}, fmt.Errorf("read HEAD: symbolic refs nested deeper than %d levels (a cycle?); point HEAD at a branch with `git symbolic-ref HEAD refs/heads/<branch>`", maxSymrefDepth)
}

// reflogOpts is what the reflog line of a commit depends on beyond it.
type reflogOpts struct {
	action       string // "commit", "commit (merge)", GIT_REFLOG_ACTION… (reflogAction)
	onlyExisting bool   // core.logAllRefUpdates=false
}

// logAllRefUpdates is core.logAllRefUpdates: true (or "always") unless set
// false; git's default in a repository with a worktree is true.
func logAllRefUpdates(cfg gitConfig) bool {
	if strings.EqualFold(strings.TrimSpace(cfg.get("core.logAllRefUpdates")), "always") {
		return true
	}
	return cfg.bool("core.logAllRefUpdates", true)
}

// maxSymrefDepth is git's SYMREF_MAXDEPTH.
const maxSymrefDepth = 5

// refPath is where a ref is stored as a loose file: HEAD in the worktree's
// git dir, branches in the common one.
func (r *Repo) refPath(name plumbing.ReferenceName) string {
	if name == plumbing.HEAD {
		return filepath.Join(r.gitDir, "HEAD")
	}
	return filepath.Join(r.commonDir, filepath.FromSlash(name.String()))
}

// updateRef moves h.ref from h.hash to next under the ref's lock, refusing if
// someone else moved it meanwhile, then appends the reflog entries git would
// (go-git writes none).
func (r *Repo) updateRef(h head, next plumbing.Hash, who object.Signature, subject string, o reflogOpts) error {
	path := r.refPath(h.ref)
	lock, err := r.acquireLock(path)
	if err != nil {
		return err
	}
	defer lock.release()
	cur, err := r.readHead()
	if err != nil {
		return err
	}
	if cur.ref != h.ref || cur.hash != h.hash {
		return fmt.Errorf("update %s: it moved from %s to %s during the commit", h.ref, h.hash, cur.hash)
	}
	if err := lock.commit([]byte(next.String() + "\n")); err != nil {
		return fmt.Errorf("update %s: %w", h.ref, err)
	}

	line := reflogLine(h.hash, next, who, reflogMessage(o.action+": "+subject))
	logs := []string{filepath.Join(r.gitDir, "logs", "HEAD")}
	if h.ref != plumbing.HEAD {
		logs = append(logs, filepath.Join(r.commonDir, "logs", filepath.FromSlash(h.ref.String())))
	}
	for _, p := range logs {
		if _, err := os.Stat(p); err != nil && o.onlyExisting {
			continue // core.logAllRefUpdates=false: only reflogs that exist grow
		}
		if err := r.appendLine(p, line); err != nil {
			// The commit is made and the ref moved; a missing reflog line
			// only loses `git reflog` history.
			r.log.Warn("append reflog", "file", p, "err", err)
		}
	}
	return nil
}

// reflogLine is one line of a reflog as git writes it.
func reflogLine(from, to plumbing.Hash, who object.Signature, msg string) string {
	return fmt.Sprintf("%s %s %s <%s> %d %s\t%s\n", from, to, who.Name, who.Email,
		who.When.Unix(), who.When.Format("-0700"), msg)
}

// appendLine appends to a reflog; with core.sharedRepository the file
// gets the shared permissions, as git gives every reflog it writes to.
func (r *Repo) appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.adjustSharedPerm(path)
}
