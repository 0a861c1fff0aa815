package gitcommit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Where the user's files crowd the root, git add -A is given the root's
// other entries by name (rootnames.go). Each case commits what the agent
// did, twice in one run, and git is the oracle: a copy of the repository
// without the user's untouched files, committed by `git add -A && git
// commit`, must give the same tree — whatever the root's new entries are
// named, ignored or not, and whether naming was used (named) or not.
func TestRootNamedLikeGit(t *testing.T) {
	const users = 100 // above minHiddenForNames
	cases := []struct {
		name  string
		env   []string
		agent func(t *testing.T, dir string, round int)
		// changed are the user's files the agent changed (its work).
		changed []string
		named   bool
	}{
		{name: "tracked edits", named: true, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{"README.md": fmt.Sprintf("round %d\n", round), "src/a.go": fmt.Sprintf("package a // %d\n", round)})
		}},
		{name: "new root entries named like pathspec magic", named: true, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{
				fmt.Sprintf("new%d.go", round): "package n\n", ":!b": "b\n", "*": "star\n", "[ab]": "class\n", "-n": "dash\n",
				":(glob)**": "g\n", "sp ace": "s\n", "tab\there": "t\n", "ünï": "u\n", "newdir/x.go": "package x\n",
			})
		}},
		{name: "ignored root entries", named: true, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{".env": "SECRET=1\n", "debug.log": "log\n", "build/out.bin": "bin\n",
				"cache/a.log": "a\n", "cache/b.log": "b\n", "mixed/keep.go": "package m\n", "mixed/drop.log": "d\n"})
			must(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
		}},
		{name: "tracked root entries deleted", named: true, agent: func(t *testing.T, dir string, round int) {
			if round == 1 {
				must(t, os.Remove(filepath.Join(dir, "go.mod")))
				must(t, os.RemoveAll(filepath.Join(dir, "docs")))
			} else {
				must(t, os.Remove(filepath.Join(dir, "README.md")))
			}
		}},
		{name: "the agent unignores", named: true, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{".gitignore": "/build/\n.env\n", "debug.log": "now tracked\n"})
		}},
		{name: "the agent stages everything", named: true, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{fmt.Sprintf("work%d.go", round): "package w\n"})
			runGit(t, dir, "add", "-A")
		}},
		{name: "the agent changes and removes user files", named: true, changed: []string{"u007.txt"}, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{"u007.txt": fmt.Sprintf("the agent's now %d\n", round)})
			_ = os.Remove(filepath.Join(dir, "u008.txt"))
		}},
		{name: "a nested repository and a symlink", named: true, agent: func(t *testing.T, dir string, round int) {
			if round == 1 {
				nested := filepath.Join(dir, "vendored")
				writeFiles(t, nested, map[string]string{"v.go": "package v\n"})
				runGit(t, nested, "init", "-q")
				runGit(t, nested, "add", "-A")
				runGit(t, nested, "-c", "user.name=V", "-c", "user.email=v@x", "commit", "-q", "-m", "v")
				must(t, os.Symlink("src", filepath.Join(dir, "link")))
			}
		}},
		{name: "more new root entries than names are given: placeholders", agent: func(t *testing.T, dir string, round int) {
			files := map[string]string{}
			for i := range maxRootNames + 1 {
				files[fmt.Sprintf("gen%d_%03d.go", round, i)] = "package g\n"
			}
			writeFiles(t, dir, files)
		}},
		{name: "core.ignoreCase: placeholders", agent: func(t *testing.T, dir string, round int) {
			runGit(t, dir, "config", "core.ignoreCase", "true")
			writeFiles(t, dir, map[string]string{fmt.Sprintf("new%d.go", round): "package n\n"})
		}},
		{name: "GIT_GLOB_PATHSPECS: placeholders", env: []string{"GIT_GLOB_PATHSPECS=1"}, agent: func(t *testing.T, dir string, round int) {
			writeFiles(t, dir, map[string]string{fmt.Sprintf("new%d.go", round): "package n\n", "*": "star\n"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := isolate(t)
			dir := committedRepo(t, map[string]string{
				"README.md": "readme\n", "go.mod": "module m\n", "src/a.go": "package a\n", "docs/d.md": "d\n",
				".gitignore": "/build/\n*.log\n.env\n",
			})
			user := map[string]string{"src/mine.txt": "beside tracked\n", "notes/n.txt": "a directory of the user's\n"}
			for i := range users {
				user[fmt.Sprintf("u%03d.txt", i)] = fmt.Sprintf("the user's %d\n", i)
			}
			writeFiles(t, dir, user)
			writeFiles(t, dir, map[string]string{"old.log": "ignored at the start\n"})
			r := mustOpen(t, dir, WithEnv(append(diffEnv(home, nil), tc.env...)))
			files, err := r.Untracked(t.Context())
			if err != nil || len(files) != len(user) {
				t.Fatalf("Untracked: %d files, %v", len(files), err)
			}
			for round := 1; round <= 2; round++ {
				writeFiles(t, dir, map[string]string{"src/round.go": fmt.Sprintf("package a // %d\n", round)})
				tc.agent(t, dir, round)
				twin := copyTree(t, dir)
				for p := range user {
					if !contains(tc.changed, p) {
						_ = os.Remove(filepath.Join(twin, filepath.FromSlash(p)))
					}
				}
				runGit(t, twin, "add", "-A")
				runGit(t, twin, "commit", "-q", "--allow-empty", "--no-verify", "-m", "git")
				if _, err := r.CommitAll(t.Context(), "work", Exclude(files, nil)); err != nil {
					t.Fatalf("round %d: CommitAll: %v", round, err)
				}
				if got, want := runGit(t, dir, "rev-parse", "HEAD^{tree}"), runGit(t, twin, "rev-parse", "HEAD^{tree}"); got != want {
					t.Errorf("round %d: tree differs from git's:\n debussy:\n%s\n git:\n%s", round,
						runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"), runGit(t, twin, "ls-tree", "-r", "--name-only", "HEAD"))
				}
				if staged := strings.Fields(runGit(t, dir, "diff", "--cached", "--name-only", "--no-renames", "HEAD")); tc.name != "the agent stages everything" && len(staged) > 0 {
					t.Errorf("round %d: staged against the new commit: %v", round, staged)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*")); len(left) > 0 {
				t.Errorf("shared indexes left behind: %v", left)
			}
			if named := r.rootNamed >= 2; named != tc.named {
				t.Errorf("git add was given the root's names in %d stagings of 2 commits; want named %v", r.rootNamed, tc.named)
			}
		})
	}
}

// A name git add refuses (one gone between the look at the root and git
// add) does not fail the commit: the root's paths get their placeholders
// and git add -A runs whole, as where naming does not apply.
func TestRootNamesRefusedFallsBack(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"README.md": "readme\n", "src/a.go": "package a\n"})
	user := map[string]string{}
	for i := range 100 {
		user[fmt.Sprintf("u%03d.txt", i)] = "the user's\n"
	}
	writeFiles(t, dir, user)
	r, files := openRun(t, dir)
	writeFiles(t, dir, map[string]string{"new.go": "package n\n"}) // the agent's
	time.Sleep(time.Duration(racyMargin) + 100*time.Millisecond)   // the root's listing is kept from the first commit on
	for round := 1; round <= 2; round++ {
		writeFiles(t, dir, map[string]string{"src/a.go": fmt.Sprintf("package a // %d\n", round)})
		if round == 2 {
			// The kept answer, for HEAD's root as it is now, names an
			// entry that is not there.
			r.rootMemo.inHead = strings.Fields(runGit(t, dir, "ls-tree", "--name-only", "HEAD"))
			r.rootMemo.names = append(slices.Clone(r.rootMemo.names), "gone.txt")
			r.rootMemo.untracked = append(slices.Clone(r.rootMemo.untracked), "gone.txt")
		}
		if _, err := r.CommitAll(t.Context(), "work", Exclude(files, nil)); err != nil {
			t.Fatalf("round %d: CommitAll: %v", round, err)
		}
		tree := treeFiles(t, dir)
		for p := range user {
			if contains(tree, p) {
				t.Fatalf("round %d: the user's %s committed", round, p)
			}
		}
		if !contains(tree, "new.go") || runGit(t, dir, "show", "HEAD:src/a.go") != fmt.Sprintf("package a // %d", round) {
			t.Errorf("round %d: the agent's work not committed: %v", round, tree)
		}
	}
	if r.rootNamed != 1 {
		t.Errorf("git add was given the root's names %d times; want once (the second refused)", r.rootNamed)
	}
}

