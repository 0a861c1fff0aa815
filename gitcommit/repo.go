// Package gitcommit commits an agent's work exactly as the user's own
// `git add -A && git commit` would, or refuses where git would refuse. The
// differential suite (differential_test.go) holds it to real git.
//
// What it honours, as git does:
//   - ignore rules: every .gitignore (a symlinked one is not followed),
//     info/exclude of the common git dir, core.excludesFile or the XDG
//     default; matched by a port of git's wildmatch and dir.c rules, fuzzed
//     against `git check-ignore`;
//   - the repository: GIT_DIR, GIT_WORK_TREE and core.worktree, else
//     discovery from the working directory, refused as git refuses one
//     owned by another user (safedir.go); GIT_OBJECT_DIRECTORY and
//     GIT_ALTERNATE_OBJECT_DIRECTORIES (objdirs.go);
//   - config: system, XDG, ~/.gitconfig, repository and worktree config
//     (extensions.worktreeConfig), include.path and includeIf gitdir,
//     gitdir/i, onbranch and hasconfig:remote.*.url (any other condition is
//     refused), GIT_CONFIG_COUNT; parsed as git parses it
//     (UTF-8 BOM, legacy [section.sub] headers). A file git rejects is an
//     error naming file and line, never a silent fallback;
//   - author and committer from GIT_* variables, author.*, committer.*,
//     user.* and $EMAIL, with GIT_AUTHOR_DATE and GIT_COMMITTER_DATE;
//   - the index: stat data and racy git, core.fileMode, core.symlinks,
//     core.ignoreStat, intent-to-add, unmerged entries, assume-unchanged and
//     skip-worktree entries kept as they are (a skip-worktree .gitignore or
//     .gitattributes read from the index), a sparse checkout's definition
//     (sparse.go), index versions 2 to 4;
//   - nested repositories: a gitlink to the HEAD of an untracked one; a
//     directory that holds tracked files is walked as git walks it; an
//     empty .git directory or a non-gitdir .git file hides nothing;
//   - alternates (clone --shared / --reference), preciousObjects, linked
//     worktrees and submodules, core.sharedRepository permissions.
//
// Refused with the reason, as `git add -A` refuses them or because they are
// not supported: a nested repository without a commit, paths git reserves
// (.Git/, .git., a symlinked .gitmodules), SHA-256 repositories, unknown
// repository extensions, split and sparse indexes. Never committed:
// debussy's own .debussy/ directory.
//
// Filters, eol, hooks, signing and unfinished operations are covered in
// CommitAll's documentation and Preflight.
//
// Where git is installed, git's verdict wins (gitverdict.go): each commit is
// staged by `git add -A` too, and git's entry is committed wherever the two
// differ, the difference reported as a bug (Commit.GitReplaced).
//
// go-git provides the object store and the file formats. The staging pass is
// our own: go-git's AddWithOptions{All: true} hashes every file of every
// ignored tree (node_modules) on each call and skips .git/info/exclude in
// linked worktrees and core.excludesFile everywhere. The pass here stats
// tracked files against the index like git does, descends only into
// directories that are not ignored, streams large files into objects, and
// writes the index and refs under git's own lock files so a concurrent git
// command fails cleanly instead of being clobbered.
package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

var (
	// ErrNotRepo means the directory is not inside a git worktree.
	ErrNotRepo = errors.New("not a git repository")
	// ErrNothingToCommit means the tree (after staging everything git would)
	// equals HEAD's tree: there is no work to save.
	ErrNothingToCommit = errors.New("nothing to commit")
	// ErrLocked means another git process holds index.lock or a ref lock.
	ErrLocked = errors.New("repository is locked by another git process")
)

// stateDir is debussy's own ledger directory; it is never committed, at any
// depth, whatever the ignore files say.
const stateDir = ".debussy"

