package gitcommit

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
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

// streamThreshold is the file size above which blobs are hashed and stored
// in chunks rather than read whole (ReadFile plus go-git's in-memory object
// held a 200 MB file twice: 411 MB peak, where git needs 205 MB).
const streamThreshold = 1 << 20

// errChangedWhileRead means a file shrank while it was read.
var errChangedWhileRead = errors.New("file changed while it was read")

// streamBlob hashes the regular file at abs and, with write, stores it as a
// loose object, reading it in chunks. The hash is computed first, so a blob
// the store already has is not compressed again. conv, when not nil, turns
// CRLF into LF on the way (streamConv); every pass reads the same first
// size bytes, so a file still being appended to is one snapshot.
func (r *Repo) streamBlob(abs string, write bool, conv *streamConv) (plumbing.Hash, error) {
	f, err := os.Open(abs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	size := fi.Size()
	outSize := size
	if conv != nil {
		if outSize, err = conv.plan(f, size); err != nil {
			return plumbing.ZeroHash, err
		}
		if outSize == size {
			conv = nil // nothing to convert
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	h, err := copyBlob(io.Discard, f, size, outSize, conv)
	if err != nil || !write || r.store.HasEncodedObject(h) == nil {
		return h, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return plumbing.ZeroHash, err
	}

	objects := r.objectsDir
	tmp, err := os.CreateTemp(objects, "tmp_obj_")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer os.Remove(tmp.Name())                         // a no-op once renamed
	zw, err := zlib.NewWriterLevel(tmp, zlib.BestSpeed) // git's core.looseCompression default
	if err != nil {
		tmp.Close()
		return plumbing.ZeroHash, err
	}
	h2, err := copyBlob(zw, f, size, outSize, conv)
	if err == nil {
		err = zw.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	// Rewritten between the passes: the object written holds what the
	// second pass read, a consistent snapshot under its own id.
	h = h2
	dir, err := r.objectDir(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	final := filepath.Join(dir, h.String()[2:])
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}

// copyBlob writes the loose-object form of the next size bytes of src
// ("blob <size>\0" and the content) to dst and returns the object id; the
// source must hold at least size bytes. With conv the content is converted
// on the way and must come to outSize bytes.
func copyBlob(dst io.Writer, src io.Reader, size, outSize int64, conv *streamConv) (plumbing.Hash, error) {
	hh := sha1.New()
	w := io.MultiWriter(dst, hh)
	header := append(plumbing.BlobObject.Bytes(), ' ')
	header = strconv.AppendInt(header, outSize, 10)
	header = append(header, 0)
	if _, err := w.Write(header); err != nil {
		return plumbing.ZeroHash, err
	}
	var strip *crlfStripper
	if conv != nil {
		strip = &crlfStripper{w: w}
		w = strip
	}
	// Like git, the first size bytes are the blob: a file still being
	// appended to (a log) is committed as it was when stat'ed, not refused.
	n, err := io.CopyN(w, src, size)
	if errors.Is(err, io.EOF) || n != size {
		return plumbing.ZeroHash, errChangedWhileRead // truncated meanwhile: read again
	}
	if err == nil && strip != nil {
		err = strip.flush()
		if err == nil && strip.n != outSize {
			err = errChangedWhileRead // rewritten since the stats were taken
		}
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var out plumbing.Hash
	hh.Sum(out[:0])
	return out, nil
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

// readIndex reads the worktree's index; a missing one is empty. ModTime is
// the file's, which the racy-git check needs.
func (r *Repo) readIndex() (*index.Index, error) {
	path := r.indexFile
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	idx, valid, ok, err := decodeIndex(b)
	if err != nil {
		return nil, fmt.Errorf("read index %s: %w", path, err)
	}
	if !ok {
		idx = &index.Index{}
		if err := index.NewDecoder(bytes.NewReader(b)).Decode(idx); err != nil {
			return nil, fmt.Errorf("read index %s: %w", path, err)
		}
	}
	idx.ModTime = fi.ModTime()
	r.assumeValid = valid
	r.noteRuleFiles(idx.Entries)
	return idx, nil
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

// encodeIndex serialises entries. Entries whose mtime is not before the
// moment we started ("racily clean") get size 0, as git does, so whoever
// reads this index later re-reads them instead of trusting a stat that a
// same-tick edit could share. Extensions (the cached tree) are dropped; git
// rebuilds them.
func (r *Repo) encodeIndex(idx *index.Index, entries []*index.Entry, started time.Time) ([]byte, error) {
	for _, e := range entries {
		if !started.IsZero() && e.Mode != filemode.Submodule && !e.ModifiedAt.Before(started) {
			e.Size = 0
		}
	}
	return encodeIndexEntries(entries, r.assumeValid, idx.Version == 4), nil
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
	label        string // "merge" or "cherry-pick": "commit (merge):" (opState.reflog)
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

	msg := "commit: " + subject
	switch {
	case h.hash.IsZero():
		msg = "commit (initial): " + subject
	case o.label != "":
		msg = "commit (" + o.label + "): " + subject
	}
	line := reflogLine(h.hash, next, who, msg)
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
