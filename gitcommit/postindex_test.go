package gitcommit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// post-index-change runs after the index is written, as in `git add -A &&
// git commit`: with "0" "0" (neither the worktree nor skip-worktree bits
// were updated), seeing the new index. git writes the index twice there
// (add, then commit with its cached tree), CommitAll once; what the hook
// last sees is the same.
func TestPostIndexChangeHookAsGit(t *testing.T) {
	isolate(t)
	hook := "#!/bin/sh\necho \"$1 $2 $(git ls-files -s | git hash-object --stdin)\" >> \"$(git rev-parse --git-dir)/pic.log\"\n"
	repos := map[string]string{}
	for _, who := range []string{"git", "debussy"} {
		dir := newRepo(t)
		writeFiles(t, dir, map[string]string{"a.txt": "a\n", "src/b.go": "package b\n"})
		runGit(t, dir, "add", "-A")
		runGit(t, dir, "commit", "-q", "-m", "first")
		must(t, os.WriteFile(filepath.Join(dir, ".git", "hooks", "post-index-change"), []byte(hook), 0o755))
		writeFiles(t, dir, map[string]string{"a.txt": "changed\n", "new.txt": "n\n"})
		must(t, os.Remove(filepath.Join(dir, "src", "b.go")))
		if who == "git" {
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "-q", "-m", "second")
		} else {
			mustCommitAll(t, dir, "second")
		}
		b, err := os.ReadFile(filepath.Join(dir, ".git", "pic.log"))
		if err != nil {
			t.Fatalf("%s: the hook did not run: %v", who, err)
		}
		repos[who] = string(b)
	}
	last := func(log string) string {
		lines := strings.Split(strings.TrimSpace(log), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "0 0 ") {
				t.Errorf("hook arguments: %q, want \"0 0\"", l)
			}
		}
		return lines[len(lines)-1]
	}
	if g, d := last(repos["git"]), last(repos["debussy"]); g != d {
		t.Errorf("post-index-change last saw:\ngit:     %s\ndebussy: %s", g, d)
	}
}
