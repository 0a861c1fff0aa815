package gitcommit

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/debussy-dev/debussy/internal/golden"
)

// base is the tree every scenario starts from, committed by git.
var base = map[string]string{
	"README.md":        "# demo\n",
	"keep.txt":         "keep\n",
	"gone.txt":         "to be deleted\n",
	"src/main.go":      "package main\n",
	"src/util/util.go": "package util\n",
	"docs/guide.md":    "guide\n",
	"tool.sh":          "#!/bin/sh\necho hi\n",
}

func baseRepo(t *testing.T) string {
	t.Helper()
	dir := newRepo(t)
	writeFiles(t, dir, base)
	must(t, os.Chmod(filepath.Join(dir, "tool.sh"), 0o755))
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "base")
	return dir
}

func TestCommitAllMatchesGit(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		tree  []string // paths that must be in HEAD afterwards
		never []string // paths that must not
	}{
		{
			name: "new modified and deleted files",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{
					"keep.txt":        "changed\n",
					"new.txt":         "new\n",
					"src/api/api.go":  "package api\n",
					"deep/a/b/c/d.go": "package d\n",
				})
				os.Remove(filepath.Join(dir, "gone.txt"))
			},
			tree:  []string{"new.txt", "src/api/api.go", "deep/a/b/c/d.go"},
			never: []string{"gone.txt"},
		},
		{
			name: "nested gitignore files with negation and dir-only patterns",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{
					".gitignore":             "*.log\n!important.log\nbuild/\n/root-only.txt\n",
					"a.log":                  "x",
					"important.log":          "kept",
					"build/out.bin":          "x",
					"src/build":              "a file named build is not a dir",
					"root-only.txt":          "ignored at root",
					"src/root-only.txt":      "not ignored below",
					"src/.gitignore":         "secret.txt\ngen/\n",
					"src/secret.txt":         "s3cr3t",
					"src/util/secret.txt":    "s3cr3t",
					"secret.txt":             "not ignored at root",
					"src/gen/x.go":           "generated",
					"src/util/.gitignore":    "!secret.txt\n",
					"docs/# not a comment":   "hash",
					"docs/trailing-space.md": "x",
				})
			},
			tree:  []string{"important.log", "src/build", "src/root-only.txt", "secret.txt", "src/util/secret.txt"},
			never: []string{"a.log", "build/out.bin", "root-only.txt", "src/secret.txt", "src/gen/x.go"},
		},
		{
			name: "executable bit and symlinks",
			edit: func(t *testing.T, dir string) {
				must(t, os.Chmod(filepath.Join(dir, "tool.sh"), 0o644))
				must(t, os.Chmod(filepath.Join(dir, "keep.txt"), 0o755))
				must(t, os.Symlink("src/main.go", filepath.Join(dir, "link-to-main")))
				must(t, os.Symlink("src", filepath.Join(dir, "link-to-src")))
				must(t, os.Remove(filepath.Join(dir, "README.md")))
				must(t, os.Symlink("docs/guide.md", filepath.Join(dir, "README.md")))
			},
			tree: []string{"link-to-main", "link-to-src", "README.md"},
		},
		{
			name: "file replaced by a directory and directory by a file",
			edit: func(t *testing.T, dir string) {
				must(t, os.Remove(filepath.Join(dir, "keep.txt")))
				must(t, os.RemoveAll(filepath.Join(dir, "src", "util")))
				writeFiles(t, dir, map[string]string{"keep.txt/inner.txt": "inner", "src/util": "now a file"})
			},
			tree:  []string{"keep.txt/inner.txt", "src/util"},
			never: []string{"keep.txt", "src/util/util.go"},
		},
		{
			name: "tracked file under an ignored directory is still updated",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{".gitignore": "docs/\n", "docs/guide.md": "edited\n", "docs/new.md": "ignored"})
			},
			tree:  []string{"docs/guide.md"},
			never: []string{"docs/new.md"},
		},
		{
			name: "names with spaces and unicode",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"with space/é ü.txt": "x", "日本.md": "y", "a-b": "1", "a/b": "2", "a.b": "3"})
			},
			tree: []string{"with space/é ü.txt", "日本.md", "a-b", "a/b", "a.b"},
		},
		{
			name: "empty files and a symlinked parent directory",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"empty": "", "src/util/util.go": ""})
				// docs/guide.md is now reached through a symlink: git sees
				// it as deleted and docs as a new symlink.
				must(t, os.Rename(filepath.Join(dir, "docs"), filepath.Join(dir, "real-docs")))
				must(t, os.Symlink("real-docs", filepath.Join(dir, "docs")))
			},
			tree:  []string{"empty", "docs", "real-docs/guide.md"},
			never: []string{"docs/guide.md"},
		},
		{
			name: "intent-to-add, staged and unstaged changes together",
			edit: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"ita.txt": "intent", "staged.txt": "staged", "keep.txt": "v2\n"})
				runGit(t, dir, "add", "-N", "ita.txt")
				runGit(t, dir, "add", "staged.txt", "keep.txt")
				writeFiles(t, dir, map[string]string{"keep.txt": "v3\n"})
				runGit(t, dir, "rm", "-q", "--cached", "gone.txt") // staged delete, file still there
			},
			tree: []string{"ita.txt", "staged.txt", "gone.txt"},
		},
		{
			name: "unmerged paths are resolved with the worktree content",
			edit: func(t *testing.T, dir string) {
				runGit(t, dir, "checkout", "-q", "-b", "other")
				writeFiles(t, dir, map[string]string{"keep.txt": "other side\n"})
				runGit(t, dir, "commit", "-q", "-am", "other")
				runGit(t, dir, "checkout", "-q", "main")
				writeFiles(t, dir, map[string]string{"keep.txt": "main side\n"})
				runGit(t, dir, "commit", "-q", "-am", "main")
				if _, err := gitOutput(dir, "merge", "-q", "other"); err == nil {
					t.Fatal("merge did not conflict")
				}
				writeFiles(t, dir, map[string]string{"keep.txt": "resolved\n"})
			},
			tree: []string{"keep.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			tt.edit(t, dir)
			commitBothWays(t, dir)
			files := treeFiles(t, dir)
			for _, p := range tt.tree {
				if !slices.Contains(files, p) {
					t.Errorf("%s not committed; tree: %v", p, files)
				}
			}
			for _, p := range tt.never {
				if slices.Contains(files, p) {
					t.Errorf("%s committed; tree: %v", p, files)
				}
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestExcludeSources checks the ignore files that live outside the worktree,
// which go-git alone does not read.
func TestExcludeSources(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, home, dir string)
	}{
		{
			name: "info/exclude",
			setup: func(t *testing.T, home, dir string) {
				writeFiles(t, dir, map[string]string{".git/info/exclude": "secret.env\n"})
			},
		},
		{
			name: "core.excludesFile in global config",
			setup: func(t *testing.T, home, dir string) {
				writeFiles(t, home, map[string]string{
					".gitconfig":    "[core]\n\texcludesFile = ~/my-ignores\n",
					"my-ignores":    "secret.env\n",
					".config/x.txt": "",
				})
			},
		},
		{
			name: "core.excludesFile in repository config, relative to the worktree",
			setup: func(t *testing.T, home, dir string) {
				runGit(t, dir, "config", "core.excludesFile", "ignores.txt")
				writeFiles(t, dir, map[string]string{"ignores.txt": "secret.env\n"})
			},
		},
		{
			name: "default global ignore under XDG_CONFIG_HOME",
			setup: func(t *testing.T, home, dir string) {
				writeFiles(t, home, map[string]string{".config/git/ignore": "secret.env\n"})
			},
		},
		{
			name: "default global ignore under HOME/.config without XDG_CONFIG_HOME",
			setup: func(t *testing.T, home, dir string) {
				os.Unsetenv("XDG_CONFIG_HOME")
				writeFiles(t, home, map[string]string{".config/git/ignore": "secret.env\n"})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := isolate(t)
			dir := baseRepo(t)
			tt.setup(t, home, dir)
			writeFiles(t, dir, map[string]string{"secret.env": "TOKEN=x", "sub/secret.env": "TOKEN=y", "visible.txt": "v"})
			commitBothWays(t, dir)
			files := treeFiles(t, dir)
			for _, p := range []string{"secret.env", "sub/secret.env"} {
				if slices.Contains(files, p) {
					t.Errorf("%s committed despite %s", p, tt.name)
				}
			}
			if !slices.Contains(files, "visible.txt") {
				t.Errorf("visible.txt not committed")
			}
		})
	}
}

func TestStateDirNeverCommitted(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	// Tracked before debussy ran: the branch's file, committed as git
	// would (issue 55); what HEAD does not track stays out.
	writeFiles(t, dir, map[string]string{".debussy/old.json": "v1"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "user tracked .debussy")

	writeFiles(t, dir, map[string]string{
		".gitignore":               "!.debussy/\n",
		".debussy/state.json":      "{}",
		".debussy/old.json":        "v2",
		".debussy/runs/1/log.json": "{}",
		"sub/.debussy/state.json":  "{}",
		"work.go":                  "package work\n",
	})
	mustCommitAll(t, dir, "work")
	files := treeFiles(t, dir)
	for _, p := range files {
		if strings.Contains(p, ".debussy/") && p != ".debussy/old.json" {
			t.Errorf("%s committed", p)
		}
	}
	if got := runGit(t, dir, "show", "HEAD:.debussy/old.json"); got != "v2" {
		t.Errorf(".debussy/old.json = %q in HEAD, want the edit, v2", got)
	}
	if !slices.Contains(files, "work.go") {
		t.Errorf("work.go not committed")
	}
}

func TestNestedRepository(t *testing.T) {
	t.Run("without commits is refused, like git add -A", func(t *testing.T) {
		isolate(t)
		dir := baseRepo(t)
		runGit(t, dir, "init", "-q", "vendor/fresh")
		writeFiles(t, dir, map[string]string{"vendor/fresh/file.go": "x", "outside.txt": "o"})
		_, err := mustOpen(t, dir).CommitAll(context.Background(), "x")
		if err == nil || !strings.Contains(err.Error(), "vendor/fresh") {
			t.Fatalf("CommitAll: %v, want git's refusal of vendor/fresh", err)
		}
	})
	t.Run("with commits becomes a gitlink, like git add -A", func(t *testing.T) {
		isolate(t)
		dir := baseRepo(t)
		nested := filepath.Join(dir, "vendor", "lib")
		runGit(t, dir, "init", "-q", nested)
		writeFiles(t, nested, map[string]string{"lib.go": "package lib\n"})
		runGit(t, nested, "-c", "user.name=n", "-c", "user.email=n@x", "add", "-A")
		runGit(t, nested, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-q", "-m", "lib")
		commitBothWays(t, dir)
		if got := runGit(t, dir, "ls-tree", "HEAD", "vendor/lib"); !strings.HasPrefix(got, "160000 commit ") {
			t.Errorf("vendor/lib = %q, want a gitlink", got)
		}

		// A new commit in the nested repository moves the gitlink; edits
		// inside it are never committed by the outer repository.
		writeFiles(t, nested, map[string]string{"lib.go": "package lib // v2\n", "untracked.go": "x"})
		runGit(t, nested, "-c", "user.name=n", "-c", "user.email=n@x", "commit", "-q", "-am", "v2")
		commitBothWays(t, dir)
		want := runGit(t, nested, "rev-parse", "HEAD")
		if got := runGit(t, dir, "rev-parse", "HEAD:vendor/lib"); got != want {
			t.Errorf("gitlink = %s, want %s", got, want)
		}
	})
}

func TestLinkedWorktree(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, dir, "worktree", "add", "-q", "-b", "feature", wt)
	writeFiles(t, dir, map[string]string{".git/info/exclude": "*.secret\n"})
	writeFiles(t, wt, map[string]string{"feature.go": "package f\n", "src/main.go": "package main // wt\n", "key.secret": "k"})
	must(t, os.Remove(filepath.Join(wt, "gone.txt")))

	r := mustOpen(t, filepath.Join(wt, "src"))
	if r.Root() != wt {
		t.Errorf("Root() = %s, want %s", r.Root(), wt)
	}
	mainBefore := runGit(t, dir, "rev-parse", "main")
	c, err := r.CommitAll(context.Background(), "in worktree")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "rev-parse", "feature"); got != c.Hash {
		t.Errorf("feature = %s, want the new commit %s", got, c.Hash)
	}
	if got := runGit(t, dir, "rev-parse", "main"); got != mainBefore {
		t.Errorf("main moved to %s", got)
	}
	if st := runGit(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("worktree not clean after commit:\n%s", st)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("main worktree disturbed:\n%s", st)
	}
	got := runGit(t, wt, "diff", "--no-renames", "--name-status", "HEAD~1", "HEAD")
	if want := "D\tgone.txt\nA\tfeature.go\nM\tsrc/main.go"; normalizeNameStatus(got) != normalizeNameStatus(want) {
		t.Errorf("worktree commit:\n%s\nwant:\n%s", got, want)
	}
	if c.Files != 3 {
		t.Errorf("Files = %d, want 3", c.Files)
	}
	if log := runGit(t, wt, "reflog", "-1", "--format=%gs"); log != "commit: in worktree" {
		t.Errorf("worktree HEAD reflog = %q", log)
	}
}

func TestMessageTrailers(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"checkpoint", Message{
			Subject: `debussy: phase 2 "Endpoints" — checkpoint before restart 1/3`,
			Body:    "Context at 81% after 212 tool calls.\n\nTasks left: 3.",
			Run:     "20260101-120000-ab12", Phase: "2", Event: "restart", Session: 1,
		}},
		{"completed without body", Message{
			Subject: `debussy: phase 3 "Docs" — completed`,
			Run:     "r1", Phase: "3", Event: "completed", Session: 0,
		}},
		{"newlines folded", Message{
			Subject: "line one\nline two", Run: "r\n2", Phase: "p", Event: "interrupted", Session: 4,
		}},
		{"no subject", Message{Run: "r", Phase: "7", Event: "failed", Session: 2}},
		{"plain", Message{Subject: "just a subject", Body: "and a body\n\n"}},
		{"outcome with reason", Message{
			Subject: `debussy: phase 4 "API" — blocked`, Run: "r3", Plan: "docs/plans/MASTER.md", Phase: "4", Event: "blocked",
			Session: 2, Sessions: 3, Restarts: 1, Reason: "needs\nthe staging   database: " + strings.Repeat("x", 300),
		}},
	}
	var golden strings.Builder
	for _, tt := range tests {
		golden.WriteString("=== " + tt.name + "\n" + tt.msg.String())
	}
	compareGolden(t, "messages.golden", golden.String())

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			writeFiles(t, dir, map[string]string{"change.txt": tt.name})
			mustCommitAll(t, dir, tt.msg.String())
			var want []string
			for _, kv := range [][2]string{{"Debussy-Run", tt.msg.Run}, {"Debussy-Plan", tt.msg.Plan}, {"Debussy-Phase", tt.msg.Phase}, {"Debussy-Event", tt.msg.Event}} {
				if v := oneLine(kv[1]); v != "" {
					want = append(want, kv[0]+": "+v)
				}
			}
			if len(want) > 0 || tt.msg.Session != 0 {
				want = append(want, "Debussy-Session: "+strconv.Itoa(tt.msg.Session))
			}
			if IsOutcome(tt.msg.Event) {
				want = append(want, "Debussy-Sessions: "+strconv.Itoa(tt.msg.Sessions), "Debussy-Restarts: "+strconv.Itoa(tt.msg.Restarts))
			}
			if tt.msg.Reason != "" {
				want = append(want, "Debussy-Reason: "+reasonLine(tt.msg.Reason))
			}
			got := runGit(t, dir, "log", "-1", "--format=%(trailers:only,unfold)")
			if got != strings.Join(want, "\n") {
				t.Errorf("git log trailers:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			// And the plumbing command the brief names.
			parsed := runGitStdin(t, dir, tt.msg.String(), "interpret-trailers", "--parse")
			if n := strings.Count(parsed, "Debussy-"); n != len(want) {
				t.Errorf("interpret-trailers --parse found %d trailers, want %d:\n%s", n, len(want), parsed)
			}
			if subj := runGit(t, dir, "log", "-1", "--format=%s"); strings.Contains(subj, "\n") || subj == "" {
				t.Errorf("subject %q", subj)
			}
		})
	}
}

