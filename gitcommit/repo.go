// Package gitcommit commits an agent's work as the user's own
// `git add -A && git commit` would, by construction.
//
// Where git is installed (Mode "git"), git makes every commit: a private
// index (the index's lock file) is turned into HEAD's tree — never the
// user's own staging — and `git add -A` stages the worktree into it, with
// what debussy leaves out (the user's untracked files at the start,
// .worktreeinclude copies, .debussy/) hidden from it by placeholder
// entries and taken out again by exact path (stagegit.go, hide.go); then
// `git commit` commits it, so ignore rules, attributes, filters, hooks,
// the message's cleanup and encoding, identity, signing and the reflog
// are git's own. A reference-transaction hook of debussy's hands the new
// commit to Written before the branch moves (commitshim.go, hookshim.go).
// Every git command goes through internal/gitrun and dies with ctx.
//
// Without git (Mode "go-git"), go-git stages and writes the commit, but
// only in a repository where its answer is provably git's; anywhere else
// Preflight and CommitAll refuse, naming the feature and "install git"
// (gitless.go). go-git stays the reader where reading is all that is
// needed: history, the ledger, trees, branches.
package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
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
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/debussy-dev/debussy/internal/gitrun"
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

// stateDir is debussy's own directory, never committed at any depth.
const stateDir = ".debussy"

// Repo is a git worktree opened for committing. Its methods serialise on an
// internal mutex, so one Repo may be shared between goroutines.
type Repo struct {
	root      string // worktree root
	gitDir    string // per-worktree git dir (index, HEAD, logs/HEAD)
	commonDir string // shared git dir (objects, refs, config)

	// Reopened by each operation (see reopen); guarded by mu.
	repo  *git.Repository
	store storage.Storer

	shared int // core.sharedRepository (parseSharedPerm)

	// gitBin is the git that stages and is asked; "" stages with go-git.
	gitBin string
	noGit  bool // withoutGit

	log    *slog.Logger
	now    func() time.Time
	clock  bool // WithClock was given: commits are dated by it
	getenv func(string) string
	// env is the environment getenv reads (WithEnv); osEnv says getenv is
	// os.Getenv's, so os.Environ() is it.
	env   []string
	osEnv bool
	// objectsDir is where objects are written (GIT_OBJECT_DIRECTORY, else
	// the common dir's objects/); altObjects are
	// GIT_ALTERNATE_OBJECT_DIRECTORIES (objdirs.go).
	objectsDir string
	altObjects []string
	// indexFile is the index: GIT_INDEX_FILE (relative to the worktree
	// root, as git reads it) or the git dir's.
	indexFile string

	// fps are the user files' fingerprints with the stat data they were
	// taken with (fingerprint); guarded by mu.
	fps fingerprintCache
	// watch says which user files may have changed since the last look
	// (watch_linux.go); noWatch: it could not be set up, every look is
	// whole. Both guarded by mu.
	watch   *userWatch
	noWatch bool
	// dirs caches directory listings (hide.go's listing); guarded by mu.
	dirs map[string]dirListing
	// facts, while set, records what inTree and listing answer; user and
	// hidden keep candidates' and placeholders' answers with the facts
	// they rest on (hidememo.go). Guarded by mu.
	facts  *hideFacts
	user   hideMemo[[]string]
	hidden hideMemo[[]string]
	// rootMemo is how the root's hidden paths were last hidden
	// (rootnames.go).
	rootMemo    rootMemo
	ignoredMemo ignoredMemo
	// kept is the last commit's staged index (keptindex.go); guarded by
	// mu.
	kept      keptIndex
	keptUsed  int // how many commits started from kept (for tests)
	rootNamed int // how many git add -A were given the root's names (for tests)
	// trees caches tree objects' entries by hash (treeEntries); guarded
	// by mu.
	trees map[plumbing.Hash][]object.TreeEntry
	// madeUp is the identity git commit runs with where git knows none
	// (madeUpIdentity), once git has refused; guarded by mu.
	madeUp []string

	mu sync.Mutex
}

// Option configures Open.
type Option func(*Repo)

// WithLogger sets where warnings (an unwritable reflog, a failed
// post-commit hook) go. The default discards them.
func WithLogger(l *slog.Logger) Option { return func(r *Repo) { r.log = l } }

// WithClock sets the clock commits are dated by, where GIT_AUTHOR_DATE and
// GIT_COMMITTER_DATE do not say otherwise.
func WithClock(now func() time.Time) Option { return func(r *Repo) { r.now, r.clock = now, true } }

// WithGetenv sets how HOME, XDG_CONFIG_HOME, GIT_AUTHOR_* and the other
// variables git honours are looked up. The default is os.Getenv.
func WithGetenv(getenv func(string) string) Option {
	return func(r *Repo) { r.getenv, r.osEnv = getenv, false }
}

// WithEnv sets the environment (KEY=value, the last one wins) variables are
// looked up in, as WithGetenv, and the one git runs with; without either,
// the process's own.
func WithEnv(env []string) Option {
	return func(r *Repo) { r.getenv, r.env, r.osEnv = getenvOf(env), env, false }
}

