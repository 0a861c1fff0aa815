package gitcommit

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The second probe's disagreements with git (issue 19), each held to real
// git like the rest of the suite.

// gitlinkSetup commits a nested repository at sub as a gitlink.
func gitlinkSetup(t *testing.T, h *diffRepo) {
	diffBase(t, h)
	commitNested(h, "sub", map[string]string{"n.txt": "nested\n"})
}

// permsUnder lists "path mode" for every file and directory below dir,
// for comparing what permissions each side gave what it wrote.
func permsUnder(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %v", rel, fi.Mode()))
		return nil
	})
	must(t, err)
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// compareReflogs compares the reflogs of HEAD and main, as `git reflog`
// shows them.
func compareReflogs(t *testing.T, d, g *diffRepo) {
	t.Helper()
	for _, ref := range []string{"HEAD", "main"} {
		got, gerr := d.GitErr("reflog", "show", "--format=%H %gs", ref, "--")
		want, werr := g.GitErr("reflog", "show", "--format=%H %gs", ref, "--")
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("reflog %s:\n--- debussy (%v)\n%s\n--- git (%v)\n%s", ref, gerr, got, werr, want)
		}
	}
}

var round2Cases = []diffCase{
	// Secrets git keeps out.
	{
		name:  "index version 4 with an assume-unchanged entry keeps the flag and the committed content",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--index-version", "4")
			h.Git("update-index", "--assume-unchanged", "keep.txt")
			h.Write("keep.txt", "password=hunter2\n")
			h.Write("new.txt", "n")
		},
	},
	{
		name:  "includeIf hasconfig:remote.*.url sets core.excludesFile",
		setup: diffBase,
		home: map[string]string{
			".gitconfig": defaultDiffGitconfig + "[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n\tpath = work.inc\n" +
				"[includeIf \"hasconfig:remote.*.url:https://other.org/**\"]\n\tpath = other.inc\n",
			"work.inc":    "[core]\n\texcludesFile = ~/work.ignore\n",
			"other.inc":   "[user]\n\tname = Not Me\n",
			"work.ignore": ".env\n*.pem\n",
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("remote", "add", "origin", "https://example.com/team/app.git")
			h.Write(".env", "TOKEN=1\n")
			h.Write("id.pem", "key\n")
			h.Write("ok.txt", "ok\n")
		},
	},
	{
		name:  "includeIf hasconfig:remote.*.url without a matching remote",
		setup: diffBase,
		home: map[string]string{
			".gitconfig":  defaultDiffGitconfig + "[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n\tpath = work.inc\n",
			"work.inc":    "[core]\n\texcludesFile = ~/work.ignore\n",
			"work.ignore": ".env\n",
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("remote", "add", "origin", "https://elsewhere.net/app.git")
			h.Write(".env", "TOKEN=1\n")
		},
	},
	{
		name:  "an includeIf condition is git's to read",
		setup: diffBase,
		home: map[string]string{
			".gitconfig": defaultDiffGitconfig + "[includeIf \"hasconfig:branch.*.merge:refs/heads/x\"]\n\tpath = x.inc\n",
			"x.inc":      "[core]\n\texcludesFile = ~/x.ignore\n",
		},
		change: func(t *testing.T, h *diffRepo) { h.Write(".env", "TOKEN=1\n") },
	},
	{
		name:  "a NUL byte inside a .gitignore line ends the pattern",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".gitignore", "secret.txt\x00trailing junk\n*.key\x00\nplain.log\n")
			h.Write("secret.txt", "s")
			h.Write("a.key", "k")
			h.Write("plain.log", "l")
			h.Write("ok.txt", "ok")
		},
	},

	// Work not committed, or every commit failing.
	{
		name:   "a gitlink path replaced by a file",
		setup:  gitlinkSetup,
		change: func(t *testing.T, h *diffRepo) { h.Remove("sub"); h.Write("sub", "now a file\n") },
	},
	{
		name:   "a gitlink path replaced by a symlink",
		setup:  gitlinkSetup,
		change: func(t *testing.T, h *diffRepo) { h.Remove("sub"); h.Symlink("src", "sub") },
	},
	{
		name: "a hook without #! runs with sh",
		setup: func(t *testing.T, h *diffRepo) {
			h.Write(".git/hooks/pre-commit", "git diff --cached --name-only > staged.list\ngit add staged.list\n")
			h.Chmod(".git/hooks/pre-commit", 0o755)
		},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
	},
	{
		name: "a hook without #! that fails rejects the commit",
		setup: func(t *testing.T, h *diffRepo) {
			h.Write(".git/hooks/pre-commit", "echo no >&2\nexit 4\n")
			h.Chmod(".git/hooks/pre-commit", 0o755)
		},
		change:  func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
		refused: "pre-commit hook rejected the commit (exit status 4)",
	},
	{
		name: "hooks see GIT_EXEC_PATH, first on PATH",
		setup: func(t *testing.T, h *diffRepo) {
			h.hook("", "pre-commit", "printf '%s\\n' \"$GIT_EXEC_PATH\" \"${PATH%%:*}\" > hookenv.txt\ngit add hookenv.txt\n")
		},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.txt", "a\n") },
	},
	{
		name:  "an assume-unchanged file deleted from disk is kept",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("update-index", "--assume-unchanged", "keep.txt")
			h.Remove("keep.txt")
			h.Write("new.txt", "n")
		},
	},
	{
		name:  "core.excludesFile set to empty reads no excludes file",
		setup: diffBase,
		home: map[string]string{
			".gitconfig":         defaultDiffGitconfig + "[core]\n\texcludesFile =\n",
			".config/git/ignore": "*.log\n",
		},
		change: func(t *testing.T, h *diffRepo) { h.Write("a.log", "l"); h.Write("b.txt", "b") },
	},

	{
		name:   "author name and email cleaned of quotes, dots and brackets as git does",
		setup:  diffBase,
		home:   map[string]string{".gitconfig": "[user]\n\tname = \" \\\"Foo. Bar.\\\" \"\n\temail = \" <foo@example.com.>. \"\n"},
		change: func(t *testing.T, h *diffRepo) { h.Write("x.txt", "x") },
	},

	// Wrong repository, wrong types.
	{
		name:  "GIT_DIR and GIT_WORK_TREE from the environment",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("keep.txt", "changed\n")
			h.Write("new.txt", "n")
			h.Rename(".git", "../"+filepath.Base(h.Dir)+".meta")
			// A decoy the commit must not land in.
			h.Git("init", "-q")
		},
		commitEnv: func(h *diffRepo) map[string]string {
			return map[string]string{"GIT_DIR": h.Dir + ".meta", "GIT_WORK_TREE": h.Dir}
		},
	},
	{
		name:  "GIT_DIR with core.worktree",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Write("src/main.go", "package main // edited\n")
			h.Write("new.txt", "n")
			h.Git("config", "core.worktree", h.Dir)
			h.Rename(".git", "../"+filepath.Base(h.Dir)+".meta")
		},
		commitEnv: func(h *diffRepo) map[string]string {
			return map[string]string{"GIT_DIR": h.Dir + ".meta"}
		},
		workdir: func(h *diffRepo) string { return filepath.Join(h.Dir, "src") },
	},
	{
		name: "core.symlinks=false keeps a symlink in the index as 120000",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Symlink("keep.txt", "link")
			h.Symlink("src/main.go", "link2")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.symlinks", "false")
			h.Remove("link")
			h.Write("link", "keep.txt") // as a checkout without symlinks writes it
			h.Remove("link2")
			h.Write("link2", "app/a.go")
		},
	},
	{
		name: "core.fileMode=false: a symlink replaced by an executable file is 100644",
		setup: func(t *testing.T, h *diffRepo) {
			diffBase(t, h)
			h.Symlink("keep.txt", "link")
		},
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.fileMode", "false")
			h.Remove("link")
			h.Write("link", "#!/bin/sh\n")
			h.Chmod("link", 0o755)
		},
	},
	{
		name:       "a path .git:<stream> is refused",
		setup:      diffBase,
		change:     func(t *testing.T, h *diffRepo) { h.Write(".git:x", "ads\n") },
		gitRefuses: "invalid path",
		refused:    ".git:x",
	},
	{
		name:       "a directory .git::$INDEX_ALLOCATION is refused",
		setup:      diffBase,
		change:     func(t *testing.T, h *diffRepo) { h.Write("d/.git::$INDEX_ALLOCATION/x", "ads\n") },
		gitRefuses: "invalid path",
		refused:    "INDEX_ALLOCATION",
	},
	{
		name:  "HEAD through a chain of symbolic refs",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
			h.Git("symbolic-ref", "HEAD", "refs/heads/alias")
			h.Write("keep.txt", "changed\n")
		},
		check: func(t *testing.T, d, g *diffRepo) {
			for _, ref := range []string{"refs/heads/main", "HEAD"} {
				if got, want := d.Git("rev-parse", ref), g.Git("rev-parse", ref); got != want {
					t.Errorf("%s: debussy %s, git %s", ref, got, want)
				}
			}
			if got := d.Git("symbolic-ref", "refs/heads/alias"); got != "refs/heads/main" {
				t.Errorf("refs/heads/alias is no longer symbolic: %s", got)
			}
		},
	},
	{
		name:  "core.logAllRefUpdates=false writes no new reflog",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.logAllRefUpdates", "false")
			h.Remove(".git/logs/refs/heads/main")
			h.Write("keep.txt", "changed\n")
		},
		check: compareReflogs,
	},
	{
		name:  "core.sharedRepository=group: group-writable objects and index",
		setup: diffBase,
		change: func(t *testing.T, h *diffRepo) {
			h.Git("config", "core.sharedRepository", "group")
			h.Write("keep.txt", "changed\n")
			h.Write("deep/new/x.txt", "x\n")
		},
		check: func(t *testing.T, d, g *diffRepo) {
			for _, p := range []string{".git/objects", ".git/index", ".git/refs", ".git/logs"} {
				if got, want := permsUnder(t, d.path(p)), permsUnder(t, g.path(p)); got != want {
					t.Errorf("permissions under %s:\n--- debussy\n%s\n--- git\n%s", p, got, want)
				}
			}
		},
	},
}