func runGitStdin(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

func TestNothingToCommit(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"clean tree", baseRepo},
		{"unborn branch with no files", newRepo},
		{"unborn branch with only ignored files", func(t *testing.T) string {
			dir := newRepo(t)
			writeFiles(t, dir, map[string]string{".git/info/exclude": "*\n", "a.txt": "a"})
			return dir
		}},
		{"only ignored and state files changed", func(t *testing.T) string {
			dir := baseRepo(t)
			writeFiles(t, dir, map[string]string{".git/info/exclude": "*.tmp\n", "x.tmp": "t", ".debussy/state.json": "{}"})
			return dir
		}},
		{"touched but unchanged files", func(t *testing.T) string {
			dir := baseRepo(t)
			future := time.Now().Add(time.Hour)
			must(t, os.Chtimes(filepath.Join(dir, "keep.txt"), future, future))
			return dir
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := tt.setup(t)
			before, _ := gitOutput(dir, "rev-parse", "-q", "--verify", "HEAD")
			_, err := mustOpen(t, dir).CommitAll(context.Background(), "nothing")
			if !errors.Is(err, ErrNothingToCommit) {
				t.Fatalf("CommitAll err = %v, want ErrNothingToCommit", err)
			}
			after, _ := gitOutput(dir, "rev-parse", "-q", "--verify", "HEAD")
			if before != after {
				t.Errorf("HEAD moved from %q to %q", before, after)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !os.IsNotExist(err) {
				t.Errorf("index.lock left behind: %v", err)
			}
		})
	}
}

