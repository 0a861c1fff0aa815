package gitcommit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A hand-made linked worktree is one git itself recognises: listed, clean,
// on its branch, committable by CommitAll and by git, and gone after
// RemoveWorktree without anything for `git worktree prune` to do.
func TestAddRemoveWorktree(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", ".gitignore": "ignored\n"})
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	base := mustCommitAll(t, dir, "base").Hash
	writeFiles(t, dir, map[string]string{"untracked.txt": "mine\n"})

	r := mustOpen(t, dir)
	wt := filepath.Join(dir, ".debussy", "worktrees", "r1", "phase-1")
	if err := r.AddWorktree(context.Background(), wt, "debussy/r1/phase-1", base); err != nil {
		t.Fatal(err)
	}
	list := runGit(t, dir, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+wt) || !strings.Contains(list, "branch refs/heads/debussy/r1/phase-1") {
		t.Fatalf("git worktree list:\n%s", list)
	}
	// git reads the reflog line createRef writes for the new branch.
	if got := runGit(t, dir, "reflog", "show", "--format=%gs", "debussy/r1/phase-1"); got != "branch: Created from "+base {
		t.Fatalf("branch reflog = %q", got)
	}
	if st := runGit(t, wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status in the worktree: %q", st)
	}
	if got := runGit(t, wt, "rev-parse", "HEAD"); got != base {
		t.Fatalf("worktree HEAD = %s, want %s", got, base)
	}
	if fi, err := os.Stat(filepath.Join(wt, "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Fatalf("run.sh not executable: %v %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(wt, "link")); err != nil || target != "a.txt" {
		t.Fatalf("link = %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(wt, "untracked.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the user's untracked file is in the worktree: %v", err)
	}

	// Work in it is committed to its branch, not the user's.
	writeFiles(t, wt, map[string]string{"a.txt": "changed\n", "new.txt": "n\n"})
	c, err := mustOpen(t, wt).CommitAll(context.Background(), "phase work")
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "rev-parse", "debussy/r1/phase-1"); got != c.Hash {
		t.Fatalf("branch = %s, want %s", got, c.Hash)
	}
	if got := runGit(t, dir, "rev-parse", "HEAD"); got != base {
		t.Fatalf("user's HEAD moved to %s", got)
	}
	if head, err := r.BranchHead("debussy/r1/phase-1"); err != nil || head != c.Hash {
		t.Fatalf("BranchHead = %s, %v", head, err)
	}
	if head, err := r.BranchHead("nope"); err != nil || head != "" {
		t.Fatalf("BranchHead(nope) = %q, %v", head, err)
	}
	runGit(t, dir, "fsck", "--strict")

	if err := r.RemoveWorktree(context.Background(), wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree still there: %v", err)
	}
	if list := runGit(t, dir, "worktree", "list", "--porcelain"); strings.Contains(list, wt) {
		t.Fatalf("still listed:\n%s", list)
	}
	if out := runGit(t, dir, "worktree", "prune", "--dry-run", "-v"); out != "" {
		t.Fatalf("git worktree prune would do: %s", out)
	}

	// The branch survives and a new worktree on it resumes where it was.
	if err := r.AddWorktree(context.Background(), wt, "debussy/r1/phase-1", base); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, wt, "rev-parse", "HEAD"); got != c.Hash {
		t.Fatalf("reused branch at %s, want %s", got, c.Hash)
	}
	if b, _ := os.ReadFile(filepath.Join(wt, "a.txt")); string(b) != "changed\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if err := r.RemoveWorktree(context.Background(), wt); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteBranch(context.Background(), "debussy/r1/phase-1"); err != nil {
		t.Fatal(err)
	}
	if out, _ := gitOutput(dir, "branch", "--list", "debussy/*"); out != "" {
		t.Fatalf("branches left: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "debussy")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty ref directories left: %v", err)
	}
	runGit(t, dir, "fsck", "--strict")
	if err := r.RemoveWorktree(context.Background(), filepath.Join(dir, "sub")); err == nil {
		t.Fatal("RemoveWorktree of a plain directory succeeded")
	}
}

