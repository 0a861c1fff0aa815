package gitcommit

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestARunOfCommits is one Repo making a run's commits while the agent
// does what agents do between them (its own git add, git add -A, git
// commit, a new file among the user's, a user's file edited or removed):
// every commit holds exactly the agent's work, the user's files stay
// out, and the commits that may start from the last one's staged index
// (keptindex.go) and kept answers (hidememo.go) do, without changing a
// commit.
func TestARunOfCommits(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.go": "a0\n", "src/b.go": "b0\n", "src/c.go": "c0\n"})
	user := map[string]string{"notes/n1.txt": "n1\n", "notes/deep/n2.txt": "n2\n", "src/mine.txt": "mine\n", "src/mine2.txt": "mine2\n", "top.txt": "top\n"}
	writeFiles(t, dir, user)
	time.Sleep(1100 * time.Millisecond) // older than the run: their directories' listings are kept
	r, files := openRun(t, dir)
	if len(files) != len(user) {
		t.Fatalf("Untracked = %v", files)
	}
	tracked := map[string]string{"a.go": "a0\n", "src/b.go": "b0\n", "src/c.go": "c0\n"}
	write := func(p, content string) {
		writeFiles(t, dir, map[string]string{p: content})
		tracked[p] = content
	}
	remove := func(p string) {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
		delete(tracked, p)
		delete(user, p)
	}
	steps := []struct {
		name  string
		do    func()
		kept  bool // the commit may start from the last one's staged index
		extra []string
	}{
		{name: "an edit", do: func() { write("a.go", "a1\n") }},
		{name: "another edit", do: func() { write("a.go", "a2\n") }, kept: true},
		{name: "an edit of the same size at once", do: func() { write("a.go", "a3\n") }, kept: true},
		{name: "the agent stages a user file", do: func() {
			runGit(t, dir, "add", "notes/n1.txt")
			write("src/b.go", "b1\n")
		}, extra: []string{"A  notes/n1.txt"}},
		{name: "the agent adds a file among the user's", do: func() { write("notes/agent.go", "new\n") }},
		{name: "the agent runs git add -A", do: func() {
			runGit(t, dir, "add", "-A")
			write("src/c.go", "c1\n")
		}, extra: []string{"A  notes/n1.txt", "A  src/mine.txt", "A  top.txt"}},
		{name: "a user file removed, a tracked one too", do: func() {
			remove("src/mine2.txt")
			remove("src/c.go")
			write("a.go", "a4\n")
		}},
		{name: "a new directory of the agent's", do: func() { write("pkg/x/x.go", "x\n") }},
		{name: "the agent commits on its own", do: func() {
			write("own.go", "own\n")
			runGit(t, dir, "add", "own.go")
			runGit(t, dir, "commit", "-q", "-m", "agent's own")
			write("a.go", "a5\n")
		}},
		{name: "an edit after that", do: func() { write("a.go", "a6\n") }, kept: true},
		{name: "a file marked assume-unchanged, then edited", do: func() {
			runGit(t, dir, "update-index", "--assume-unchanged", "a.go")
			writeFiles(t, dir, map[string]string{"a.go": "a7\n"}) // git add -A leaves it: so must the commit
			write("src/b.go", "b2\n")
		}},
	}
	for _, st := range steps {
		used := r.keptUsed
		st.do()
		if _, err := r.CommitAll(context.Background(), st.name, Exclude(files, nil)); err != nil {
			t.Fatalf("%s: CommitAll: %v", st.name, err)
		}
		want := slices.Sorted(maps.Keys(tracked))
		if got := treeFiles(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s: HEAD's tree = %v, want %v", st.name, got, want)
		}
		for p, content := range tracked {
			if got := runGit(t, dir, "show", "HEAD:"+p) + "\n"; got != content {
				t.Errorf("%s: HEAD:%s = %q, want %q", st.name, p, got, content)
			}
		}
		var status []string
		for p := range user {
			status = append(status, "?? "+p)
		}
		if st.extra != nil {
			status = st.extra // the agent's staging stays as it left it
		}
		s := runGit(t, dir, "status", "--porcelain", "--untracked-files=all")
		for _, line := range status {
			if !strings.Contains(s, line) {
				t.Errorf("%s: git status:\n%s\nwant %q", st.name, s, line)
			}
		}
		if st.kept && r.keptUsed != used+1 {
			t.Errorf("%s: the commit did not start from the last one's staged index", st.name)
		}
		if st.extra != nil {
			runGit(t, dir, "reset", "-q") // the agent's staging undone
		}
	}
}

// TestKeptIndexNotWithHooks: where the user has a commit hook, each commit
// starts from the index again — a hook may stage what git add -A would
// not, here an ignored file it force-adds once, and the next commit keeps
// it as git's would (started from the last staged index, it was dropped).
func TestKeptIndexNotWithHooks(t *testing.T) {
	isolate(t)
	dir := committedRepo(t, map[string]string{"a.go": "a0\n", ".gitignore": "gen.log\n"})
	writeFiles(t, dir, map[string]string{"notes.txt": "mine\n"})
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	script := "#!/bin/sh\n[ -e .git/generated ] || { echo generated > gen.log && git add -f gen.log && touch .git/generated; }\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r, files := openRun(t, dir)
	for i, content := range []string{"a1\n", "a2\n", "a3\n"} {
		writeFiles(t, dir, map[string]string{"a.go": content})
		if _, err := r.CommitAll(context.Background(), "work", Exclude(files, nil)); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		if got := treeFiles(t, dir); !slices.Equal(got, []string{".gitignore", "a.go", "gen.log"}) {
			t.Errorf("commit %d: HEAD's tree = %v, want the hook's gen.log kept", i, got)
		}
	}
	if r.keptUsed != 0 {
		t.Errorf("%d commits started from a kept index with a pre-commit hook in place", r.keptUsed)
	}
}