func TestDirtyTracked(t *testing.T) {
	tests := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"clean", func(t *testing.T, dir string) {}, nil},
		{"untracked and ignored files do not count", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"new.txt": "n", "sub/new.go": "x", ".debussy/state.json": "{}"})
		}, nil},
		{"touched but unchanged does not count", func(t *testing.T, dir string) {
			future := time.Now().Add(time.Hour)
			must(t, os.Chtimes(filepath.Join(dir, "keep.txt"), future, future))
		}, nil},
		{"modified, deleted and mode change", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"keep.txt": "changed\n"})
			must(t, os.Remove(filepath.Join(dir, "gone.txt")))
			must(t, os.Chmod(filepath.Join(dir, "tool.sh"), 0o644))
		}, []string{"gone.txt", "keep.txt", "tool.sh"}},
		{"staged only: new file, deletion, modification", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"staged-new.txt": "s", "src/main.go": "package main // staged\n"})
			runGit(t, dir, "add", "staged-new.txt", "src/main.go")
			runGit(t, dir, "rm", "-q", "--cached", "gone.txt")
		}, []string{"gone.txt", "src/main.go", "staged-new.txt"}},
		{"staged then reverted in the worktree", func(t *testing.T, dir string) {
			writeFiles(t, dir, map[string]string{"keep.txt": "staged\n"})
			runGit(t, dir, "add", "keep.txt")
			writeFiles(t, dir, map[string]string{"keep.txt": "keep\n"})
		}, []string{"keep.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			tt.edit(t, dir)
			got, err := mustOpen(t, dir).DirtyTracked(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("DirtyTracked() = %q, want %q", got, tt.want)
			}
			// Cross-check with git: tracked entries of status, minus untracked.
			var fromGit []string
			for _, l := range strings.Split(runGit(t, dir, "status", "--porcelain", "--untracked-files=no"), "\n") {
				if l != "" {
					fromGit = append(fromGit, l[3:])
				}
			}
			slices.Sort(fromGit)
			if !slices.Equal(got, fromGit) {
				t.Errorf("DirtyTracked() = %q, git status says %q", got, fromGit)
			}
		})
	}

	t.Run("unborn branch with a staged file", func(t *testing.T) {
		isolate(t)
		dir := newRepo(t)
		writeFiles(t, dir, map[string]string{"a.txt": "a", "b.txt": "b"})
		runGit(t, dir, "add", "a.txt")
		got, err := mustOpen(t, dir).DirtyTracked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"a.txt"}) {
			t.Errorf("DirtyTracked() = %q, want [a.txt]", got)
		}
	})
}