// phaseBranch makes branch from the user's HEAD in a worktree and commits
// files there (a "" content deletes).
func phaseBranch(t *testing.T, r *Repo, dir, branch string, files map[string]string) {
	t.Helper()
	head := runGit(t, dir, "rev-parse", "HEAD")
	wt := filepath.Join(t.TempDir(), strings.ReplaceAll(branch, "/", "-"))
	if err := r.AddWorktree(context.Background(), wt, branch, head); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if content == "" {
			if err := os.Remove(filepath.Join(wt, name)); err != nil {
				t.Fatal(err)
			}
			delete(files, name)
		}
	}
	writeFiles(t, wt, files)
	if _, err := mustOpen(t, wt).CommitAll(context.Background(), "work on "+branch); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(context.Background(), wt); err != nil {
		t.Fatal(err)
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name        string
		base        map[string]string // added to the base commit
		one, two    map[string]string // the two phases' changes
		user        map[string]string // untracked files of the user's
		wantErr     error
		conflicts   []string
		untracked   bool
		wantFiles   map[string]string // after both merges
		wantDeleted []string
	}{
		{
			name:      "different files",
			one:       map[string]string{"a.txt": "a1\n", "new1.txt": "1\n"},
			two:       map[string]string{"b.txt": "b2\n", "dir/new2.txt": "2\n"},
			user:      map[string]string{"mine.txt": "user\n"},
			wantFiles: map[string]string{"a.txt": "a1\n", "b.txt": "b2\n", "new1.txt": "1\n", "dir/new2.txt": "2\n", "mine.txt": "user\n"},
		},
		{
			name:        "a delete and an edit elsewhere",
			one:         map[string]string{"a.txt": ""},
			two:         map[string]string{"b.txt": "b2\n"},
			wantFiles:   map[string]string{"b.txt": "b2\n"},
			wantDeleted: []string{"a.txt"},
		},
		{
			name:      "the same change on both sides",
			one:       map[string]string{"a.txt": "same\n"},
			two:       map[string]string{"a.txt": "same\n"},
			wantFiles: map[string]string{"a.txt": "same\n"},
		},
		{
			name:      "same file, different lines",
			one:       map[string]string{"c.txt": "one\n2\n3\n4\n5\n", "a.txt": "a\nline2\nline3\n"},
			two:       map[string]string{"c.txt": "1\n2\n3\n4\nfive\n", "a.txt": "zero\na\nline2\n"},
			wantFiles: map[string]string{"c.txt": "one\n2\n3\n4\nfive\n", "a.txt": "zero\na\nline2\nline3\n"},
		},
		{
			name:      "same file, adjacent lines",
			one:       map[string]string{"a.txt": "a\nline2 one\n"},
			two:       map[string]string{"a.txt": "a two\nline2\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"a.txt"},
		},
		{
			name:      "same line",
			one:       map[string]string{"c.txt": "1\n2\nthree\n4\n5\n", "b.txt": "b1\n"},
			two:       map[string]string{"c.txt": "1\n2\nTHREE\n4\n5\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"c.txt"},
		},
		{
			name:      "different lines of a file git merges whole",
			base:      map[string]string{".gitattributes": "c.txt -merge\n"},
			one:       map[string]string{"c.txt": "one\n2\n3\n4\n5\n"},
			two:       map[string]string{"c.txt": "1\n2\n3\n4\nfive\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"c.txt"},
		},
		{
			name:      "different lines of a binary file",
			base:      map[string]string{"c.txt": "1\n2\x00\n3\n4\n5\n"},
			one:       map[string]string{"c.txt": "one\n2\x00\n3\n4\n5\n"},
			two:       map[string]string{"c.txt": "1\n2\x00\n3\n4\nfive\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"c.txt"},
		},
		{
			name:      "edit and delete",
			one:       map[string]string{"a.txt": "edited\n"},
			two:       map[string]string{"a.txt": ""},
			wantErr:   ErrConflict,
			conflicts: []string{"a.txt"},
		},
		{
			name:      "file and directory",
			one:       map[string]string{"x": "file\n"},
			two:       map[string]string{"x/y": "in dir\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"x"}, // git's CONFLICT (file/directory) names the file
		},
		{
			name:      "an untracked file of the user's in the way",
			one:       map[string]string{"c.txt": "1\n"},
			two:       map[string]string{"mine.txt": "theirs\n"},
			user:      map[string]string{"mine.txt": "user\n"},
			wantErr:   ErrConflict,
			conflicts: []string{"mine.txt"},
			untracked: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := newRepo(t)
			writeFiles(t, dir, map[string]string{"a.txt": "a\nline2\n", "b.txt": "b\n", "c.txt": "1\n2\n3\n4\n5\n"})
			writeFiles(t, dir, tt.base)
			mustCommitAll(t, dir, "base")
			r := mustOpen(t, dir)
			phaseBranch(t, r, dir, "debussy/r/phase-1", tt.one)
			phaseBranch(t, r, dir, "debussy/r/phase-2", tt.two)
			writeFiles(t, dir, tt.user)

			c1, err := r.Merge(context.Background(), "debussy/r/phase-1", "merge phase 1")
			if err != nil {
				t.Fatalf("first merge: %v", err)
			}
			before := runGit(t, dir, "rev-parse", "HEAD")
			if before != c1.Hash {
				t.Fatalf("HEAD %s, merge %s", before, c1.Hash)
			}
			// The branch could have been fast-forwarded: a merge commit
			// all the same, as with --no-ff.
			if p := strings.Fields(runGit(t, dir, "rev-list", "--parents", "-n1", "HEAD")); len(p) != 3 {
				t.Fatalf("the first merge has parents %v, want two", p[1:])
			}
			c2, err := r.Merge(context.Background(), "debussy/r/phase-2", "merge phase 2")
			if tt.wantErr != nil {
				var ce *ConflictError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &ce) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !slices.Equal(ce.Files, tt.conflicts) || ce.Untracked != tt.untracked || ce.Branch != "debussy/r/phase-2" {
					t.Fatalf("conflict = %+v, want %v", ce, tt.conflicts)
				}
				if got := runGit(t, dir, "rev-parse", "HEAD"); got != before {
					t.Fatalf("HEAD moved to %s", got)
				}
				if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
					t.Fatalf("status after a refused merge: %q", st)
				}
				if _, err := os.Stat(filepath.Join(dir, ".git", "MERGE_HEAD")); !errors.Is(err, os.ErrNotExist) {
					t.Fatal("MERGE_HEAD left")
				}
				for name, content := range tt.user {
					if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != content {
						t.Fatalf("user's %s = %q", name, b)
					}
				}
				runGit(t, dir, "rev-parse", "debussy/r/phase-2") // kept
				return
			}
			if err != nil {
				t.Fatalf("second merge: %v", err)
			}
			parents := strings.Fields(runGit(t, dir, "rev-list", "--parents", "-n1", "HEAD"))
			want := []string{c2.Hash, before, runGit(t, dir, "rev-parse", "debussy/r/phase-2")}
			if !slices.Equal(parents, want) {
				t.Fatalf("parents = %v, want %v", parents, want)
			}
			if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
				t.Fatalf("status after the merge: %q", st)
			}
			for name, content := range tt.wantFiles {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
					t.Fatalf("%s = %q, %v; want %q", name, b, err, content)
				}
				if _, ok := tt.user[name]; ok {
					if out := runGit(t, dir, "ls-files", name); out != "" {
						t.Fatalf("the user's %s was committed", name)
					}
				}
			}
			for _, name := range tt.wantDeleted {
				if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s still there", name)
				}
			}
			// git's own merge of the same branches agrees.
			twin := copyTree(t, dir)
			runGit(t, twin, "reset", "-q", "--hard", "HEAD~1")
			runGit(t, twin, "merge", "-q", "--no-edit", "--no-ff", "debussy/r/phase-2")
			if a, b := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); a != b {
				t.Fatalf("tree %s, git merge made %s", a, b)
			}
			if _, err := r.Merge(context.Background(), "debussy/r/phase-2", "again"); !errors.Is(err, ErrNothingToCommit) {
				t.Fatalf("merging again: %v", err)
			}
			runGit(t, dir, "fsck", "--strict")
		})
	}
}

