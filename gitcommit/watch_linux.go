package gitcommit

import (
	"errors"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A stat per user file per commit (fingerprints) costs as much as git's own
// `git add -A` over as many tracked files: 20,000 fstatat calls took about
// 58 ms of CPU a commit on a 2-core VM, the commit with none 85 ms in all
// (BenchmarkCommitWithUserFiles). The kernel can say instead which of them
// may have changed: an inotify watch on each directory that holds user
// files, set before the first full look, names every file created,
// written, closed after writing, chmod'ed, moved or deleted in it since.
// A later look stats only those. Whatever the watch cannot vouch for is
// looked at whole again: an overflowed queue, a watched directory moved
// or deleted, or one of the directories on the way to it renamed or
// removed (watched too, for those names only). A change the watch misses
// (a write through a hard link in another directory, or through a mapping
// after close) leaves the file out of the commit as the user's — the side
// a miss may err on.

// userWatch is the inotify instance watching the user files' directories.
type userWatch struct {
	fd int
	// dirs are the directories of user files by watch descriptor (slash
	// paths relative to the root; "." for the root).
	dirs map[int]string
	// ways are the directories on the way to those, by descriptor, with
	// the names in each that lead on to one.
	ways    map[int]map[string]bool
	watched map[string]bool // dirs' values
	last    map[string]fingerprintResult
	// always are the paths of the list alwaysFor (by identity: a kept
	// answer, never changed) the watch never vouches for (alwaysOf):
	// working them out at every commit cost about 4 ms for 20,000 paths.
	alwaysFor, always []string
	broken            bool // the watch cannot vouch: look at everything again
}

const (
	dirEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
		unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	wayEvents = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CREATE |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
)

// newUserWatch starts watching byDir's directories and the ones on the
// way to them under root; nil where inotify cannot (then every look is
// whole).
func newUserWatch(root string, byDir map[string][]string) *userWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &userWatch{fd: fd, dirs: map[int]string{}, ways: map[int]map[string]bool{}, watched: map[string]bool{}}
	// The descriptor is closed with the Repo that holds the watch.
	runtime.SetFinalizer(w, func(w *userWatch) { unix.Close(w.fd) })
	if !w.addAll(root, byDir) {
		w.close()
		return nil
	}
	return w
}

// addAll watches those of byDir's directories not watched yet; false
// where one that exists could not be (out of watches,
// fs.inotify.max_user_watches, or a name inotify cannot take).
func (w *userWatch) addAll(root string, byDir map[string][]string) bool {
	for dir := range byDir {
		if !w.watched[dir] && !w.add(root, dir) && dirExists(root, dir) {
			return false
		}
	}
	return true
}

// close ends the watch now rather than with the Repo.
func (w *userWatch) close() {
	runtime.SetFinalizer(w, nil)
	unix.Close(w.fd)
}

// add watches dir and, for the names leading to it, each directory on the
// way from root.
func (w *userWatch) add(root, dir string) bool {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(root, filepath.FromSlash(dir)), dirEvents)
	if err != nil {
		return false
	}
	if _, ok := w.dirs[wd]; ok && w.dirs[wd] != dir {
		return false // two names for one directory (a symlink on the way)
	}
	w.dirs[wd], w.watched[dir] = dir, true
	for d := dir; d != "."; d = path.Dir(d) {
		parent := path.Dir(d)
		wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(root, filepath.FromSlash(parent)), wayEvents|unix.IN_MASK_ADD)
		if err != nil {
			return false
		}
		if w.ways[wd] == nil {
			w.ways[wd] = map[string]bool{}
		}
		w.ways[wd][path.Base(d)] = true
	}
	return true
}

// changed drains the events and returns the paths among user that may
// have changed since the last look, and whether that answer holds (false:
// look at every path).
func (w *userWatch) changed(user []string) (map[string]bool, bool) {
	dirty := map[string]bool{}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			break // EAGAIN: drained
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
				w.broken = true
			case w.ways[int(ev.Wd)][name] && ev.Mask&(unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO|unix.IN_CREATE) != 0:
				w.broken = true // a directory on the way renamed or removed
			}
			if dir, ok := w.dirs[int(ev.Wd)]; ok && name != "" {
				if p := path.Join(dir, name); w.isUser(p) {
					dirty[p] = true
				}
			}
		}
	}
	if w.broken || w.last == nil {
		return nil, false
	}
	for _, p := range w.alwaysOf(user) {
		dirty[p] = true
	}
	return dirty, true
}

// isUser says the last whole look saw p (a user path not seen then is
// among alwaysOf's).
func (w *userWatch) isUser(p string) bool {
	_, ok := w.last[p]
	return ok
}

// alwaysOf are the paths of user the watch never vouches for, looked at
// every time: one the last whole look did not see, a nested repository
// (its HEAD changes inside it), one whose directory is not watched (gone
// when the watch was set). Kept for the same list: a path seen since
// stays among them, looked at more often than needed, never less.
func (w *userWatch) alwaysOf(user []string) []string {
	if sameList(user, w.alwaysFor) {
		return w.always
	}
	var always []string
	for _, p := range user {
		if last, ok := w.last[p]; !ok || last.dir || !w.watched[path.Dir(p)] {
			always = append(always, p)
		}
	}
	w.alwaysFor, w.always = user, always
	return always
}

// looked records a whole look's results: what the next looks start from.
func (w *userWatch) looked(out map[string]fingerprintResult) {
	w.last, w.broken = out, false
	w.alwaysFor, w.always = nil, nil // the directories watched may have changed too
}