// withoutGit stages with go-git as where git is not installed.
func withoutGit() Option { return func(r *Repo) { r.noGit = true } }

// Mode says who makes this repository's commits: "git" where git is
// installed, "go-git" where it is not (and then only where go-git's answer
// is git's: Preflight refuses the rest).
func (r *Repo) Mode() string {
	if r.gitBin != "" {
		return "git"
	}
	return "go-git"
}

// Open finds the repository whose worktree contains dir, as git finds it
// (see OpenContext).
func Open(dir string, opts ...Option) (*Repo, error) {
	return OpenContext(context.Background(), dir, opts...)
}

// OpenContext finds the repository whose worktree contains dir. Where git
// is installed it is git's answer (`git rev-parse` from dir: GIT_DIR,
// GIT_WORK_TREE, core.worktree, GIT_CEILING_DIRECTORIES, safe.directory);
// else the nearest ancestor holding a .git directory or file.
func OpenContext(ctx context.Context, dir string, opts ...Option) (*Repo, error) {
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
	if !r.noGit {
		r.gitBin, _ = exec.LookPath("git")
	}
	if r.gitBin != "" {
		err = r.locateByGit(ctx, abs)
	} else if r.getenv("GIT_DIR") != "" {
		return nil, fmt.Errorf("open repository: GIT_DIR is set, and only git resolves it: install git or unset GIT_DIR: %w", ErrNoGit)
	} else {
		// Without git: discovery alone (core.worktree is git's to
		// honour, a documented difference of go-git mode).
		r.root, r.gitDir, r.commonDir, err = discover(abs)
		if err == nil && r.getenv("GIT_WORK_TREE") != "" {
			r.root = absFrom(abs, r.getenv("GIT_WORK_TREE"))
		}
	}
	if err != nil {
		return nil, err
	}
	r.objectEnv(abs)
	r.indexFile = filepath.Join(r.gitDir, "index")
	if f := r.getenv("GIT_INDEX_FILE"); f != "" {
		r.indexFile = absFrom(r.root, f)
	}
	if err := r.reopen(); err != nil {
		return nil, err
	}
	return r, nil
}

// locateByGit is `git rev-parse` run from dir as the user would run git
// there: its refusal (no repository, a bare one, dubious ownership) is
// debussy's.
func (r *Repo) locateByGit(ctx context.Context, dir string) error {
	// The locating variables as debussy sees them (OpenLinked hides the
	// main worktree's).
	env := withoutRepoEnv(r.environ())
	for _, k := range repoEnv {
		if v := r.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	run := gitrun.Runner{Git: r.gitBin, Dir: dir, Env: env}
	stdout, err := run.Run(ctx, gitrun.Call{}, "rev-parse", "--show-object-format", "--absolute-git-dir", "--git-common-dir", "--show-toplevel")
	if err != nil {
		var ge *GitError
		if !errors.As(err, &ge) {
			return fmt.Errorf("open repository: %w", err)
		}
		msg := strings.TrimSpace(ge.Stderr)
		if strings.Contains(msg, "not a git repository") || strings.Contains(msg, "must be run in a work tree") {
			return fmt.Errorf("open repository: %s is not inside a git worktree (run `git init` there first): %s: %w", dir, msg, ErrNotRepo)
		}
		return fmt.Errorf("open repository %s: git: %s", dir, msg)
	}
	lines := strings.Split(strings.TrimSuffix(string(stdout), "\n"), "\n")
	if len(lines) != 4 || lines[3] == "" {
		return fmt.Errorf("open repository: %s: git finds no worktree: %w", dir, ErrNotRepo)
	}
	if lines[0] != "sha1" {
		return &UnsupportedError{Feature: "extensions.objectFormat=" + lines[0], Detail: dir,
			WayOut: "debussy's commits (go-git v5) only write SHA-1 repositories; use a SHA-1 clone of the project"}
	}
	r.gitDir, r.commonDir, r.root = lines[1], filepath.Clean(absFrom(dir, lines[2])), lines[3]
	return nil
}

// reopen gives each operation a fresh go-git repository: go-git loads the
// pack indexes once, and would miss objects `git gc --auto` repacked. The
// storage is built here, not by git.PlainOpen, which refuses repository
// extensions and resolves alternates inside the .git directory's chroot.
func (r *Repo) reopen() error {
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
// only to check the format and extensions, which git itself checks.
type formatChecked struct{ storage.Storer }

func (formatChecked) Config() (*config.Config, error) { return config.NewConfig(), nil }

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
// resolves the per-worktree and common git directories (without git).
func discover(dir string) (root, gitDir, commonDir string, err error) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, statErr := os.Stat(dotgit)
		switch {
		case statErr == nil && fi.IsDir() && isGitDirectory(dotgit):
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

// isGitDirectory says dir looks like a git dir: HEAD, objects/ and refs/.
func isGitDirectory(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			if p == "objects" {
				if _, err := os.Stat(filepath.Join(dir, "commondir")); err == nil {
					continue
				}
			}
			return false
		}
	}
	return true
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
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
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
func Short(hash string) string { return hash[:min(len(hash), 7)] }
