package gitcommit

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// minMergeTreeGit is the first git version with `merge-tree --write-tree`.
var minMergeTreeGit = [2]int{2, 38}

// gitMergeBin is the git binary that merges, "" when there is none (or
// it is too old); asked once per process.
var gitMergeBin = sync.OnceValue(func() string {
	bin, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	if v, ok := parseGitVersion(string(out)); !ok || cmpVersion(v, minMergeTreeGit) < 0 {
		return ""
	}
	return bin
})

// mergeEngine is the git binary Merge uses ("" when none can).
var mergeEngine = gitMergeBin

// parseGitVersion reads major and minor from `git --version` output
// ("git version 2.39.5", "git version 2.39.3 (Apple Git-145)",
// "git version 2.45.1.windows.1").
func parseGitVersion(s string) ([2]int, bool) {
	f := strings.Fields(s)
	if len(f) < 3 || f[0] != "git" || f[1] != "version" {
		return [2]int{}, false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{major, minor}, true
}

func cmpVersion(a, b [2]int) int {
	if a[0] != b[0] {
		return a[0] - b[0]
	}
	return a[1] - b[1]
}

// needGitMerge skips a test when no git here can do the merges.
func needGitMerge(t *testing.T) {
	t.Helper()
	if gitMergeBin() == "" {
		t.Skip("no git with merge-tree --write-tree (2.38+)")
	}
}

// oracleMergeTree is `git merge-tree --write-tree ours theirs` in dir: the
// merged tree, or "" for a conflict.
func oracleMergeTree(t *testing.T, dir, ours, theirs string) string {
	t.Helper()
	out, err := gitCmd(dir, "merge-tree", "--write-tree", "--allow-unrelated-histories", ours, theirs).Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return strings.TrimSpace(string(out))
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return ""
	default:
		t.Fatalf("git merge-tree: %v", err)
		return ""
	}
}

