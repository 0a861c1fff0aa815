package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The differential suite: real git is the oracle. Every case builds two
// repositories by running the same steps, commits one with CommitAll and the
// other with `git add -A && git commit`, and compares what a user (or a
// fsck-checking remote) would see.

// diffCase is one differential case: the same setup and change applied to two identical repos; one is committed by
// gitcommit.CommitAll, the other by `git add -A && git commit`; then ls-tree -r, fsck --strict, status --porcelain,
// author/committer and parents are compared.
type diffCase struct {
	name    string
	setup   func(t *testing.T, h *diffRepo) // initial state, committed by git in both copies before the change (may be nil)
	change  func(t *testing.T, h *diffRepo) // the change under test, applied identically to both copies
	env     map[string]string               // extra env for both git and gitcommit (HOME is a per-case temp dir with a .gitconfig)
	refused string                          // non-empty: gitcommit (Open/Preflight/CommitAll) must refuse with an error containing this; git side not compared

	// gitRefuses, when non-empty, says `git add -A` itself fails with an
	// error containing it; gitcommit must then refuse too (refused), since
	// there is no oracle commit to agree with.
	gitRefuses string
	// home holds extra files for the per-case HOME (path → content), written
	// before setup; ".gitconfig" replaces the default one.
	home map[string]string
	// workdir, when set, is where both sides commit after the change (a
	// linked worktree, a subdirectory); default Dir.
	workdir func(h *diffRepo) string
	// commitEnv, when set, is extra environment for the commit and the
	// comparisons only (GIT_DIR, GIT_WORK_TREE naming each side's paths).
	commitEnv func(h *diffRepo) map[string]string
	// check, when set, compares anything else after both commits.
	check func(t *testing.T, d, g *diffRepo)
	// batched: check compares tree, index and status path by path (a
	// batch's cases), so the whole-repository listings are not printed.
	batched bool
	// msg is the commit message both sides commit with; "" is "change".
	msg string
	// opts are more options for Open on the debussy side (withoutGit).
	opts []Option
}

// diffRepo is one of the two copies of a case. Helpers fail the test on error.
type diffRepo struct {
	Dir  string // worktree root
	Home string // the case's HOME, shared by both copies
	Side string // "debussy" or "git": for the rare step that must differ (none should)

	// sameCommit: both sides' HEAD commits are byte for byte equal, so
	// their trees are too (set once both have committed).
	sameCommit bool

	t   *testing.T
	env []string // full environment for git subprocesses
}

// diffDate pins every commit's timestamps so equal content gives equal hashes.
var diffDate = time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("", 2*3600))

const diffDateRaw = "1741057567 +0200"

// defaultDiffGitconfig identifies both sides; cases may replace it.
const defaultDiffGitconfig = "[user]\n\tname = Diff User\n\temail = diff@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n"

func (h *diffRepo) path(p string) string { return filepath.Join(h.Dir, filepath.FromSlash(p)) }

