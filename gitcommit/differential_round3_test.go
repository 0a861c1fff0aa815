package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round three's classes (issue 25), each held to `git add -A && git
// commit` with debussy's own staging (git's verdict off): what git's
// verdict would otherwise have had to replace.

type round3Case struct {
	name  string
	setup func(t *testing.T, dir string) // after the first commit: the change to commit
	// env adds variables for both sides; refused, when set, is the error
	// both must end in (git's stderr, CommitAll's error).
	env     []string
	envOf   func(dir string) []string // more variables, once set up
	refused string
	// verdict: git's verdict on, as where git is installed (the class is
	// left to git); Preflight runs too.
	verdict bool
}

func runRound3(t *testing.T, tc round3Case) {
	t.Helper()
	home := isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "one\n"})
	tc.setup(t, dir)
	env := append(diffEnv(home, nil), tc.env...)
	if tc.envOf != nil {
		env = append(env, tc.envOf(dir)...)
	}
	d := &diffRepo{Dir: dir, Side: "debussy", t: t, env: env}
	g := &diffRepo{Dir: copyTree(t, dir), Side: "git", t: t, env: env}
	_, gitErr := g.GitErr("add", "-A")
	if gitErr == nil {
		_, gitErr = g.GitErr("commit", "-q", "-m", "change")
	}

	opts := []Option{WithEnv(env), WithClock(func() time.Time { return diffDate })}
	r, err := Open(dir, opts...)
	if err == nil && tc.verdict {
		err = r.Preflight()
	}
	if err == nil {
		_, err = r.CommitAll(context.Background(), "change")
	}
	if tc.refused != "" {
		if gitErr == nil || !strings.Contains(gitErr.Error(), tc.refused) {
			t.Errorf("git: %v, want a refusal with %q", gitErr, tc.refused)
		}
		if err == nil || !strings.Contains(err.Error(), tc.refused) {
			t.Errorf("CommitAll: %v, want a refusal with %q", err, tc.refused)
		}
		return
	}
	if gitErr != nil {
		t.Fatalf("git add -A && git commit: %v", gitErr)
	}
	if err != nil {
		t.Fatalf("CommitAll: %v", err)
	}
	for _, args := range [][]string{
		{"ls-tree", "-r", "-t", "--full-tree", "HEAD"},
		{"ls-files", "-s", "-v"},
		{"cat-file", "-p", "HEAD"},
	} {
		mine, _ := d.GitErr(args...)
		theirs, _ := g.GitErr(args...)
		if mine != theirs {
			t.Errorf("%s differs:\n--- debussy\n%s\n--- git\n%s", strings.Join(args, " "), mine, theirs)
		}
	}
}