// Repo is a git worktree opened for committing. Its methods serialise on an
// internal mutex, so one Repo may be shared between goroutines.
type Repo struct {
	root      string // worktree root
	gitDir    string // per-worktree git dir (index, HEAD, logs/HEAD)
	commonDir string // shared git dir (objects, refs, config, info/exclude)

	// Reopened by each operation (see reopen); guarded by mu.
	repo  *git.Repository
	store storage.Storer

	// assumeValid is the last index read's assume-unchanged entries (the
	// flag has no place in go-git's index.Entry); guarded by mu.
	assumeValid map[string]bool

	shared int // core.sharedRepository (parseSharedPerm); set by checkFormat

	log    *slog.Logger
	now    func() time.Time
	getenv func(string) string
	// env is the environment getenv reads, for git's verdict (WithEnv);
	// osEnv says getenv is os.Getenv's, so os.Environ() is it.
	env       []string
	osEnv     bool
	noVerdict bool // withoutVerdict
	// objectsDir is where objects are written (GIT_OBJECT_DIRECTORY, else
	// the common dir's objects/); altObjects are
	// GIT_ALTERNATE_OBJECT_DIRECTORIES (objdirs.go).
	objectsDir string
	altObjects []string
	// ruleBlobs are the index's skip-worktree .gitignore and .gitattributes
	// (indexrules.go), set by readIndex; guarded by mu.
	ruleBlobs map[string]plumbing.Hash
	// indexFile is the index: GIT_INDEX_FILE (relative to the worktree
	// root, as git reads it) or the git dir's.
	indexFile string

	mu sync.Mutex
}

// Option configures Open.
type Option func(*Repo)

// WithLogger sets where warnings (a skipped nested repository, an unwritable
// reflog) go. The default discards them.
func WithLogger(l *slog.Logger) Option { return func(r *Repo) { r.log = l } }

// WithClock sets the clock used for commit and reflog timestamps.
func WithClock(now func() time.Time) Option { return func(r *Repo) { r.now = now } }

// WithGetenv sets how HOME, XDG_CONFIG_HOME, GIT_AUTHOR_* and the other
// variables git honours are looked up. The default is os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(r *Repo) { r.getenv, r.osEnv = getenv, false }
}

// WithEnv sets the environment (KEY=value, the last one wins) variables are
// looked up in, as WithGetenv, and the one git runs with for its verdict
// (see CommitAll); without either, the process's own.
func WithEnv(env []string) Option {
	return func(r *Repo) { r.getenv, r.env, r.osEnv = getenvOf(env), env, false }
}

// Open finds the repository whose worktree contains dir, the way git does:
// GIT_DIR and GIT_WORK_TREE when set (see discoverFromEnv), else the nearest
// ancestor holding a .git directory or a .git file (linked worktrees and
// submodules).
func Open(dir string, opts ...Option) (*Repo, error) {
	r := &Repo{
		log:    slog.New(slog.DiscardHandler),
		now:    time.Now,
		getenv: os.Getenv,
		osEnv:  true,
	}
	for _, o := range opts {
		o(r)
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("open repository: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("open repository: %s is not a directory", abs)
	}
	found := "" // the directory discovery found .git in: git checks its owner
	if gd := r.getenv("GIT_DIR"); gd != "" {
		err = r.discoverFromEnv(abs, gd)
	} else {
		r.root, r.gitDir, r.commonDir, err = discover(abs)
		found = r.root
		if err == nil && r.getenv("GIT_WORK_TREE") != "" {
			r.root = absFrom(abs, r.getenv("GIT_WORK_TREE"))
		}
	}
	if err != nil {
		return nil, err
	}
	r.followGit(abs)
	r.objectEnv(abs)
	r.indexFile = filepath.Join(r.gitDir, "index")
	if f := r.getenv("GIT_INDEX_FILE"); f != "" {
		r.indexFile = absFrom(r.root, f)
	}

	if err := r.reopen(); err != nil {
		return nil, err
	}
	if found != "" {
		if err := r.checkOwnership(found); err != nil {
			return nil, fmt.Errorf("open repository: %w", err)
		}
	}
	return r, nil
}

// reopen gives each operation a fresh go-git repository. go-git loads the
// pack indexes once per repository and never looks again, so one kept across
// an agent session would not see objects that `git gc --auto` (run by the
// agent's own git commits) moved into a new pack.
//
// The storage is built here rather than by git.PlainOpen for two cases the
// differential suite found: go-git refuses every repository extension
// (extensions.worktreeConfig, set by any `git sparse-checkout set`, and
// preciousObjects are safe for us: the config we read is our own and we only
// add objects), and it resolves alternates (`clone --shared`/`--reference`)
// inside the .git directory's chroot, so their objects were "not found".
func (r *Repo) reopen() error {
	if err := r.checkFormat(); err != nil {
		return fmt.Errorf("open repository %s: %w", r.root, err)
	}
	var fs billy.Filesystem = osfs.New(r.gitDir)
	if r.commonDir != r.gitDir {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(r.commonDir))
	}
	st := filesystem.NewStorageWithOptions(r.withObjectEnv(fs), cache.NewObjectLRUDefault(), filesystem.Options{
		AlternatesFS: newAltFS(),
	})
	repo, err := git.Open(formatChecked{st}, osfs.New(r.root))
	if err != nil {
		return fmt.Errorf("open repository %s: %w", r.root, err)
	}
	r.repo, r.store = repo, repo.Storer
	return nil
}