func TestChanges(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	first := runGit(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"keep.txt": "v2\n", "added/x.go": "x"})
	must(t, os.Remove(filepath.Join(dir, "gone.txt")))
	mustCommitAll(t, dir, "two")
	writeFiles(t, dir, map[string]string{"third.txt": "3"})
	mustCommitAll(t, dir, "three")
	r := mustOpen(t, dir)

	tests := []struct {
		name, base string
		want       string
	}{
		{"since first commit", first, "A\tadded/x.go\nD\tgone.txt\nM\tkeep.txt\nA\tthird.txt"},
		{"abbreviated hash", Short(first), "A\tadded/x.go\nD\tgone.txt\nM\tkeep.txt\nA\tthird.txt"},
		{"branch name at HEAD", "main", ""},
		{"empty tree", "", "A\tREADME.md\nA\tadded/x.go\nA\tdocs/guide.md\nM\tkeep.txt\nA\tsrc/main.go\nA\tsrc/util/util.go\nA\tthird.txt\nA\ttool.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Changes(tt.base)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tt.want, "M\tkeep.txt", "A\tkeep.txt")
			if tt.base != "" {
				want = tt.want
			}
			if formatChanges(got) != want {
				t.Errorf("Changes(%q) =\n%s\nwant\n%s", tt.base, formatChanges(got), want)
			}
			gitBase := tt.base
			if gitBase == "" {
				gitBase = runGit(t, dir, "hash-object", "-t", "tree", "/dev/null")
			}
			if g := normalizeNameStatus(runGit(t, dir, "diff", "--no-renames", "--name-status", gitBase, "HEAD")); g != formatChanges(got) {
				t.Errorf("git diff --name-status says\n%s", g)
			}
		})
	}
	if _, err := r.Changes("no-such-rev"); err == nil {
		t.Error("Changes(no-such-rev) succeeded")
	}
}

