package gitcommit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// While held, the config family claude's sandbox binds exists in the git
// dir (config.lock, config.worktree; a linked worktree's config.worktree),
// so no claude creates or removes it under another's command; git's config
// writes wait meanwhile, the branch commands debussy uses still work, and
// Release removes only what it made. A config.lock that was there (a git
// writing the config) is left alone, and a killed holder's is reclaimed.
func TestHoldSandboxPlaceholders(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "a\n"})
	git := filepath.Join(dir, ".git")
	r := mustOpen(t, dir)
	held, err := r.HoldSandboxPlaceholders()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.lock", "config.worktree"} {
		if fi, err := os.Stat(filepath.Join(git, name)); err != nil || fi.Size() != 0 {
			t.Errorf("%s: %v, %v; want an empty file", name, fi, err)
		}
	}
	if _, err := gitOutput(dir, "config", "x.y", "z"); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Errorf("git config while held: %v, want the lock refused", err)
	}
	wt := filepath.Join(dir, ".debussy", "worktrees", "r1", "phase-1")
	if err := r.AddWorktree(context.Background(), wt, "debussy/r1/phase-1", runGit(t, dir, "rev-parse", "HEAD")); err != nil {
		t.Fatalf("git worktree add while held: %v", err)
	}
	linked, err := r.OpenLinked(wt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := linked.HoldSandboxPlaceholders(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(git, "worktrees", "phase-1", "config.worktree")); err != nil {
		t.Errorf("the worktree's config.worktree: %v", err)
	}
	runGit(t, wt, "commit", "-q", "--allow-empty", "-m", "in the worktree")
	if err := r.RemoveWorktree(context.Background(), wt); err != nil {
		t.Fatalf("git worktree remove while held: %v", err)
	}
	if err := r.DeleteBranch(context.Background(), "debussy/r1/phase-1"); err != nil {
		t.Fatalf("git branch -D while held: %v", err)
	}
	held.Release()
	for _, name := range []string{"config.lock", "config.worktree"} {
		if _, err := os.Stat(filepath.Join(git, name)); !os.IsNotExist(err) {
			t.Errorf("%s after Release: %v", name, err)
		}
	}
	runGit(t, dir, "config", "x.y", "z")

	// Someone else's lock: left, before and after.
	if err := os.WriteFile(filepath.Join(git, "config.lock"), []byte("[x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err = r.HoldSandboxPlaceholders()
	if err != nil {
		t.Fatal(err)
	}
	held.Release()
	if b, err := os.ReadFile(filepath.Join(git, "config.lock")); err != nil || string(b) != "[x]\n" {
		t.Errorf("a config.lock that was there: %q, %v", b, err)
	}
	os.Remove(filepath.Join(git, "config.lock"))

	// A holder killed with its lock held: the next run's ReclaimLocks.
	if _, err := r.HoldSandboxPlaceholders(); err != nil {
		t.Fatal(err)
	}
	records, _ := filepath.Glob(filepath.Join(git, lockOwnersDir, "*"))
	if len(records) != 1 {
		t.Fatalf("owner records: %v", records)
	}
	if err := os.WriteFile(records[0], []byte("999999999\n"+filepath.Join(git, "config.lock")+"\n"+hostname()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if locks, err := r.ReclaimLocks(); err != nil || len(locks) != 1 {
		t.Errorf("ReclaimLocks: %v, %v", locks, err)
	}
	runGit(t, dir, "config", "x.y", "w")
}

// debussy run from a linked worktree holds the common dir's files too:
// every claude of the repository binds those.
func TestHoldSandboxPlaceholdersFromALinkedWorktree(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.txt": "a\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	runGit(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	r := mustOpen(t, wt)
	held, err := r.HoldSandboxPlaceholders()
	if err != nil {
		t.Fatal(err)
	}
	git := filepath.Join(dir, ".git")
	for _, name := range []string{"config.lock", "config.worktree", "worktrees/wt/config.worktree"} {
		if _, err := os.Stat(filepath.Join(git, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	held.Release()
	for _, name := range []string{"config.lock", "config.worktree", "worktrees/wt/config.worktree"} {
		if _, err := os.Stat(filepath.Join(git, name)); !os.IsNotExist(err) {
			t.Errorf("%s after Release: %v", name, err)
		}
	}
}