// formatChecked hands go-git an empty repository config: go-git reads it
// only to check the format and extensions, which checkFormat has done with
// git's parsing rules (go-git's parser rejects a BOM and legacy sections).
type formatChecked struct{ storage.Storer }

func (formatChecked) Config() (*config.Config, error) { return config.NewConfig(), nil }

// checkFormat refuses, with the real reason, a repository whose format
// CommitAll cannot write correctly; it reads only the repository's own
// config, as git does for these keys.
func (r *Repo) checkFormat() error {
	c := gitConfig{values: map[string]string{}, bare: map[string]bool{}}
	path := filepath.Join(r.commonDir, "config")
	if err := r.readConfigFile(c, path, -1); err != nil {
		return err
	}
	// git takes core.sharedRepository from the repository's config alone.
	r.shared = parseSharedPerm(strings.TrimSpace(c.get("core.sharedRepository")), c.has("core.sharedRepository"), c.bare["core.sharedrepository"])
	version := strings.TrimSpace(c.get("core.repositoryFormatVersion"))
	switch version {
	case "", "0", "1":
	default:
		return &UnsupportedError{Feature: "core.repositoryFormatVersion=" + version, Detail: path,
			WayOut: "this repository needs a newer git than debussy's commits understand"}
	}
	for key, value := range c.values {
		ext, ok := strings.CutPrefix(key, "extensions.")
		if !ok {
			continue
		}
		switch ext {
		case "worktreeconfig", "preciousobjects", "noop":
			// worktreeConfig: readConfig reads config.worktree itself.
			continue
		case "objectformat":
			if strings.EqualFold(value, "sha1") {
				continue
			}
			return &UnsupportedError{Feature: "extensions.objectFormat=" + value, Detail: path,
				WayOut: "debussy's commits (go-git v5) only write SHA-1 repositories; use a SHA-1 clone of the project"}
		}
		if version == "" || version == "0" {
			continue // git ignores unknown extensions in a version 0 repository
		}
		return &UnsupportedError{Feature: "extensions." + ext, Detail: path,
			WayOut: "debussy's commits do not know this repository extension; run debussy on a clone without it"}
	}
	return nil
}

// begin serialises an operation and reopens the repository for it.
func (r *Repo) begin() (end func(), err error) {
	r.mu.Lock()
	if err := r.reopen(); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	return r.mu.Unlock, nil
}

// discover walks up from dir to the first directory holding .git and
// resolves the per-worktree and common git directories.
func discover(dir string) (root, gitDir, commonDir string, err error) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, statErr := os.Stat(dotgit)
		switch {
		case statErr == nil && fi.IsDir() && isGitDirectory(dotgit):
			// An empty or broken .git directory is passed over, as git's
			// discovery does.
			gitDir = dotgit
		case statErr == nil && fi.Mode().IsRegular():
			gitDir, err = readGitFile(dotgit)
			if err != nil {
				return "", "", "", err
			}
		case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
			return "", "", "", fmt.Errorf("open repository: %w", statErr)
		}
		if gitDir != "" {
			commonDir, err = readCommonDir(gitDir)
			if err != nil {
				return "", "", "", err
			}
			return d, gitDir, commonDir, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", "", fmt.Errorf("open repository: %s is not inside a git worktree (run `git init` there first): %w", dir, ErrNotRepo)
		}
		d = parent
	}
}

