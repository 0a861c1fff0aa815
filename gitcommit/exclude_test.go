package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUntrackedMatchesGit holds Untracked to `git ls-files --others
// --exclude-standard` for the paths and `git hash-object` for the
// fingerprints, and checks it writes nothing.
func TestUntrackedMatchesGit(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{
		"tracked.txt": "t\n", ".gitignore": "*.log\nbuild/\n",
	})
	writeFiles(t, dir, map[string]string{
		"notes.txt": "my notes\n", "sub/dir/secret.env": "KEY=1\n", "debug.log": "ignored\n",
		"build/out.bin": "ignored\n", ".debussy/state.json": "{}\n", "tracked.txt": "changed\n",
	})
	if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("sub/dir/secret.env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objects := runGit(t, dir, "count-objects")

	got, err := mustOpen(t, dir).Untracked(context.Background())
	if err != nil {
		t.Fatalf("Untracked: %v", err)
	}
	want := strings.Fields(runGit(t, dir, "ls-files", "--others", "--exclude-standard"))
	want = slices.DeleteFunc(want, func(p string) bool { return strings.HasPrefix(p, ".debussy/") })
	var paths []string
	for p, h := range got {
		paths = append(paths, p)
		if wantHash := runGit(t, dir, "hash-object", "--", p); h != wantHash {
			t.Errorf("fingerprint of %s = %s, git hash-object says %s", p, h, wantHash)
		}
	}
	slices.Sort(paths)
	if !slices.Equal(paths, want) {
		t.Errorf("Untracked paths = %v, git ls-files --others --exclude-standard = %v", paths, want)
	}
	if after := runGit(t, dir, "count-objects"); after != objects {
		t.Errorf("Untracked wrote objects: count-objects %q, then %q", objects, after)
	}
}

// TestCommitAllExclude: the files a run found untracked stay out of its
// commits until their content changes; then they are committed and named.
func TestCommitAllExclude(t *testing.T) {
	tests := []struct {
		name string
		// after Untracked was taken: files written (content "" removes)
		change      map[string]string
		wantTree    []string // paths of HEAD's tree besides base.txt
		wantChanged []string
		wantNothing bool
	}{
		{name: "user files untouched, agent adds one", change: map[string]string{"agent.go": "package a\n"},
			wantTree: []string{"agent.go"}},
		{name: "agent edits a user file", change: map[string]string{"notes.txt": "edited by the agent\n"},
			wantTree: []string{"notes.txt"}, wantChanged: []string{"notes.txt"}},
		{name: "agent removes a user file", change: map[string]string{"notes.txt": ""}, wantNothing: true},
		{name: "same content rewritten", change: map[string]string{"dir/key.env": "KEY=secret\n"}, wantNothing: true},
		{name: "nothing happens", wantNothing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{"base.txt": "base\n"})
			writeFiles(t, dir, map[string]string{"notes.txt": "mine\n", "dir/key.env": "KEY=secret\n"})
			// A nested repository without a commit: CommitAll alone refuses
			// it; as the user's, it is left out instead.
			runGit(t, dir, "init", "-q", filepath.Join(dir, "scratch"))

			r, user := openRun(t, dir)
			if len(user) != 3 || user["scratch"] != "" {
				t.Fatalf("Untracked = %v, want notes.txt, dir/key.env and scratch (\"\")", user)
			}
			for name, content := range tt.change {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if content == "" {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			var noted []string
			note := func(msg string, changed []string) string {
				noted = changed
				return msg + "\nincludes " + strings.Join(changed, ", ") + "\n"
			}
			c, err := r.CommitAll(context.Background(), "work", Exclude(user, note))
			if tt.wantNothing {
				if err != ErrNothingToCommit {
					t.Fatalf("CommitAll = %+v, %v; want ErrNothingToCommit", c, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CommitAll: %v", err)
			}
			tree := strings.Fields(runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))
			want := append([]string{"base.txt"}, tt.wantTree...)
			slices.Sort(want)
			if !slices.Equal(tree, want) {
				t.Errorf("HEAD's tree = %v, want %v", tree, want)
			}
			if !slices.Equal(c.Changed, tt.wantChanged) || !slices.Equal(noted, tt.wantChanged) {
				t.Errorf("Changed = %v, note got %v, want %v", c.Changed, noted, tt.wantChanged)
			}
			body := runGit(t, dir, "log", "-1", "--format=%B")
			if len(tt.wantChanged) > 0 && !strings.Contains(body, "includes notes.txt") {
				t.Errorf("commit message %q does not name the changed user file", body)
			}
			// The user's untouched files are still untracked, as they were.
			status := runGit(t, dir, "status", "--porcelain", "--untracked-files=all")
			if !strings.Contains(status, "?? dir/key.env") {
				t.Errorf("git status after the commit:\n%s\nwant dir/key.env untracked", status)
			}
		})
	}
}

// Never's paths stay out whether git ignores them or not (an ignored one is
// not named to git add -A, which fails on an ignored path named even in an
// exclude pathspec), and one the agent staged goes back out of the index.
// Names with a newline, a trailing CR or glob characters are exactly those.
func TestCommitAllNever(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{".gitignore": ".env\n", "a.txt": "a\n"})
	files := map[string]string{".env": "TOKEN=1\n", "local.json": "{}\n", "we\nird": "w\n", "cr\r": "c\n", "g*[lob]": "g\n",
		"work.txt": "agent\n", "we": "agent\n", "ird": "agent\n", "g": "agent\n"}
	writeFiles(t, dir, files)
	runGit(t, dir, "add", "-f", "local.json")
	never := []string{".env", "local.json", "we\nird", "cr\r", "g*[lob]"}
	c, err := mustOpen(t, dir).CommitAll(context.Background(), "work", Never(never))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Unstaged, []string{"local.json"}) {
		t.Errorf("Unstaged = %q, want [local.json]", c.Unstaged)
	}
	got := runGit(t, dir, "ls-tree", "-r", "-z", "--name-only", "HEAD")
	tree := strings.Split(strings.TrimRight(got, "\x00"), "\x00")
	for _, p := range never {
		if slices.Contains(tree, p) {
			t.Errorf("%q committed", p)
		}
	}
	for _, p := range []string{"work.txt", "we", "ird", "g"} {
		if !slices.Contains(tree, p) {
			t.Errorf("%q, the agent's, not committed: %q", p, tree)
		}
	}
}