func TestDifferentialRound3(t *testing.T) {
	marker := func(dir string) string { return filepath.Join(filepath.Dir(dir), "hook-ran") }
	hook := func(t *testing.T, dir string) {
		writeFiles(t, dir, map[string]string{".git/hooks/pre-commit": "#!/bin/sh\ntouch " + marker(dir) + "\nexit 1\n"})
		if err := os.Chmod(filepath.Join(dir, ".git/hooks/pre-commit"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []round3Case{
		{name: "core.hooksPath empty runs no hook", setup: func(t *testing.T, dir string) {
			hook(t, dir)
			runGit(t, dir, "config", "core.hooksPath", "")
			writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
		}},
		{name: "user.name set nowhere is the passwd name", env: []string{"EMAIL=me@example.com"}, setup: func(t *testing.T, dir string) {
			runGit(t, dir, "config", "--unset", "user.name")
			runGit(t, dir, "config", "--unset", "user.email")
			writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
		}},
		{name: "core.ignoreStat marks added entries assume-unchanged", setup: func(t *testing.T, dir string) {
			runGit(t, dir, "config", "core.ignoreStat", "true")
			writeFiles(t, dir, map[string]string{"a.txt": "two\n", "new.txt": "new\n"})
		}},
		{name: "skip-worktree .gitignore absent from disk", setup: func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"sub/.gitignore": "*.log\n", "sub/keep.txt": "k\n"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "ignore")
			runGit(t, dir, "update-index", "--skip-worktree", "sub/.gitignore")
			os.Remove(filepath.Join(dir, "sub/.gitignore"))
			writeFiles(t, dir, map[string]string{"sub/x.log": "noise\n", "sub/y.txt": "y\n"})
		}},
		{name: "skip-worktree .gitattributes absent from disk", setup: func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{".gitattributes": "*.txt text\n"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "attributes")
			runGit(t, dir, "update-index", "--skip-worktree", ".gitattributes")
			os.Remove(filepath.Join(dir, ".gitattributes"))
			writeFiles(t, dir, map[string]string{"crlf.txt": "a\r\nb\r\n"})
		}},
		{name: "merge conflicting on a submodule both sides moved", setup: func(t *testing.T, dir string) {
			sub, commit := subSource(t, dir)
			base := commit("base")
			runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			runGit(t, dir, "commit", "-q", "-m", "submodule")
			left := commit("left")
			runGit(t, sub, "checkout", "-q", "-b", "other", base)
			right := commit("right")
			runGit(t, dir, "checkout", "-q", "-b", "other")
			runGit(t, filepath.Join(dir, "sub"), "-c", "protocol.file.allow=always", "fetch", "-q", "origin", "other", "main")
			runGit(t, filepath.Join(dir, "sub"), "checkout", "-q", right)
			runGit(t, dir, "commit", "-q", "-am", "right")
			runGit(t, dir, "checkout", "-q", "main")
			runGit(t, filepath.Join(dir, "sub"), "checkout", "-q", left)
			runGit(t, dir, "commit", "-q", "-am", "left")
			if _, err := gitOutput(dir, "merge", "-q", "other"); err == nil {
				t.Fatal("the merge did not conflict")
			}
		}},
		{name: "merge conflicting on a submodule one side replaced with a file", setup: func(t *testing.T, dir string) {
			sub, commit := subSource(t, dir)
			commit("base")
			runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			runGit(t, dir, "commit", "-q", "-m", "submodule")
			moved := commit("moved")
			runGit(t, dir, "checkout", "-q", "-b", "other")
			runGit(t, dir, "rm", "-q", "-f", "sub")
			writeFiles(t, dir, map[string]string{"sub": "a file now\n"})
			runGit(t, dir, "add", "sub")
			runGit(t, dir, "commit", "-q", "-m", "file")
			runGit(t, dir, "checkout", "-q", "main")
			runGit(t, dir, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
			runGit(t, filepath.Join(dir, "sub"), "-c", "protocol.file.allow=always", "fetch", "-q", "origin")
			runGit(t, filepath.Join(dir, "sub"), "checkout", "-q", moved)
			runGit(t, dir, "commit", "-q", "-am", "moved")
			if _, err := gitOutput(dir, "merge", "-q", "other"); err == nil {
				t.Fatal("the merge did not conflict")
			}
		}},
		{name: "working-tree-encoding on an edited file is left to git", verdict: true, setup: func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{".gitattributes": "*.u16 working-tree-encoding=UTF-16LE\n"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "attributes")
			writeFiles(t, dir, map[string]string{"w.u16": "h\x00i\x00\n\x00"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "utf-16")
			writeFiles(t, dir, map[string]string{"w.u16": "h\x00o\x00\n\x00", "n.u16": "n\x00\n\x00"})
		}},
		{name: "working-tree-encoding on a racily clean file nobody edited", verdict: true, setup: func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{".gitattributes": "*.u16 working-tree-encoding=UTF-16LE\n", "w.u16": "h\x00i\x00\n\x00"})
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "utf-16")
			now := time.Now()
			os.Chtimes(filepath.Join(dir, ".git/index"), now, now)
			os.Chtimes(filepath.Join(dir, "w.u16"), now, now)
			writeFiles(t, dir, map[string]string{"b.txt": "b\n"})
		}},
		{name: "GIT_OBJECT_DIRECTORY holds the objects", envOf: func(dir string) []string {
			return []string{"GIT_OBJECT_DIRECTORY=" + filepath.Join(filepath.Dir(dir), "objs")}
		}, setup: func(t *testing.T, dir string) {
			moveObjects(t, dir, "objs")
			writeFiles(t, dir, map[string]string{"a.txt": "two\n", "b.txt": "b\n"})
		}},
		{name: "GIT_ALTERNATE_OBJECT_DIRECTORIES holds the objects", envOf: func(dir string) []string {
			return []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(filepath.Dir(dir), "store")}
		}, setup: func(t *testing.T, dir string) {
			moveObjects(t, dir, "store")
			writeFiles(t, dir, map[string]string{"a.txt": "two\n", "b.txt": "b\n"})
		}},
		{name: "a new file outside the sparse-checkout definition", refused: "outside of your sparse-checkout definition",
			setup: func(t *testing.T, dir string) {
				sparseAOnly(t, dir)
				writeFiles(t, dir, map[string]string{"a/x": "2\n", "c/z": "new\n"})
			}},
		{name: "a tracked file deleted outside the sparse-checkout definition stays in the index",
			setup: func(t *testing.T, dir string) {
				sparseAOnly(t, dir)
				runGit(t, dir, "update-index", "--no-skip-worktree", "b/y")
				writeFiles(t, dir, map[string]string{"a/x": "2\n"})
			}},
		{name: "a tracked file edited outside the sparse-checkout definition stays unstaged", setup: func(t *testing.T, dir string) {
			sparseAOnly(t, dir)
			runGit(t, dir, "update-index", "--no-skip-worktree", "b/y")
			writeFiles(t, dir, map[string]string{"a/x": "2\n", "b/y": "edited\n"})
		}},
	}
	if os.Geteuid() == 0 {
		foreign := func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Skip(err)
			}
		}
		cases = append(cases, round3Case{name: "a repository owned by another user is refused, its hooks unrun", refused: "dubious ownership",
			setup: func(t *testing.T, dir string) {
				hook(t, dir)
				foreign(t, dir)
				t.Cleanup(func() {
					if _, err := os.Stat(marker(dir)); err == nil {
						t.Error("the distrusted repository's pre-commit hook ran")
					}
				})
			}},
			round3Case{name: "a repository owned by another user, trusted by git -c safe.directory", setup: foreign,
				env: []string{"GIT_CONFIG_PARAMETERS='safe.directory'='*'"}},
			round3Case{name: "a repository owned by another user, trusted by GIT_CONFIG_COUNT", setup: foreign,
				env: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*"}},
			round3Case{name: "a repository owned by another user, trust reset by a bare git -c safe.directory", setup: foreign,
				refused: "dubious ownership", env: []string{"GIT_CONFIG_PARAMETERS='safe.directory'='*' 'safe.directory'"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRound3(t, tc) })
	}
}