// Which of the root's new entries are ignored is asked again once the
// rules change: a .gitignore rewritten (to the same size, too) between
// commits whose root listing is kept.
func TestRootIgnoredFollowsTheRules(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"README.md": "readme\n", "src/a.go": "package a\n", ".gitignore": "*.log\n"})
	user := map[string]string{}
	for i := range 100 {
		user[fmt.Sprintf("u%03d.txt", i)] = "the user's\n"
	}
	writeFiles(t, dir, user)
	r, files := openRun(t, dir)
	writeFiles(t, dir, map[string]string{"debug.log": "log\n", "notes.tmp": "tmp\n"}) // the agent's
	for round, rules := range []string{"", "", "*.tmp\n", "*.tmp\n"} {
		if rules != "" {
			writeFiles(t, dir, map[string]string{".gitignore": rules})
		}
		time.Sleep(time.Duration(racyMargin) + 100*time.Millisecond) // listings and rules old enough to be kept
		writeFiles(t, dir, map[string]string{"src/a.go": fmt.Sprintf("package a // %d\n", round)})
		if _, err := r.CommitAll(t.Context(), "work", Exclude(files, nil)); err != nil {
			t.Fatalf("round %d: CommitAll: %v", round, err)
		}
		tree := treeFiles(t, dir)
		// notes.tmp, committed at round 0, stays tracked when ignored.
		if logIn, tmpIn := contains(tree, "debug.log"), contains(tree, "notes.tmp"); logIn != (round >= 2) || !tmpIn {
			t.Errorf("round %d (rules %q): debug.log committed %v, notes.tmp %v", round, rules, logIn, tmpIn)
		}
	}
	if r.rootNamed != 4 {
		t.Errorf("git add was given the root's names %d times of 4", r.rootNamed)
	}
}