func TestOpen(t *testing.T) {
	isolate(t)
	t.Run("not a repository", func(t *testing.T) {
		_, err := Open(t.TempDir())
		if !errors.Is(err, ErrNotRepo) {
			t.Fatalf("err = %v, want ErrNotRepo", err)
		}
		if !strings.Contains(err.Error(), "git init") {
			t.Errorf("error does not say what to do: %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, err := Open(filepath.Join(t.TempDir(), "nope")); err == nil {
			t.Fatal("Open succeeded")
		}
	})
	t.Run("subdirectory finds the root; unborn HEAD is empty", func(t *testing.T) {
		dir := newRepo(t)
		writeFiles(t, dir, map[string]string{"a/b/c.txt": "c"})
		r := mustOpen(t, filepath.Join(dir, "a", "b"))
		if r.Root() != dir {
			t.Errorf("Root() = %s, want %s", r.Root(), dir)
		}
		h, err := r.Head()
		if err != nil || h != "" {
			t.Errorf("Head() = %q, %v; want empty on an unborn branch", h, err)
		}
		c, err := r.CommitAll(context.Background(), "first")
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := r.Head(); h != c.Hash || len(h) != 40 {
			t.Errorf("Head() = %q, want %q", h, c.Hash)
		}
		if c.Files != 1 {
			t.Errorf("Files = %d, want 1", c.Files)
		}
		if log := runGit(t, dir, "reflog", "-1", "--format=%gs"); log != "commit (initial): first" {
			t.Errorf("reflog = %q", log)
		}
	})
}

func TestAuthor(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, home, dir string)
		author string
	}{
		{"repository config", func(t *testing.T, home, dir string) {}, "Test User <test@example.com>"},
		{"global config when the repository has none", func(t *testing.T, home, dir string) {
			runGit(t, dir, "config", "--unset", "user.name")
			runGit(t, dir, "config", "--unset", "user.email")
			writeFiles(t, home, map[string]string{".gitconfig": "[user]\n\tname = Global Person\n\temail = global@example.com\n"})
		}, "Global Person <global@example.com>"},
		{"XDG config, overridden by ~/.gitconfig", func(t *testing.T, home, dir string) {
			runGit(t, dir, "config", "--unset", "user.name")
			runGit(t, dir, "config", "--unset", "user.email")
			writeFiles(t, home, map[string]string{
				".config/git/config": "[user]\n\tname = XDG Person\n\temail = xdg@example.com\n",
				".gitconfig":         "[user]\n\temail = home@example.com\n",
			})
		}, "XDG Person <home@example.com>"},
		{"include.path and includeIf gitdir", func(t *testing.T, home, dir string) {
			runGit(t, dir, "config", "--unset", "user.name")
			runGit(t, dir, "config", "--unset", "user.email")
			writeFiles(t, home, map[string]string{
				".gitconfig": "[include]\n\tpath = inc.conf\n[includeIf \"gitdir:" + filepath.Dir(dir) + "/\"]\n\tpath = ~/work.conf\n",
				"inc.conf":   "[user]\n\tname = Included\n\temail = inc@example.com\n",
				"work.conf":  "[user]\n\temail = work@example.com\n",
			})
		}, "Included <work@example.com>"},
		{"environment wins", func(t *testing.T, home, dir string) {
			t.Setenv("GIT_AUTHOR_NAME", "Env Author")
			t.Setenv("GIT_AUTHOR_EMAIL", "env@example.com")
		}, "Env Author <env@example.com>"},
		{"fallback", func(t *testing.T, home, dir string) {
			runGit(t, dir, "config", "--unset", "user.name")
			runGit(t, dir, "config", "--unset", "user.email")
		}, cmp.Or(passwdName(), "debussy") + " <" + cmp.Or(defaultEmail(), "debussy@localhost") + ">"}, // made up as git makes them up, where it can

	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := isolate(t)
			dir := baseRepo(t)
			tt.setup(t, home, dir)
			writeFiles(t, dir, map[string]string{"x.txt": tt.name})
			when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
			r := mustOpen(t, dir, WithClock(func() time.Time { return when }))
			if _, err := r.CommitAll(context.Background(), "author"); err != nil {
				t.Fatal(err)
			}
			if got := runGit(t, dir, "log", "-1", "--format=%an <%ae>"); got != tt.author {
				t.Errorf("author = %q, want %q", got, tt.author)
			}
			if got := runGit(t, dir, "log", "-1", "--format=%ad", "--date=iso"); got != "2026-01-02 03:04:05 +0100" {
				t.Errorf("date = %q", got)
			}
		})
	}
}