// subSource creates, next to dir, a repository to add as a submodule, and
// a commit that records msg in it and returns its hash.
func subSource(t *testing.T, dir string) (sub string, commit func(msg string) string) {
	t.Helper()
	sub = filepath.Join(filepath.Dir(dir), "subsrc")
	runGit(t, filepath.Dir(dir), "init", "-q", "-b", "main", sub)
	return sub, func(msg string) string {
		writeFiles(t, sub, map[string]string{"s.txt": msg})
		runGit(t, sub, "add", "-A")
		runGit(t, sub, "-c", "user.name=S", "-c", "user.email=s@x", "commit", "-q", "-m", msg)
		return runGit(t, sub, "rev-parse", "HEAD")
	}
}

// moveObjects moves dir's object store next to it, as name, leaving an
// empty objects/ behind.
func moveObjects(t *testing.T, dir, name string) {
	t.Helper()
	objs := filepath.Join(dir, ".git", "objects")
	if err := os.Rename(objs, filepath.Join(filepath.Dir(dir), name)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"info", "pack"} {
		if err := os.MkdirAll(filepath.Join(objs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Round two's last difference, and its neighbours: a relative core.worktree
// (relative to the git dir) with GIT_DIR from the environment, relative
// too, from a subdirectory; a pre-commit hook there runs git, which must
// find the same repository.
var round3DiffCases = []diffCase{
	{
		name:  "GIT_DIR relative with a relative core.worktree, from a subdirectory",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("src/main.go", "package main // edited\n")
			h.Write("new.txt", "n")
			moveGitDir(h)
		},
		commitEnv: relativeMetaGitDir,
		workdir:   srcDir,
	},
	{
		name:  "GIT_DIR relative with a relative core.worktree, and a hook that stages",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("src/main.go", "package main // edited\n")
			h.Write("gen.txt", "generated\n")
			h.Write(".git/hooks/pre-commit", "#!/bin/sh\necho hooked >> gen.txt && git add gen.txt\n")
			h.Chmod(".git/hooks/pre-commit", 0o755)
			moveGitDir(h)
		},
		commitEnv: relativeMetaGitDir,
		workdir:   srcDir,
	},
	{
		name:  "GIT_DIR a symlink, core.worktree relative to its target",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("src/main.go", "package main // edited\n")
			h.Write("new.txt", "n")
			moveGitDir(h)
			links := filepath.Join(filepath.Dir(h.Dir), filepath.Base(h.Dir)+".links", "deep")
			if err := os.MkdirAll(links, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(h.Dir+".meta", filepath.Join(links, "gd")); err != nil {
				t.Fatal(err)
			}
		},
		commitEnv: func(h *diffRepo) map[string]string {
			return map[string]string{"GIT_DIR": filepath.Join(filepath.Dir(h.Dir), filepath.Base(h.Dir)+".links", "deep", "gd")}
		},
		workdir: srcDir,
	},
}

// moveGitDir moves .git next to the worktree, as <worktree>.meta, with a
// core.worktree relative to it.
func moveGitDir(h *diffRepo) {
	h.Git("config", "core.worktree", "../"+filepath.Base(h.Dir))
	h.Rename(".git", "../"+filepath.Base(h.Dir)+".meta")
}

// relativeMetaGitDir names moveGitDir's git dir relative to srcDir.
func relativeMetaGitDir(h *diffRepo) map[string]string {
	return map[string]string{"GIT_DIR": "../../" + filepath.Base(h.Dir) + ".meta"}
}

func srcDir(h *diffRepo) string { return filepath.Join(h.Dir, "src") }

func TestDifferentialRound3Repository(t *testing.T) {
	runDiffCases(t, round3DiffCases)
}

// sparseAOnly commits a/x and b/y and checks out only a/ (non-cone).
func sparseAOnly(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, dir, map[string]string{"a/x": "1\n", "b/y": "1\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "two dirs")
	runGit(t, dir, "sparse-checkout", "set", "--no-cone", "/a/")
}