// Write writes content to path (relative to Dir, slash-separated), creating
// parent directories.
func (h *diffRepo) Write(path, content string) {
	h.t.Helper()
	p := h.path(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// Mkdir creates a directory (and its parents).
func (h *diffRepo) Mkdir(path string) {
	h.t.Helper()
	if err := os.MkdirAll(h.path(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
}

// Symlink creates path as a symlink to target (target is used verbatim).
func (h *diffRepo) Symlink(target, path string) {
	h.t.Helper()
	p := h.path(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		h.t.Fatal(err)
	}
}

// Remove removes path and anything below it.
func (h *diffRepo) Remove(path string) {
	h.t.Helper()
	if err := os.RemoveAll(h.path(path)); err != nil {
		h.t.Fatal(err)
	}
}

// Chmod changes path's mode.
func (h *diffRepo) Chmod(path string, mode os.FileMode) {
	h.t.Helper()
	if err := os.Chmod(h.path(path), mode); err != nil {
		h.t.Fatal(err)
	}
}

// Rename moves from to to, creating to's parent.
func (h *diffRepo) Rename(from, to string) {
	h.t.Helper()
	if err := os.MkdirAll(filepath.Dir(h.path(to)), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(h.path(from), h.path(to)); err != nil {
		h.t.Fatal(err)
	}
}

// Git runs git in Dir with the case's environment and returns its trimmed
// stdout; a failure fails the test.
func (h *diffRepo) Git(args ...string) string {
	h.t.Helper()
	out, err := h.GitErr(args...)
	if err != nil {
		h.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// GitIn is Git in a directory relative to Dir (a nested repository).
func (h *diffRepo) GitIn(dir string, args ...string) string {
	h.t.Helper()
	out, err := h.gitIn(h.path(dir), "", args...)
	if err != nil {
		h.t.Fatalf("git -C %s %s: %v", dir, strings.Join(args, " "), err)
	}
	return out
}

// GitErr is Git returning the error (with git's stderr) instead of failing.
func (h *diffRepo) GitErr(args ...string) (string, error) {
	return h.gitIn(h.Dir, "", args...)
}

func (h *diffRepo) gitIn(dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = h.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.Join(err, errors.New(strings.TrimSpace(stderr.String())))
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// diffEnv is the environment both sides see: the process's own minus
// anything that would point git elsewhere, then the case's.
func diffEnv(home string, extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "EMAIL" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE="+diffDateRaw,
		"GIT_COMMITTER_DATE="+diffDateRaw,
	)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// preflighter is satisfied by a Repo with a Preflight check; the suite calls
// it when present, so a refused case may be refused at any of the three steps.
type preflighter interface{ Preflight() error }

// runDiffCases runs each case as a parallel subtest.
func runDiffCases(t *testing.T, cases []diffCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runDiffCase(t, tc)
		})
	}
}

func runDiffCase(t *testing.T, tc diffCase) {
	home := t.TempDir()
	files := map[string]string{".gitconfig": defaultDiffGitconfig}
	for k, v := range tc.home {
		files[k] = v
	}
	for name, content := range files {
		p := filepath.Join(home, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	env := diffEnv(home, tc.env)
	root := t.TempDir()
	sides := map[string]*diffRepo{}
	for _, side := range []string{"debussy", "git"} {
		h := &diffRepo{Dir: filepath.Join(root, side), Home: home, Side: side, t: t, env: env}
		if _, err := h.gitIn(root, "", "init", "-q", h.Dir); err != nil {
			t.Fatalf("git init: %v", err)
		}
		if tc.setup != nil {
			tc.setup(t, h)
			h.Git("add", "-A")
			h.Git("commit", "-q", "--allow-empty", "--no-verify", "-m", "setup")
		}
		if tc.change != nil {
			tc.change(t, h)
		}
		if tc.commitEnv != nil {
			h.env = diffEnv(home, mergeEnv(tc.env, tc.commitEnv(h)))
		}
		if tc.workdir != nil {
			h.Dir = tc.workdir(h)
		}
		sides[side] = h
	}
	d, g := sides["debussy"], sides["git"]
	msg := tc.msg
	if msg == "" {
		msg = "change"
	}

	// The oracle first: what git makes of the same tree.
	gitErr := func() error {
		if _, err := g.GitErr("add", "-A"); err != nil {
			return err
		}
		_, err := g.GitErr("commit", "-q", "-m", msg)
		return err
	}()
	gitNothing := false
	if gitErr != nil {
		switch {
		case tc.gitRefuses != "" && strings.Contains(gitErr.Error(), tc.gitRefuses):
		case tc.refused != "":
			// git's outcome is not compared for a refused case.
		default:
			// `git commit` with nothing to commit exits 1 and says nothing
			// on stderr (a pre-commit hook may still have staged a file):
			// CommitAll must say ErrNothingToCommit.
			if strings.TrimSpace(gitErr.Error()) != "exit status 1" {
				t.Fatalf("oracle git add -A && git commit failed: %v", gitErr)
			}
			gitNothing = true
		}
	} else if tc.gitRefuses != "" {
		t.Errorf("git add -A succeeded; the case says it fails with %q", tc.gitRefuses)
	}

	err := func() error {
		r, err := Open(d.Dir, append([]Option{WithEnv(d.env), WithClock(func() time.Time { return diffDate })}, tc.opts...)...)
		if err != nil {
			return err
		}
		if p, ok := any(r).(preflighter); ok {
			if err := p.Preflight(); err != nil {
				return err
			}
		}
		c, err := r.CommitAll(context.Background(), msg)
		if err != nil {
			return err
		}
		if head := d.Git("rev-parse", "HEAD"); head != c.Hash {
			t.Errorf("HEAD = %s, CommitAll returned %s", head, c.Hash)
		}
		return nil
	}()

	if tc.refused != "" {
		if err == nil || !strings.Contains(err.Error(), tc.refused) {
			t.Fatalf("gitcommit: err = %v, want a refusal containing %q", err, tc.refused)
		}
		return
	}
	if tc.gitRefuses != "" {
		t.Fatalf("case sets gitRefuses without refused: gitcommit returned %v", err)
	}
	switch {
	case gitNothing && !errors.Is(err, ErrNothingToCommit):
		t.Fatalf("git found nothing to commit; CommitAll: %v", err)
	case !gitNothing && err != nil:
		t.Fatalf("CommitAll: %v", err)
	}

	compare := func(what string, args ...string) bool {
		t.Helper()
		got, gerr := d.GitErr(args...)
		want, werr := g.GitErr(args...)
		if (gerr != nil) != (werr != nil) || got != want {
			t.Errorf("%s differs:\n--- debussy (err %v)\n%s\n--- git (err %v)\n%s", what, gerr, got, werr, want)
			return false
		}
		return true
	}
	if out, err := d.GitErr("fsck", "--strict", "--no-progress", "--no-dangling"); err != nil || out != "" {
		t.Errorf("git fsck --strict after CommitAll: %v\n%s", err, out)
	}
	// Equal commit objects name the same tree, so the tree's listing is
	// only needed to show how two commits differ (two git processes fewer
	// a case, of the ~17 each costs).
	same := compare("commit (cat-file), i.e. author, committer, parents, message", "cat-file", "-p", "HEAD")
	d.sameCommit, g.sameCommit = same, same
	if !tc.batched {
		if !same {
			compare("ls-tree -r", "ls-tree", "-r", "-t", "--full-tree", "HEAD")
		}
		compare("index (ls-files -s -v)", "ls-files", "-s", "-v")
		// Without optional locks: status refreshing one side's index
		// would run its post-index-change hook once more.
		compare("status --porcelain", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all", "--ignored")
	}
	compare("commit count", "rev-list", "--count", "--all")
	if tc.check != nil {
		tc.check(t, d, g)
	}
}

// mergeEnv is a copy of a with b's variables added (b wins).
func mergeEnv(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

func TestDifferential(t *testing.T) {
	runDiffCases(t, everydayCases)
}

// base tree shared by many cases.
func diffBase(t *testing.T, h *diffRepo) {
	h.Write("README.md", "# demo\n")
	h.Write("keep.txt", "keep\n")
	h.Write("gone.txt", "to be deleted\n")
	h.Write("src/main.go", "package main\n")
	h.Write("src/util/util.go", "package util\n")
	h.Write("app/a.go", "package app\n")
	h.Write("tool.sh", "#!/bin/sh\n")
	h.Chmod("tool.sh", 0o755)
}

// commitNested makes dir a repository with one commit holding files.
func commitNested(h *diffRepo, dir string, files map[string]string) {
	h.t.Helper()
	h.GitIn(".", "init", "-q", dir)
	for name, content := range files {
		h.Write(dir+"/"+name, content)
	}
	h.GitIn(dir, "add", "-A")
	h.GitIn(dir, "commit", "-q", "-m", "nested")
}

var everydayCases = []diffCase{
	{
		name:  "new, modified and deleted files",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("keep.txt", "changed\n")
			h.Write("new.txt", "new\n")
			h.Write("deep/a/b/c/d.go", "package d\n")
			h.Remove("gone.txt")
		},
	},
	{
		name: "first commit on an unborn branch",
		change: func(t *testing.T, h *diffRepo) {
			h.Write("a.txt", "a\n")
			h.Write("dir/b.txt", "b\n")
		},
	},
	{
		name:  "nothing to commit",
		setup: diffBase,
	},
	{
		name:  "rename and move between directories",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Rename("keep.txt", "kept.txt")
			h.Rename("src/util", "lib/util")
		},
	},
	{
		name:  "modes and symlinks",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Chmod("tool.sh", 0o644)
			h.Chmod("keep.txt", 0o755)
			h.Symlink("src/main.go", "link-to-main")
			h.Symlink("src", "link-to-src")
			h.Symlink("nowhere", "dangling")
			h.Remove("README.md")
			h.Symlink("keep.txt", "README.md")
		},
	},
	{
		name:  "unicode and odd names",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("with space/é ü.txt", "x")
			h.Write("日本.md", "y")
			h.Write("a-b", "1")
			h.Write("a/b", "2")
			h.Write("a.b", "3")
			h.Write("tab\tname", "4")
			h.Write("quote\"d", "5")
		},
	},
	{
		name:  "file becomes a directory and directory becomes a file",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Remove("keep.txt")
			h.Write("keep.txt/inner.txt", "inner")
			h.Remove("src/util")
			h.Write("src/util", "now a file")
		},
	},
	{
		name:  "symlinked parent directory",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Rename("src", "real-src")
			h.Symlink("real-src", "src")
		},
	},
	{
		name:  "gitignore basics and tracked files under ignored dirs",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "*.log\n!important.log\nbuild/\n/root-only.txt\nsrc/\n")
			h.Write("a.log", "x")
			h.Write("important.log", "kept")
			h.Write("build/out.bin", "x")
			h.Write("root-only.txt", "x")
			h.Write("app/root-only.txt", "x")
			h.Write("src/main.go", "package main // edited\n")
			h.Write("src/new.go", "ignored")
		},
	},
	{
		name:  "state dir never committed",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			// The oracle ignores it the way debussy's own rule does.
			h.Write(".git/info/exclude", ".debussy/\n")
			h.Write(".debussy/state.json", "{}")
			h.Write("sub/.debussy/x.json", "{}")
			h.Write("work.go", "package work\n")
		},
	},
	{
		name:  "intent-to-add, staged and unstaged together",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("ita.txt", "intent")
			h.Write("staged.txt", "staged")
			h.Write("keep.txt", "v2\n")
			h.Git("add", "-N", "ita.txt")
			h.Git("add", "staged.txt", "keep.txt")
			h.Write("keep.txt", "v3\n")
			h.Git("rm", "-q", "--cached", "gone.txt")
		},
	},
	{
		name:  "nested repository with commits becomes a gitlink",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			commitNested(h, "vendor/lib", map[string]string{"lib.go": "package lib\n"})
		},
	},
	{
		name: "submodule moved to a new commit",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			commitNested(h, "mod", map[string]string{"m.go": "package m\n"})
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("mod/m.go", "package m // v2\n")
			h.GitIn("mod", "commit", "-q", "-am", "v2")
			h.Write("mod/untracked.go", "x")
		},
	},
	{
		name: "removed submodule directory",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			commitNested(h, "mod", map[string]string{"m.go": "package m\n"})
		},
		change: func(t *testing.T, h *diffRepo) { h.Remove("mod") },
	},
	{
		name:  "deleted everything",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			for _, p := range []string{"README.md", "keep.txt", "gone.txt", "src", "app", "tool.sh"} {
				h.Remove(p)
			}
		},
	},
	{
		name:  "index version 4",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--index-version", "4")
			h.Write("src/main.go", "package main // v4\n")
			h.Write("new/x.txt", "x")
		},
	},
	{
		name:  "core.fileMode false keeps the recorded bit",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.fileMode", "false")
			h.Chmod("tool.sh", 0o644)
			h.Chmod("keep.txt", 0o755)
			h.Write("new.sh", "#!/bin/sh\n")
			h.Chmod("new.sh", 0o755)
		},
	},
	{
		name:  "linked worktree with info/exclude in the common dir",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("worktree", "add", "-q", "-b", "feature", h.Dir+"-wt")
			h.Write(".git/info/exclude", "*.secret\n")
			wt := &diffRepo{Dir: h.Dir + "-wt", t: t}
			wt.Write("feature.go", "package f\n")
			wt.Write("src/main.go", "package main // wt\n")
			wt.Write("key.secret", "k")
		},
		workdir: func(h *diffRepo) string { return h.Dir + "-wt" },
	},
	{
		name:  "commit from a subdirectory",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("keep.txt", "changed\n")
			h.Write("src/new.go", "package main\n")
		},
		workdir: func(h *diffRepo) string { return filepath.Join(h.Dir, "src") },
	},
}