func TestDifferentialIssue19(t *testing.T) {
	runDiffCases(t, round2Cases)
}

// A log over the streaming threshold appended to every few milliseconds:
// every commit used to fail "file changed while it was read". Git commits
// the bytes present when it stat'ed the file; so must CommitAll, and what it
// commits must be a prefix of the file.
func TestGrowingLargeFileIsCommittedAsASnapshot(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	log := filepath.Join(dir, "app.log")
	line := strings.Repeat("x", 99) + "\n"
	must(t, os.WriteFile(log, []byte(strings.Repeat(line, 2*streamThreshold/len(line))), 0o644))

	stop, done := make(chan struct{}), make(chan error)
	go func() {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := f.WriteString(line); err != nil {
				done <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	r := mustOpen(t, dir)
	for i := range 3 {
		writeFiles(t, dir, map[string]string{"n.txt": strconv.Itoa(i)})
		if _, err := r.CommitAll(context.Background(), "snapshot"); err != nil {
			close(stop)
			<-done
			t.Fatalf("CommitAll %d while app.log grows: %v", i, err)
		}
	}
	close(stop)
	must(t, <-done)

	final, err := os.ReadFile(log)
	must(t, err)
	for i := range 3 {
		blob := runGit(t, dir, "cat-file", "blob", fmt.Sprintf("HEAD~%d:app.log", i))
		if !strings.HasPrefix(string(final), blob) || len(blob) < 2*streamThreshold-len(line) {
			t.Errorf("commit HEAD~%d holds %d bytes of app.log, not a prefix of its %d bytes", i, len(blob), len(final))
		}
	}
	if out, err := gitOutput(dir, "fsck", "--strict", "--no-progress"); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// A POSIX rule in $TZ gives commits git's offset (the wants are libc's,
// `TZ=<rule> date +%z`); Go alone falls back to UTC.
func TestPOSIXTZ(t *testing.T) {
	isolate(t)
	for tz, want := range map[string]string{
		"<+0330>-3:30":           "+0330",
		"EST5EDT,M3.2.0,M11.1.0": "-0400", // in June, daylight saving
		"XYZ-3":                  "+0300",
	} {
		dir := newRepo(t)
		writeFiles(t, dir, map[string]string{"a.txt": tz})
		june := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		env := map[string]string{"TZ": tz, "HOME": os.Getenv("HOME")}
		r := mustOpen(t, dir, WithClock(func() time.Time { return june }), WithGetenv(func(k string) string { return env[k] }))
		if _, err := r.CommitAll(context.Background(), "tz"); err != nil {
			t.Fatal(err)
		}
		if got := runGit(t, dir, "log", "-1", "--format=%ai"); !strings.HasSuffix(got, want) {
			t.Errorf("TZ=%q: author date %s, want offset %s (libc's: TZ=%q date +%%z)", tz, got, want, tz)
		}
	}
}
