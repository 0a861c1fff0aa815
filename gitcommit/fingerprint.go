package gitcommit

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A user's file is known by its fingerprint (Fingerprints); reading 20,000
// of them at every commit would cost more than the commit. So each
// fingerprint is kept with the stat data it was taken with, and a file
// whose stat data still say the same, and that was last written well
// before it was read (git's racy-entry rule), is not read again: a commit
// costs one stat per user file, relative to its directory.

// fpStat is what a file's stat data must still say for its fingerprint to
// hold without reading it: git's stat data.
type fpStat struct {
	size, mtime, ctime int64
	ino                uint64
	mode               uint32
}

// fingerprintCache is the fingerprints taken, by path.
type fingerprintCache map[string]fpEntry

type fpEntry struct {
	stat fpStat
	fp   string
	at   int64 // when the file was read (Unix nanoseconds)
}

// racyMargin is how much older than its reading a file must be for its
// stat data to vouch for its content (file systems' timestamps lag the
// clock by a tick, some by seconds).
const racyMargin = int64(time.Second)

// vouches says stat data st, read at at (Unix ns), vouch for what was
// read with them: the file was last written (or its inode changed) well
// before, git's racy-entry rule with a file system's margin.
func vouches(st fpStat, at int64) bool {
	return st.mtime < at-racyMargin && st.ctime < at-racyMargin
}

// cached returns p's fingerprint if st still vouches for it.
func (r *Repo) cached(p string, st fpStat) (string, bool) {
	c, ok := r.fps[p]
	if !ok || c.stat != st || !vouches(st, c.at) {
		return "", false
	}
	return c.fp, true
}

// fingerprint is what tells a user's untracked path changed: the hash of a
// file's bytes or a symlink's target, a nested repository's HEAD ("" without
// a commit). present is false when the path is gone.
func (r *Repo) fingerprint(p string) (fingerprintResult, error) {
	abs := filepath.Join(r.root, filepath.FromSlash(p))
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
		return fingerprintResult{}, nil
	}
	if err != nil {
		return fingerprintResult{}, fmt.Errorf("fingerprint %s: %w", p, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		if err != nil {
			return fingerprintResult{}, nil
		}
		return fingerprintResult{fp: "link:" + objectHash(plumbing.BlobObject, []byte(t)).String(), present: true}, nil
	case fi.IsDir():
		return fingerprintResult{fp: nestedHead(abs), present: true, dir: true}, nil
	case !fi.Mode().IsRegular():
		return fingerprintResult{}, nil
	}
	st := statOf(fi)
	if fp, ok := r.cached(p, st); ok {
		return fingerprintResult{fp: fp, present: true}, nil
	}
	at := time.Now().UnixNano()
	f, err := os.Open(abs)
	if err != nil {
		return fingerprintResult{}, nil
	}
	defer f.Close()
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	if _, err := io.Copy(h, f); err != nil {
		return fingerprintResult{}, fmt.Errorf("fingerprint %s: %w", p, err)
	}
	fp := hex.EncodeToString(h.Sum(nil))
	if r.fps == nil {
		r.fps = fingerprintCache{}
	}
	r.fps[p] = fpEntry{stat: st, fp: fp, at: at}
	return fingerprintResult{fp: fp, present: true}, nil
}

// fingerprintResult is one path's fingerprint, and whether it is there.
type fingerprintResult struct {
	fp      string
	present bool
	dir     bool
}

// fingerprints is fingerprint for many paths: a stat each, relative to
// its directory, for a regular file the cache vouches for; the whole
// fingerprint for the rest. Where the watch vouches for the paths, the
// answer is its own record, updated for the paths it names (the caller
// only reads it, before the next look).
func (r *Repo) fingerprints(paths []string) (map[string]fingerprintResult, error) {
	if r.watch != nil {
		if dirty, ok := r.watch.changed(paths); ok {
			some := map[string][]string{}
			for p := range dirty {
				some[path.Dir(p)] = append(some[path.Dir(p)], p)
			}
			looked, err := r.look(some)
			if err != nil {
				r.watch.broken = true // its events are drained: the next look is whole
				return nil, err
			}
			maps.Copy(r.watch.last, looked)
			return r.watch.last, nil
		}
	}
	byDir := map[string][]string{}
	for _, p := range paths {
		byDir[path.Dir(p)] = append(byDir[path.Dir(p)], p)
	}
	// A whole look; the watch is set (or completed) first, so whatever
	// changes after it is seen by the next look.
	switch {
	case r.noWatch:
	case r.watch == nil:
		r.watch = newUserWatch(r.root, byDir)
		r.noWatch = r.watch == nil
	case !r.watch.addAll(r.root, byDir):
		r.watch.close()
		r.watch, r.noWatch = nil, true
	}
	out, err := r.look(byDir)
	if err != nil {
		return nil, err
	}
	if r.watch != nil {
		r.watch.looked(maps.Clone(out))
	}
	return out, nil
}

// look fingerprints byDir's paths (directory → paths in it).
func (r *Repo) look(byDir map[string][]string) (map[string]fingerprintResult, error) {
	out := map[string]fingerprintResult{}
	var slow []string
	statEach(r.root, byDir, func(p string, st fpStat, regular bool) {
		if fp, ok := r.cached(p, st); ok && regular {
			out[p] = fingerprintResult{fp: fp, present: true}
			return
		}
		slow = append(slow, p)
	})
	for _, p := range slow {
		res, err := r.fingerprint(p)
		if err != nil {
			return nil, err
		}
		out[p] = res
	}
	return out, nil
}

// dirExists reports whether root/dir is there: a directory of user files
// that is gone is not watched, its paths looked at each time.
func dirExists(root, dir string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir)))
	return !errors.Is(err, fs.ErrNotExist)
}