// A hook refusing the merge commit leaves HEAD, the tracked files and the
// index as they were.
func TestMergeHookRejected(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	mustCommitAll(t, dir, "base")
	r := mustOpen(t, dir)
	phaseBranch(t, r, dir, "debussy/r/phase-1", map[string]string{"a.txt": "changed\n", "b.txt": "new\n"})
	before := runGit(t, dir, "rev-parse", "HEAD")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	writeFiles(t, dir, map[string]string{".git/hooks/pre-commit": "#!/bin/sh\necho no merges >&2\nexit 1\n"})
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := r.Merge(context.Background(), "debussy/r/phase-1", "merge")
	if !errors.Is(err, ErrHookRejected) {
		t.Fatalf("err = %v", err)
	}
	if got := runGit(t, dir, "rev-parse", "HEAD"); got != before {
		t.Fatalf("HEAD moved")
	}
	if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("status: %q", st)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "MERGE_HEAD")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("MERGE_HEAD left")
	}
}

// A side that made a file executable and one that edited another line of
// it merge as git merges them: both lines, and the executable bit.
func TestMergeLinesAndMode(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"run.sh": "#!/bin/sh\necho 1\necho 2\necho 3\n"})
	base := mustCommitAll(t, dir, "base").Hash
	r := mustOpen(t, dir)
	wt := filepath.Join(t.TempDir(), "wt")
	if err := r.AddWorktree(context.Background(), wt, "debussy/r/phase-1", base); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, wt, map[string]string{"run.sh": "#!/bin/sh\necho 1\necho 2\necho three\n"})
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := mustOpen(t, wt).CommitAll(context.Background(), "phase 1"); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"run.sh": "#!/bin/bash\necho 1\necho 2\necho 3\n"})
	mustCommitAll(t, dir, "user")

	twin := copyTree(t, dir)
	if _, err := r.Merge(context.Background(), "debussy/r/phase-1", "merge phase 1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "run.sh")); string(b) != "#!/bin/bash\necho 1\necho 2\necho three\n" {
		t.Fatalf("run.sh = %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Fatalf("run.sh not executable: %v %v", fi, err)
	}
	if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("status after the merge: %q", st)
	}
	runGit(t, twin, "merge", "-q", "--no-edit", "--no-ff", "debussy/r/phase-1")
	if a, b := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); a != b {
		t.Fatalf("tree %s, git merge made %s", a, b)
	}
	runGit(t, dir, "fsck", "--strict")
}