func TestParseGitVersion(t *testing.T) {
	for in, want := range map[string][2]int{
		"git version 2.39.5\n":                 {2, 39},
		"git version 2.39.3 (Apple Git-145)\n": {2, 39},
		"git version 2.45.1.windows.1\n":       {2, 45},
		"git version 3.0\n":                    {3, 0},
		"git version 2.38.0.rc1.238.g4f4d434d": {2, 38},
	} {
		if got, ok := parseGitVersion(in); !ok || got != want {
			t.Errorf("parseGitVersion(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "hub version 2.14\n", "git version x.y\n"} {
		if _, ok := parseGitVersion(in); ok {
			t.Errorf("parseGitVersion(%q) ok", in)
		}
	}
	if cmpVersion([2]int{2, 37}, minMergeTreeGit) >= 0 || cmpVersion([2]int{2, 38}, minMergeTreeGit) != 0 ||
		cmpVersion([2]int{3, 0}, minMergeTreeGit) <= 0 {
		t.Error("cmpVersion")
	}
}

func TestParseMergeTree(t *testing.T) {
	const oid = "517bab5606db6b7921066e7336f46662e9c47760"
	tests := []struct {
		name, out string
		conflicts []string
	}{
		{name: "clean", out: oid + "\x00\x00"},
		{name: "clean with a message", out: oid + "\x00\x001\x00a.txt\x00Auto-merging\x00Auto-merging a.txt\x00"},
		{name: "content", out: oid + "\x00a.txt\x00\x001\x00a.txt\x00Auto-merging\x00Auto-merging a.txt\x00" +
			"1\x00a.txt\x00CONFLICT (contents)\x00CONFLICT (content): Merge conflict in a.txt\x00",
			conflicts: []string{"a.txt"}},
		{name: "file/directory", out: oid + "\x00x~main\x00\x002\x00x~main\x00x\x00CONFLICT (file/directory)\x00" +
			"CONFLICT (file/directory): directory in the way of x from main; moving it to x~main instead.\x00",
			conflicts: []string{"x"}},
		{name: "rename/delete", out: oid + "\x00b.txt\x00\x002\x00b.txt\x00a.txt\x00CONFLICT (rename/delete)\x00" +
			"CONFLICT (rename/delete): a.txt renamed to b.txt in HEAD, but deleted in theirs.\x00",
			conflicts: []string{"a.txt", "b.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, names, msgs, err := parseMergeTree([]byte(tt.out))
			if err != nil || tree.String() != oid {
				t.Fatalf("tree %s, %v", tree, err)
			}
			if got := conflictPaths(names, msgs); len(tt.conflicts) > 0 && !slices.Equal(got, tt.conflicts) {
				t.Fatalf("conflicts %q, want %q", got, tt.conflicts)
			}
		})
	}
	for _, bad := range []string{"", "not a hash\x00", oid + "\x00\x003\x00a\x00"} {
		if _, _, _, err := parseMergeTree([]byte(bad)); err == nil {
			t.Errorf("parseMergeTree(%q) accepted", bad)
		}
	}
}

// TestMergeLikeGit is the differential table: each case is a base commit,
// "ours" committed on main and "theirs" on a phase branch; Merge's tree
// must be `git merge-tree`'s (and `git merge`'s), or both a conflict.
// The same merge by debussy's own merge (no git) must give git's tree or
// a conflict; how often it refuses what git merges is logged.
func TestMergeLikeGit(t *testing.T) {
	needGitMerge(t)
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	five := lines("1", "2", "3", "4", "5")
	tests := []struct {
		name               string
		base, ours, theirs map[string]string // "" deletes
	}{
		{name: "nearby lines", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("one", "2", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "three", "4", "5")}},
		{name: "adjacent lines", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "two", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "three", "4", "5")}},
		{name: "same line", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "2", "three", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "THREE", "4", "5")}},
		{name: "same line, same change, and one more", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "2", "three", "4", "five")}, theirs: map[string]string{"f": lines("1", "2", "three", "4", "5")}},
		{name: "insertions at the same point", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "2", "x", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "y", "3", "4", "5")}},
		{name: "both add the same line, one edits apart", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "2", "x", "3", "4", "five")}, theirs: map[string]string{"f": lines("1", "2", "x", "3", "4", "5")}},
		{name: "one side deletes, the other edits apart", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "3", "4", "five")}},
		{name: "one side deletes the line the other edits", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("1", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "two", "3", "4", "5")}},
		{name: "one side deletes the file the other edits", base: map[string]string{"f": five},
			ours: map[string]string{"f": ""}, theirs: map[string]string{"f": lines("1", "two", "3", "4", "5")}},
		{name: "changes around the other's change", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("one", "2", "3", "4", "five")}, theirs: map[string]string{"f": lines("1", "2", "three", "4", "5")}},
		{name: "CRLF", base: map[string]string{"f": "1\r\n2\r\n3\r\n4\r\n5\r\n"},
			ours: map[string]string{"f": "one\r\n2\r\n3\r\n4\r\n5\r\n"}, theirs: map[string]string{"f": "1\r\n2\r\n3\r\nfour\r\n5\r\n"}},
		{name: "CRLF against LF near", base: map[string]string{"f": "1\r\n2\r\n3\r\n4\r\n5\r\n"},
			ours: map[string]string{"f": "1\n2\r\n3\r\n4\r\n5\r\n"}, theirs: map[string]string{"f": "1\r\n2\r\nthree\r\n4\r\n5\r\n"}},
		{name: "no trailing newline", base: map[string]string{"f": "1\n2\n3\n4\n5"},
			ours: map[string]string{"f": "one\n2\n3\n4\n5"}, theirs: map[string]string{"f": "1\n2\n3\n4\nfive"}},
		{name: "trailing newline dropped on one side", base: map[string]string{"f": five},
			ours: map[string]string{"f": lines("one", "2", "3", "4", "5")}, theirs: map[string]string{"f": "1\n2\n3\n4\n5"}},
		{name: "union attribute", base: map[string]string{"f": five, ".gitattributes": "f merge=union\n"},
			ours: map[string]string{"f": lines("1", "2", "3", "4", "5", "ours")}, theirs: map[string]string{"f": lines("1", "2", "3", "4", "5", "theirs")}},
		{name: "-merge attribute", base: map[string]string{"f": five, ".gitattributes": "f -merge\n"},
			ours: map[string]string{"f": lines("one", "2", "3", "4", "5")}, theirs: map[string]string{"f": lines("1", "2", "3", "4", "five")}},
		{name: "binary", base: map[string]string{"f": "1\n2\x00\n3\n4\n5\n"},
			ours: map[string]string{"f": "one\n2\x00\n3\n4\n5\n"}, theirs: map[string]string{"f": "1\n2\x00\n3\n4\nfive\n"}},
		{name: "binary changed on one side", base: map[string]string{"f": "1\n2\x00\n", "g": five},
			ours: map[string]string{"g": lines("one", "2", "3", "4", "5")}, theirs: map[string]string{"f": "one\n2\x00\n"}},
		{name: "rename on one side, edit on the other", base: map[string]string{"f": lines("a", "b", "c", "d", "e", "f", "g")},
			ours:   map[string]string{"f": "", "renamed": lines("a", "b", "c", "d", "e", "f", "g")},
			theirs: map[string]string{"f": lines("a", "b", "c", "D", "e", "f", "g")}},
		{name: "both add a file, differently", base: map[string]string{"f": five},
			ours: map[string]string{"new": "ours\n"}, theirs: map[string]string{"new": "theirs\n"}},
	}
	var gitClean int
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := newRepo(t)
			writeFiles(t, dir, tt.base)
			mustCommitAll(t, dir, "base")
			r := mustOpen(t, dir)
			const branch = "debussy/r/phase-1"
			phaseBranch(t, r, dir, branch, maps.Clone(tt.theirs))
			for name, content := range tt.ours {
				if content == "" {
					if err := os.Remove(filepath.Join(dir, name)); err != nil {
						t.Fatal(err)
					}
				}
			}
			writeFiles(t, dir, nonEmpty(tt.ours))
			mustCommitAll(t, dir, "ours")
			twin := copyTree(t, dir)

			want := oracleMergeTree(t, twin, "HEAD", branch)
			if want != "" {
				gitClean++
				runGit(t, twin, "merge", "-q", "--no-edit", "--no-ff", branch)
				if got := runGit(t, twin, "rev-parse", "HEAD^{tree}"); got != want {
					t.Fatalf("git merge made %s, git merge-tree %s", got, want)
				}
			}
			got := mergedTree(t, dir, r, branch)
			if got != want {
				t.Fatalf("Merge gave tree %q, git %q (\"\": a conflict)", got, want)
			}
			if got != "" {
				if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
					t.Fatalf("status after the merge: %q", st)
				}
			}

		})
	}
	t.Logf("git merged %d of %d cases", gitClean, len(tests))
}

// nonEmpty is files without the ones to delete.
func nonEmpty(files map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// mergedTree merges branch in dir with r and returns the merge commit's
// tree, "" for a conflict (after checking it changed nothing).
func mergedTree(t *testing.T, dir string, r *Repo, branch string) string {
	t.Helper()
	before := runGit(t, dir, "rev-parse", "HEAD")
	_, err := r.Merge(context.Background(), branch, "merge")
	var ce *ConflictError
	switch {
	case errors.As(err, &ce):
		if len(ce.Files) == 0 {
			t.Fatalf("a conflict naming no path: %v", err)
		}
		if got := runGit(t, dir, "rev-parse", "HEAD"); got != before {
			t.Fatalf("HEAD moved on a conflict")
		}
		return ""
	case err != nil:
		t.Fatalf("Merge: %v", err)
	}
	return runGit(t, dir, "rev-parse", "HEAD^{tree}")
}
