package gitcommit

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/osfs"
)

// GIT_OBJECT_DIRECTORY and GIT_ALTERNATE_OBJECT_DIRECTORIES, as git reads
// them: the objects live (and new ones go) elsewhere than the git dir's
// objects/, and more directories are searched. go-git knows neither, so
// the commit ended in "read HEAD commit: object not found".

// objectEnv sets r.objectsDir and r.altObjects from the environment; cwd
// resolves relative paths, as for git run there.
func (r *Repo) objectEnv(cwd string) {
	r.objectsDir = filepath.Join(r.commonDir, "objects")
	if d := r.getenv("GIT_OBJECT_DIRECTORY"); d != "" {
		r.objectsDir = absFrom(cwd, d)
	}
	r.altObjects = nil
	for _, d := range filepath.SplitList(r.getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES")) {
		if d = strings.TrimSpace(d); d != "" {
			r.altObjects = append(r.altObjects, absFrom(cwd, d))
		}
	}
}

// objectEnvVars passes the object directories on to a git debussy runs,
// absolute.
func (r *Repo) objectEnvVars() []string {
	var env []string
	if r.getenv("GIT_OBJECT_DIRECTORY") != "" {
		env = append(env, "GIT_OBJECT_DIRECTORY="+r.objectsDir)
	}
	if len(r.altObjects) > 0 {
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+strings.Join(r.altObjects, string(os.PathListSeparator)))
	}
	return env
}

// objectsFS is the git dir's filesystem with "objects/…" served from the
// object directory, and the environment's alternates added to
// objects/info/alternates.
type objectsFS struct {
	billy.Filesystem
	objects billy.Filesystem
	alt     []string
}

func (r *Repo) withObjectEnv(fs billy.Filesystem) billy.Filesystem {
	if r.objectsDir == filepath.Join(r.commonDir, "objects") && len(r.altObjects) == 0 {
		return fs
	}
	return &objectsFS{Filesystem: fs, objects: osfs.New(r.objectsDir), alt: r.altObjects}
}

func (f *objectsFS) route(p string) (billy.Filesystem, string) {
	s := filepath.ToSlash(filepath.Clean(p))
	if s == "objects" {
		return f.objects, ""
	}
	if rest, ok := strings.CutPrefix(s, "objects/"); ok {
		return f.objects, rest
	}
	return f.Filesystem, p
}

// named gives a file opened in the object directory its name as the
// caller knows it ("objects/…"): go-git renames and removes files by it.
func (f *objectsFS) named(fs billy.Filesystem, file billy.File, err error) (billy.File, error) {
	if err != nil || fs != f.objects {
		return file, err
	}
	return renamedFile{file, filepath.Join("objects", file.Name())}, nil
}

type renamedFile struct {
	billy.File
	name string
}

func (r renamedFile) Name() string { return r.name }

func (f *objectsFS) Create(p string) (billy.File, error) {
	fs, p := f.route(p)
	file, err := fs.Create(p)
	return f.named(fs, file, err)
}

func (f *objectsFS) Open(p string) (billy.File, error) {
	if f.isAlternates(p) {
		m, err := f.alternatesFS()
		if err != nil {
			return nil, err
		}
		return m.Open("alternates")
	}
	fs, p := f.route(p)
	file, err := fs.Open(p)
	return f.named(fs, file, err)
}

// isAlternates says p is objects/info/alternates and the environment adds
// to it: Open and Stat serve alternatesFS's file instead.
func (f *objectsFS) isAlternates(p string) bool {
	return len(f.alt) > 0 && filepath.ToSlash(filepath.Clean(p)) == "objects/info/alternates"
}

// alternatesFS holds "alternates": the object directory's alternates file
// plus the environment's directories.
func (f *objectsFS) alternatesFS() (billy.Filesystem, error) {
	var b []byte
	if file, err := f.objects.Open("info/alternates"); err == nil {
		b, _ = io.ReadAll(file)
		file.Close()
	}
	content := strings.TrimRight(string(b), "\n")
	for _, a := range f.alt {
		if content != "" {
			content += "\n"
		}
		content += a
	}
	m := memfs.New()
	w, err := m.Create("alternates")
	if err != nil {
		return nil, err
	}
	if _, err := w.Write([]byte(content + "\n")); err != nil {
		return nil, err
	}
	w.Close()
	return m, nil
}

func (f *objectsFS) OpenFile(p string, flag int, perm os.FileMode) (billy.File, error) {
	fs, p := f.route(p)
	file, err := fs.OpenFile(p, flag, perm)
	return f.named(fs, file, err)
}

func (f *objectsFS) Stat(p string) (os.FileInfo, error) {
	if f.isAlternates(p) {
		m, err := f.alternatesFS()
		if err != nil {
			return nil, err
		}
		return m.Stat("alternates")
	}
	fs, p := f.route(p)
	return fs.Stat(p)
}

func (f *objectsFS) Rename(from, to string) error {
	fs, from := f.route(from)
	_, to = f.route(to)
	return fs.Rename(from, to)
}

func (f *objectsFS) Remove(p string) error {
	fs, p := f.route(p)
	return fs.Remove(p)
}

func (f *objectsFS) TempFile(dir, prefix string) (billy.File, error) {
	fs, dir := f.route(dir)
	file, err := fs.TempFile(dir, prefix)
	return f.named(fs, file, err)
}

func (f *objectsFS) ReadDir(p string) ([]os.FileInfo, error) {
	fs, p := f.route(p)
	return fs.ReadDir(p)
}

func (f *objectsFS) MkdirAll(p string, perm os.FileMode) error {
	fs, p := f.route(p)
	return fs.MkdirAll(p, perm)
}

func (f *objectsFS) Lstat(p string) (os.FileInfo, error) {
	fs, p := f.route(p)
	return fs.Lstat(p)
}

// altFS resolves alternates as go-git does (Stat the path, chroot to its
// parent, read that parent's "objects"), except that a directory not named
// objects (an environment alternate such as /srv/store) is served as its
// parent's "objects".
type altFS struct {
	billy.Filesystem // "/"
	mu               sync.Mutex
	named            map[string]string // parent → the alternate directory under it
}

func newAltFS() *altFS {
	return &altFS{Filesystem: osfs.New("/", osfs.WithBoundOS()), named: map[string]string{}}
}

func (a *altFS) Stat(p string) (os.FileInfo, error) {
	if filepath.Base(p) != "objects" {
		a.mu.Lock()
		a.named[filepath.Dir(p)] = p
		a.mu.Unlock()
	}
	return a.Filesystem.Stat(p)
}

func (a *altFS) Chroot(dir string) (billy.Filesystem, error) {
	fs, err := a.Filesystem.Chroot(dir)
	a.mu.Lock()
	p, ok := a.named[dir]
	a.mu.Unlock()
	if err != nil || !ok {
		return fs, err
	}
	return &objectsFS{Filesystem: fs, objects: osfs.New(p)}, nil
}