// A git process holding index.lock: the merge is refused before the work
// tree is touched (ErrLocked, so the caller can wait and retry), and when
// the lock is taken after the files are written, undoing the merge still
// takes them back out, leaving no untracked copies in the user's way.
func TestMergeIndexLocked(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	mustCommitAll(t, dir, "base")
	r := mustOpen(t, dir)
	phaseBranch(t, r, dir, "debussy/r/phase-1", map[string]string{"new.txt": "new\n", "a.txt": "a2\n"})
	lock := filepath.Join(dir, ".git", "index.lock")
	clean := func(when string) {
		t.Helper()
		if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Fatalf("%s: status %q", when, st)
		}
	}

	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Merge(context.Background(), "debussy/r/phase-1", "merge"); !errors.Is(err, ErrLocked) {
		t.Fatalf("merge under a held lock: %v, want ErrLocked", err)
	}
	os.Remove(lock)
	clean("after the refused merge")

	m, err := r.prepareMerge(context.Background(), "debussy/r/phase-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.undoMerge(context.Background(), m); err != nil {
		t.Fatalf("undo under a held lock: %v", err)
	}
	os.Remove(lock)
	clean("after the undone merge")
	if _, err := r.Merge(context.Background(), "debussy/r/phase-1", "merge"); err != nil {
		t.Fatalf("merge once the lock is gone: %v", err)
	}
}