func TestLocked(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	writeFiles(t, dir, map[string]string{"x.txt": "x", ".git/index.lock": ""})
	_, err := mustOpen(t, dir).CommitAll(context.Background(), "locked")
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err != nil {
		t.Errorf("someone else's index.lock was removed: %v", err)
	}
}

// TestIndexFormats commits over indexes git wrote in each version, and after
// split-index is refused rather than misread.
func TestIndexFormats(t *testing.T) {
	for _, v := range []string{"2", "3", "4"} {
		t.Run("version "+v, func(t *testing.T) {
			isolate(t)
			dir := baseRepo(t)
			runGit(t, dir, "update-index", "--index-version", v)
			writeFiles(t, dir, map[string]string{"keep.txt": "v" + v, "new/" + v + ".txt": v})
			runGit(t, dir, "add", "-N", "new/"+v+".txt") // extended flags need version 3+
			commitBothWays(t, dir)
			if out := runGit(t, dir, "fsck", "--no-progress", "--no-dangling"); out != "" {
				t.Errorf("git fsck: %s", out)
			}
		})
	}
	t.Run("split index is git's to read", func(t *testing.T) {
		isolate(t)
		dir := baseRepo(t)
		runGit(t, dir, "update-index", "--split-index")
		writeFiles(t, dir, map[string]string{"keep.txt": "changed"})
		if _, err := mustOpen(t, dir).CommitAll(context.Background(), "x"); err != nil {
			t.Fatalf("CommitAll over a split index: %v", err)
		}
		if got := runGit(t, dir, "status", "--porcelain"); got != "" {
			t.Errorf("status after the commit: %q", got)
		}
	})
}

