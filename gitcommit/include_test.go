package gitcommit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIgnoredMatchingMatchesGit holds IgnoredMatching to git: the files
// `git ls-files --others --ignored --exclude-standard` lists (what git
// ignores) that `git ls-files --others --ignored --exclude-from=INCLUDE`
// lists too (what the include patterns select).
func TestIgnoredMatchingMatchesGit(t *testing.T) {
	isolate(t)
	tests := []struct {
		name    string
		include string
	}{
		{"basename", ".env\n"},
		{"glob and anchored", ".env*\n/config/*.json\n"},
		{"directory", "secrets/\n"},
		{"negation", "*.local\n!keep.local\n"},
		{"double star", "**/cache/*.db\n"},
		{"tracked and unignored never", "*.txt\n*.json\n"},
		{"comments and blanks", "# nothing\n\n"},
	}
	dir := committedRepo(t, map[string]string{
		".gitignore":          ".env*\n*.local\nsecrets/\nnode_modules/\n/config/*.json\n!config/tracked.json\ncache/\n",
		"config/tracked.json": "{}\n", "readme.txt": "tracked\n", "sub/.gitignore": "*.db\n",
	})
	writeFiles(t, dir, map[string]string{
		".env": "A=1\n", ".env.test": "B=2\n", "sub/.env": "C=3\n", "app.local": "x\n", "keep.local": "x\n",
		"secrets/a.key": "k\n", "secrets/deep/b.key": "k\n", "node_modules/pkg/.env": "D=4\n",
		"config/db.json": "{}\n", "config/sub/x.json": "{}\n", "sub/cache/a.db": "db\n", "cache/b.db": "db\n",
		"notes.txt": "untracked, not ignored\n", ".debussy/runs/x/.env": "E=5\n", "sub/x.db": "ignored\n",
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inc := filepath.Join(t.TempDir(), "include")
			if err := os.WriteFile(inc, []byte(tt.include), 0o644); err != nil {
				t.Fatal(err)
			}
			ignored := strings.Fields(runGit(t, dir, "ls-files", "--others", "--ignored", "--exclude-standard"))
			selected := strings.Fields(runGit(t, dir, "ls-files", "--others", "--ignored", "--exclude-from="+inc))
			var want []string
			for _, p := range ignored {
				if slices.Contains(selected, p) && !strings.HasPrefix(p, ".debussy/") {
					want = append(want, p)
				}
			}
			files, err := mustOpen(t, dir).IgnoredMatching([]byte(tt.include))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Path)
				if !f.Mode.IsRegular() || f.Mode.Perm() != 0o644 {
					t.Errorf("%s: mode %v", f.Path, f.Mode)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("IgnoredMatching(%q) = %v, git says %v", tt.include, got, want)
			}
		})
	}
}

// TestCommitAllNever: a path given to Never stays out of the commit even
// once no ignore rule covers it, and even after its content changed.
func TestCommitAllNever(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{".gitignore": ".env\n", "a.txt": "a\n"})
	writeFiles(t, dir, map[string]string{".env": "TOKEN=1\n", ".gitignore": "", "b.txt": "b\n"})
	writeFiles(t, dir, map[string]string{".env": "TOKEN=2\n"})
	c, err := mustOpen(t, dir).CommitAll("work", Never([]string{".env"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "show", "--name-only", "--format=", c.Hash); got != ".gitignore\nb.txt" {
		t.Errorf("committed %q, want .gitignore and b.txt only", got)
	}
}

// TestCommitAllNeverStaged: a Never path the agent force-added (git add -f)
// is taken back out of the index and left in the worktree; a Never path
// HEAD already tracks is committed as usual.
func TestCommitAllNeverStaged(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{".gitignore": ".env\nconf/\n", "a.txt": "a\n", "kept.cfg": "v1\n"})
	writeFiles(t, dir, map[string]string{".env": "TOKEN=1\n", "conf/local.yaml": "k: v\n", "kept.cfg": "v2\n", "b.txt": "b\n"})
	runGit(t, dir, "add", "-f", ".env", "conf/local.yaml")
	c, err := mustOpen(t, dir).CommitAll("work", Never([]string{".env", "conf/local.yaml", "kept.cfg"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, dir, "show", "--name-only", "--format=", c.Hash); got != "b.txt\nkept.cfg" {
		t.Errorf("committed %q, want b.txt and kept.cfg (HEAD tracks it)", got)
	}
	if !slices.Equal(c.Unstaged, []string{".env", "conf/local.yaml"}) {
		t.Errorf("Unstaged = %v", c.Unstaged)
	}
	if got := runGit(t, dir, "ls-files", ".env", "conf"); got != "" {
		t.Errorf("still in the index: %q", got)
	}
	if got := runGit(t, dir, "status", "--porcelain", "--ignored"); got != "!! .env\n!! conf/" {
		t.Errorf("git status after the commit:\n%s", got)
	}
}