// Without git, go-git stages: new and changed files are committed, what
// .gitignore ignores, .debussy/ and the user's files at start are not.
func TestCommitAllWithoutGit(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{".gitignore": "*.log\n", "a.txt": "a\n"})
	writeFiles(t, dir, map[string]string{"mine.txt": "the user's\n"})
	r := mustOpen(t, dir, withoutGit())
	if r.Mode() != "go-git" {
		t.Fatalf("Mode = %q", r.Mode())
	}
	user, err := r.Untracked(context.Background())
	if err != nil || len(user) != 1 {
		t.Fatalf("Untracked = %v, %v; want mine.txt", user, err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "new.txt": "n\n", "x.log": "noise\n", ".debussy/state.json": "{}\n"})
	if _, err := r.CommitAll(context.Background(), "work", Exclude(user, nil)); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))
	if want := []string{".gitignore", "a.txt", "new.txt"}; !slices.Equal(got, want) {
		t.Errorf("HEAD holds %q, want %q", got, want)
	}
	if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("status after the commit: %q", st)
	}
}

// A Never path HEAD tracks is the branch's file: its change is committed.
func TestCommitAllNeverTrackedIsCommitted(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"config.env": "A=1\n", "a.txt": "a\n"})
	writeFiles(t, dir, map[string]string{"config.env": "A=2\n"})
	if _, err := mustOpen(t, dir).CommitAll(context.Background(), "work", Never([]string{"config.env"})); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "show", "HEAD:config.env"); got != "A=2" {
		t.Errorf("HEAD's config.env = %q, want the change committed", got)
	}
}

// TestUserFilesOfEveryKindStayOut: the user's files are hidden from git
// add -A by gitlink placeholders whatever they are (a file, an empty one,
// an executable, a symlink, a repository of their own) and whatever the
// submodule settings say, commit after commit, an agent's `git status`
// between them.
func TestUserFilesOfEveryKindStayOut(t *testing.T) {
	for _, cfg := range [][2]string{{}, {"submodule.recurse", "true"}, {"diff.ignoreSubmodules", "none"}, {"core.untrackedCache", "true"}, {"status.submoduleSummary", "true"}} {
		t.Run(cfg[0], func(t *testing.T) {
			isolate(t)
			dir := committedRepo(t, map[string]string{"a.go": "a\n", "src/b.go": "b\n"})
			if cfg[0] != "" {
				runGit(t, dir, "config", cfg[0], cfg[1])
			}
			writeFiles(t, dir, map[string]string{"src/mine.txt": "m\n", "src/empty": "", "x.sh": "#!/bin/sh\n", "src/nested/f": "f\n"})
			if err := os.Chmod(filepath.Join(dir, "x.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a.go", filepath.Join(dir, "src", "link")); err != nil {
				t.Fatal(err)
			}
			nested := filepath.Join(dir, "src", "nested")
			runGit(t, dir, "init", "-q", nested)
			runGit(t, nested, "add", "f")
			runGit(t, nested, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "n")
			r, files := openRun(t, dir)
			for _, content := range []string{"b1\n", "b2\n", "b3\n"} {
				writeFiles(t, dir, map[string]string{"src/b.go": content})
				runGit(t, dir, "status", "--porcelain")
				if _, err := r.CommitAll(context.Background(), "work", Exclude(files, nil)); err != nil {
					t.Fatal(err)
				}
				if got := treeFiles(t, dir); !slices.Equal(got, []string{"a.go", "src/b.go"}) {
					t.Fatalf("HEAD's tree = %v, want a.go and src/b.go", got)
				}
			}
			status := runGit(t, dir, "status", "--porcelain", "--untracked-files=all")
			for _, want := range []string{"?? src/mine.txt", "?? src/empty", "?? x.sh", "?? src/link", "?? src/nested/"} {
				if !strings.Contains(status, want) {
					t.Errorf("git status:\n%s\nwant %q", status, want)
				}
			}
		})
	}
}