// issueCases are the disagreements found by the differential run of issue
// 13 (items owned by the correctness work).
var issueCases = []diffCase{
	{
		name:  "nested repository inside a tracked directory: files, not a second entry",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			commitNested(h, "app", map[string]string{"inner.go": "package app\n"})
			h.Write("app/new.go", "package app\n")
		},
	},
	{
		name:  "nested repository in a tracked directory whose tracked files are gone",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Remove("app/a.go")
			commitNested(h, "app", map[string]string{"inner.go": "package app\n"})
		},
	},
	{
		name:  "allowlist gitignore",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "*\n!*/\n!*.go\n!.gitignore\n")
			h.Write("config/prod.env", "SECRET=1\n")
			h.Write("node_modules/x/index.js", "x")
			h.Write("cmd/tool/main.go", "package main\n")
			h.Write("top.txt", "x")
		},
	},
	{
		name:  "ignore patterns go-git got wrong",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "src/**/\nfoo/**/\nab[!c]\nfoo//bar\n")
			h.Write("src/x/y.go", "x")
			h.Write("src/z.go", "x")
			h.Write("foo/a/b", "x")
			h.Write("foo/c", "x")
			h.Write("foo/bar", "x")
			h.Write("abd", "x")
			h.Write("abc", "x")
			h.Write("sub/abd", "x")
		},
	},
	{
		name:  "slash-star-star ignores everything below the root",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("sub/.gitignore", "/**\n!keep.txt\n")
			h.Write("sub/a.txt", "x")
			h.Write("sub/keep.txt", "x")
			h.Write("sub/deeper/keep.txt", "x")
		},
	},
	{
		name:  "symlinked .gitignore is not followed",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("rules.txt", "*.secret\n")
			h.Symlink("rules.txt", ".gitignore")
			h.Write("a.secret", "s")
		},
	},
	{
		name:  "directory with an empty .git directory is committed",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Mkdir("e/.git")
			h.Write("e/f.txt", "f")
		},
	},
	{
		name:  "directory with a .git file that is not a gitdir link is committed",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("e/.git", "hello\n")
			h.Write("e/f.txt", "f")
		},
	},
	{
		name:  "directory with a .git file pointing nowhere is committed",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("e/.git", "gitdir: /nonexistent/x\n")
			h.Write("e/f.txt", "f")
		},
	},
	{
		name:  "nested git init without commits is refused, as git add -A does",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.GitIn(".", "init", "-q", "fresh")
			h.Write("fresh/f.go", "x")
			h.Write("other.txt", "o")
		},
		gitRefuses: "does not have a commit checked out",
		refused:    "does not have a commit checked out",
	},
	{
		name:  "ignored nested git init without commits is fine",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.GitIn(".", "init", "-q", "fresh")
			h.Write(".gitignore", "fresh/\n")
		},
	},
	{
		name:       ".Git directory is refused",
		setup:      diffBase,
		change:     func(t *testing.T, h *diffRepo) { h.Write(".Git/config", "x"); h.Write("ok.txt", "o") },
		gitRefuses: "invalid path",
		refused:    "invalid path",
	},
	{
		name:       ".git. directory is refused",
		setup:      diffBase,
		change:     func(t *testing.T, h *diffRepo) { h.Write("sub/.git./x", "x") },
		gitRefuses: "invalid path",
		refused:    "invalid path",
	},
	{
		name:       "symlinked .gitmodules is refused",
		setup:      diffBase,
		change:     func(t *testing.T, h *diffRepo) { h.Symlink("keep.txt", ".gitmodules") },
		gitRefuses: "invalid path",
		refused:    "invalid path",
	},
	{
		name:   "ignored .Git directory is fine",
		setup:  diffBase,
		change: func(t *testing.T, h *diffRepo) { h.Write(".Git/config", "x"); h.Write(".gitignore", ".Git/\n") },
	},
	{
		name:  "global config with a UTF-8 BOM and a legacy [remote.origin] section",
		setup: diffBase,
		home: map[string]string{
			".gitconfig": "\xef\xbb\xbf[user]\n\tname = Bom User\n\temail = bom@example.com\n[remote.origin]\n\turl = x\n" +
				"[core]\n\texcludesFile = ~/ignores\n[init]\n\tdefaultBranch = main\n",
			"ignores": ".env\n",
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".env", "SECRET=1\n")
			h.Write("sub/.env", "SECRET=2\n")
			h.Write("ok.txt", "ok\n")
		},
	},
	{
		name:  "config quoting, escapes, continuation lines and comments",
		setup: diffBase,
		home: map[string]string{
			".gitconfig": "; comment\n[user] # trailing\n\tname = \"Quoted \\\"Q\\\" \" Name  ; comment\n\temail = q@example.com\n" +
				"[core]\n\texcludesFile = ~/ign\\\n\tores\n[init]\n\tdefaultBranch = main\n",
			"ignores": "*.secret\n",
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("a.secret", "s")
			h.Write("ok.txt", "ok\n")
		},
	},
	{
		name:  "includeIf onbranch and gitdir",
		setup: diffBase,
		home: map[string]string{
			".gitconfig": defaultDiffGitconfig + "[includeIf \"onbranch:ma*\"]\n\tpath = branch.inc\n" +
				"[includeIf \"gitdir:**/debussy/\"]\n\tpath = side.inc\n[includeIf \"gitdir:**/git/\"]\n\tpath = side.inc\n",
			"branch.inc": "[user]\n\tname = Branch Person\n",
			"side.inc":   "[user]\n\temail = side@example.com\n",
		},
		change: func(t *testing.T, h *diffRepo) { h.Write("x.txt", "x") },
	},
	{
		name:   "GIT_AUTHOR_DATE and GIT_COMMITTER_DATE in other formats",
		setup:  diffBase,
		env:    map[string]string{"GIT_AUTHOR_DATE": "2024-02-03T04:05:06+0130", "GIT_COMMITTER_DATE": "Sat, 3 Feb 2024 10:11:12 -0800"},
		change: func(t *testing.T, h *diffRepo) { h.Write("x.txt", "x") },
	},
	{
		name:  "unparsable repository config is refused naming file and line",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("x.txt", "x")
			appendFile(t, h.path(".git/config"), "[core]\n\tbad key = 1\n")
		},
		gitRefuses: "bad config line",
		refused:    "bad config line",
	},
	{
		name:  "assume-unchanged and skip-worktree entries are kept as they are",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--assume-unchanged", "keep.txt")
			h.Git("update-index", "--skip-worktree", "README.md")
			h.Write("keep.txt", "local secret\n")
			h.Write("README.md", "local edit\n")
			h.Write("new.txt", "n")
		},
	},
	{
		name:  "sparse checkout (extensions.worktreeConfig)",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("sparse-checkout", "set", "src")
			h.Write("src/new.go", "package main\n")
		},
	},
	{
		name:  "extensions.preciousObjects",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.repositoryFormatVersion", "1")
			h.Git("config", "extensions.preciousObjects", "true")
			h.Write("x.txt", "x")
		},
	},
	{
		name:  "clone --shared reads objects through alternates",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			// Move the history into a clone's alternates: the repository
			// itself keeps none of the objects HEAD needs.
			orig := h.Dir + "-orig"
			must(t, os.Rename(h.Dir, orig))
			h.gitIn(filepath.Dir(h.Dir), "", "clone", "-q", "--shared", orig, h.Dir)
			h.Write("src/main.go", "package main // edited\n")
			h.Write("new/x.txt", "x")
		},
	},
	{
		name:  "objectFormat sha256 is refused with the reason",
		setup: nil,
		change: func(t *testing.T, h *diffRepo) {
			h.Remove(".git")
			h.Git("init", "-q", "--object-format=sha256")
			h.Write("x.txt", "x")
		},
		refused: "extensions.objectFormat=sha256",
	},
	{
		name:  "a split index is git's to read",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--split-index")
			h.Write("keep.txt", "changed")
		},
	},
	{
		name: "large files are streamed into objects",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Write("big/same.bin", strings.Repeat("0123456789abcdef", 1<<17))
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("big/new.bin", strings.Repeat("fedcba9876543210", 3<<16)+"tail")
			h.Write("big/same.bin", strings.Repeat("0123456789abcdef", 1<<17)) // rewritten, same content
			h.Chmod("big/same.bin", 0o755)
		},
	},
	{
		name:  "committing from inside a directory with an empty .git directory",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Mkdir("e/.git")
			h.Write("e/f.txt", "f")
		},
		workdir: func(h *diffRepo) string { return filepath.Join(h.Dir, "e") },
	},
}

func TestDifferentialIssue13(t *testing.T) {
	runDiffCases(t, issueCases)
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(content)
	must(t, errors.Join(err, f.Close()))
}