// TestRacyEdits rewrites a file with same-size content right after each
// commit, within the timestamp granularity of the index; each edit must be
// seen, by CommitAll and by git reading the index CommitAll wrote.
func TestRacyEdits(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	r := mustOpen(t, dir)
	for i := range 5 {
		content := strings.Repeat(string(rune('a'+i)), 8)
		writeFiles(t, dir, map[string]string{"racy.txt": content})
		if _, err := r.CommitAll(context.Background(), "racy"); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		if got := runGit(t, dir, "show", "HEAD:racy.txt"); got != content {
			t.Fatalf("edit %d: committed %q, want %q", i, got, content)
		}
		if st := runGit(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("edit %d: git status not clean:\n%s", i, st)
		}
	}
}

func TestDetachedHead(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	runGit(t, dir, "checkout", "-q", "--detach")
	writeFiles(t, dir, map[string]string{"detached.txt": "d"})
	c := commitBothWays(t, dir)
	if got := runGit(t, dir, "rev-parse", "HEAD"); got != c.Hash {
		t.Errorf("HEAD = %s, want %s", got, c.Hash)
	}
	if got := runGit(t, dir, "rev-parse", "main"); got == c.Hash {
		t.Error("main moved with a detached HEAD")
	}
}

func TestShort(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0123456789abcdef0123456789abcdef01234567", "0123456"},
		{"abc", "abc"},
		{"", ""},
	} {
		if got := Short(tt.in); got != tt.want {
			t.Errorf("Short(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRepackBetweenCommits keeps one Repo across a `git gc` that moves every
// object into a new pack, as the agent's own git commits may trigger.
func TestRepackBetweenCommits(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	r := mustOpen(t, dir)
	writeFiles(t, dir, map[string]string{"one.txt": "1"})
	if _, err := r.CommitAll(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "gc", "-q", "--prune=now")
	writeFiles(t, dir, map[string]string{"two.txt": "2"})
	runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "agent commit")
	runGit(t, dir, "gc", "-q", "--prune=now")
	c, err := r.CommitAll(context.Background(), "two")
	if err != nil {
		t.Fatal(err)
	}
	if c.Files != 1 {
		t.Errorf("Files = %d, want 1", c.Files)
	}
	if _, err := r.Changes(runGit(t, dir, "rev-list", "--max-parents=0", "HEAD")); err != nil {
		t.Errorf("Changes after repack: %v", err)
	}
}

// Written sees the commit in the object store while the branch still
// points at its parent; its error stops the commit with the work staged
// for the next one.
func TestWrittenBeforeBranchMoves(t *testing.T) {
	isolate(t)
	dir := baseRepo(t)
	before := runGit(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"x.txt": "x\n"})
	var seen string
	c, err := mustOpen(t, dir).CommitAll(context.Background(), "first", Written(func(hash string) error {
		seen = hash
		if head := runGit(t, dir, "rev-parse", "HEAD"); head != before {
			t.Errorf("the branch moved to %s before Written returned", head)
		}
		if typ := runGit(t, dir, "cat-file", "-t", hash); typ != "commit" {
			t.Errorf("%s is a %q, want a commit in the store", hash, typ)
		}
		return nil
	}))
	if err != nil || c.Hash != seen || runGit(t, dir, "rev-parse", "HEAD") != seen {
		t.Fatalf("commit %q, err %v; Written saw %q", c.Hash, err, seen)
	}

	writeFiles(t, dir, map[string]string{"y.txt": "y\n"})
	refused := errors.New("ledger full")
	_, err = mustOpen(t, dir).CommitAll(context.Background(), "second", Written(func(string) error { return refused }))
	if !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the ledger's error", err)
	}
	if head := runGit(t, dir, "rev-parse", "HEAD"); head != seen {
		t.Errorf("the branch moved to %s although Written refused", head)
	}
	if c := mustCommitAll(t, dir, "again"); c.Files != 1 {
		t.Errorf("the next commit has %d files, want y.txt", c.Files)
	}
}