// discoverFromEnv resolves the repository as git does when GIT_DIR is set
// (relative paths against dir, the working directory): the worktree is
// GIT_WORK_TREE, else core.worktree (relative to the git dir), else dir
// itself. A bare repository without either is refused: there is no
// worktree to commit.
func (r *Repo) discoverFromEnv(dir, gd string) error {
	gitDir := absFrom(dir, gd)
	if fi, err := os.Stat(gitDir); err == nil && fi.Mode().IsRegular() {
		if gitDir, err = readGitFile(gitDir); err != nil {
			return err
		}
	}
	if !isGitDirectory(gitDir) {
		return fmt.Errorf("open repository: GIT_DIR=%s is not a git directory (unset GIT_DIR or point it at one): %w", gd, ErrNotRepo)
	}
	commonDir, err := readCommonDir(gitDir)
	if err != nil {
		return err
	}
	if cd := r.getenv("GIT_COMMON_DIR"); cd != "" {
		commonDir = absFrom(dir, cd)
	}
	r.gitDir, r.commonDir = gitDir, commonDir
	if wt := r.getenv("GIT_WORK_TREE"); wt != "" {
		r.root = absFrom(dir, wt)
		return nil
	}
	c := gitConfig{values: map[string]string{}, bare: map[string]bool{}}
	if err := r.readConfigFile(c, filepath.Join(commonDir, "config"), -1); err != nil {
		return fmt.Errorf("open repository: %w", err)
	}
	switch {
	case c.get("core.worktree") != "":
		// git takes the real path of "<git dir>/<core.worktree>": a ".."
		// after a symlinked GIT_DIR leaves the link's target, not its parent.
		wt := c.get("core.worktree")
		r.root = absFrom(gitDir, wt)
		if !filepath.IsAbs(wt) {
			if real, err := filepath.EvalSymlinks(gitDir + string(filepath.Separator) + wt); err == nil {
				r.root = real
			}
		}
	case c.bool("core.bare", false):
		return fmt.Errorf("open repository: GIT_DIR=%s is a bare repository; set GIT_WORK_TREE to the directory to commit: %w", gd, ErrNotRepo)
	default:
		r.root = dir
	}
	return nil
}

// absFrom resolves p against base unless it is absolute.
func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readGitFile reads a "gitdir: <path>" file, as found at the root of linked
// worktrees and submodules.
func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	line := strings.TrimSpace(string(b))
	target, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("read %s: no \"gitdir:\" line: %w", path, ErrNotRepo)
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("read %s: git dir %s is missing (a removed worktree? try `git worktree prune`): %w", path, target, ErrNotRepo)
	}
	return filepath.Clean(target), nil
}

// readCommonDir returns the directory shared by all worktrees: gitDir itself
// unless gitDir/commondir points elsewhere.
func readCommonDir(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("read commondir: %w", err)
	}
	dir := strings.TrimSpace(string(b))
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	return filepath.Clean(dir), nil
}

// Root returns the worktree root.
func (r *Repo) Root() string { return r.root }

// Head returns the full hash HEAD points to, or "" on an unborn branch.
func (r *Repo) Head() (string, error) {
	end, err := r.begin()
	if err != nil {
		return "", err
	}
	defer end()
	h, err := r.headHash()
	if err != nil {
		return "", err
	}
	if h.IsZero() {
		return "", nil
	}
	return h.String(), nil
}

func (r *Repo) headHash() (plumbing.Hash, error) {
	ref, err := r.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read HEAD: %w", err)
	}
	return ref.Hash(), nil
}

// Short abbreviates a hash to the 7 characters git shows by default.
func Short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}
