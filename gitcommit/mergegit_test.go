package gitcommit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// useOwnMerge makes Merge use debussy's own merge, as without git, for
// the rest of the test.
func useOwnMerge(t *testing.T) {
	t.Helper()
	old := mergeEngine
	mergeEngine = func() string { return "" }
	t.Cleanup(func() { mergeEngine = old })
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
	var gitClean, ownRefused int
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
			twin, own := copyTree(t, dir), copyTree(t, dir)

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

			useOwnMerge(t)
			switch ownGot := mergedTree(t, own, mustOpen(t, own), branch); {
			case ownGot == want:
			case ownGot == "":
				ownRefused++
				t.Logf("debussy's own merge calls it a conflict; git merges it")
			default:
				t.Fatalf("debussy's own merge gave tree %s, git %q", ownGot, want)
			}
		})
	}
	t.Logf("git merged %d of %d cases; debussy's own merge (without git) refused %d of those", gitClean, len(tests), ownRefused)
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

// corpusCases makes n merges: a 50-line file and two sides' edits near
// each other, as base, ours and theirs.
func corpusCases(seed int64, n int) [][3]string {
	rng := rand.New(rand.NewSource(seed))
	// Real files repeat lines (braces, blank lines, returns): the place
	// where a line aligner may choose.
	filler := []string{"}", "", "return nil", "\t}", "x := 1"}
	word := func() string {
		if rng.Intn(3) == 0 {
			return filler[rng.Intn(len(filler))]
		}
		return fmt.Sprintf("line %d", rng.Intn(1000))
	}
	edit := func(base []string, center int) []string {
		ls := slices.Clone(base)
		for range 1 + rng.Intn(3) {
			i := min(max(center+rng.Intn(9)-4, 0), len(ls))
			switch op := rng.Intn(3); {
			case op == 0 && i < len(ls):
				ls[i] = word()
			case op == 1:
				ls = slices.Insert(ls, i, word())
			case i < len(ls):
				ls = slices.Delete(ls, i, i+1)
			}
		}
		return ls
	}
	join := func(ls []string) string {
		if len(ls) == 0 {
			return ""
		}
		return strings.Join(ls, "\n") + "\n"
	}
	out := make([][3]string, n)
	for k := range out {
		base := make([]string, 50)
		for i := range base {
			base[i] = word()
		}
		center := rng.Intn(50)
		ours := edit(base, center)
		theirs := edit(base, center+rng.Intn(13)-6)
		if rng.Intn(10) == 0 { // the same edit on both sides, plus one
			theirs = edit(ours, rng.Intn(50))
		}
		out[k] = [3]string{join(base), join(ours), join(theirs)}
	}
	return out
}

// TestMergeCorpusAgainstGit merges 200 generated cases — seeded random
// edits near each other on two sides of a 50-line file — through
// mergeCommits, with git and with debussy's own merge, against `git
// merge-tree`. With git, every tree must be git's; the own merge must be
// git's tree or a conflict, and its agreement is logged.
func TestMergeCorpusAgainstGit(t *testing.T) {
	needGitMerge(t)
	isolate(t)
	const n = 200
	dir := newRepo(t)
	cases := corpusCases(21, n)

	// One fast-import stream: per case, a base commit and two children.
	var stream strings.Builder
	mark := 0
	commit := func(ref, content string, parent int) int {
		mark++
		fmt.Fprintf(&stream, "blob\nmark :%d\ndata %d\n%s\n", mark, len(content), content)
		blob := mark
		mark++
		fmt.Fprintf(&stream, "commit %s\nmark :%d\ncommitter T <t@example.com> 1700000000 +0000\ndata 1\nc\n", ref, mark)
		if parent > 0 {
			fmt.Fprintf(&stream, "from :%d\n", parent)
		}
		fmt.Fprintf(&stream, "M 100644 :%d f.txt\n\n", blob)
		return mark
	}
	for i, c := range cases {
		base := commit(fmt.Sprintf("refs/heads/base-%d", i), c[0], 0)
		commit(fmt.Sprintf("refs/heads/ours-%d", i), c[1], base)
		commit(fmt.Sprintf("refs/heads/theirs-%d", i), c[2], base)
	}
	cmd := gitCmd(dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}

	r := mustOpen(t, dir)
	merge := func(i int, engine func() string) string {
		old := mergeEngine
		mergeEngine = engine
		defer func() { mergeEngine = old }()
		resolve := func(name string) plumbing.Hash {
			ref, err := r.store.Reference(plumbing.NewBranchReferenceName(name))
			if err != nil {
				t.Fatal(err)
			}
			return ref.Hash()
		}
		oursC, err := r.repo.CommitObject(resolve(fmt.Sprintf("ours-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		theirsC, err := r.repo.CommitObject(resolve(fmt.Sprintf("theirs-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		bases, err := oursC.MergeBase(theirsC)
		if err != nil || len(bases) != 1 {
			t.Fatalf("merge base: %v %v", bases, err)
		}
		ours, err := r.flatten(oursC.TreeHash)
		if err != nil {
			t.Fatal(err)
		}
		merged, _, conflicts, err := r.mergeCommits(context.Background(), oursC, theirsC, bases[0].TreeHash, ours)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(conflicts) > 0 {
			if !slices.Equal(conflicts, []string{"f.txt"}) {
				t.Fatalf("case %d: conflicts %q", i, conflicts)
			}
			return ""
		}
		return treeOf(merged).String()
	}

	var gitClean, gitAgree, ownAgree, ownRefused int
	for i, c := range cases {
		want := oracleMergeTree(t, dir, fmt.Sprintf("ours-%d", i), fmt.Sprintf("theirs-%d", i))
		if want != "" {
			gitClean++
		}
		if got := merge(i, gitMergeBin); got == want {
			gitAgree++
		} else {
			t.Errorf("case %d: with git, tree %q; git merge-tree %q\nbase %q\nours %q\ntheirs %q", i, got, want, c[0], c[1], c[2])
		}
		switch got := merge(i, func() string { return "" }); {
		case got == want:
			ownAgree++
		case got == "":
			ownRefused++
		default:
			t.Errorf("case %d: debussy's own merge gave %s, git %q\nbase %q\nours %q\ntheirs %q", i, got, want, c[0], c[1], c[2])
		}
	}
	t.Logf("corpus of %d: git merges %d cleanly; merge with git agrees with git merge-tree on %d (%.0f %%); "+
		"debussy's own merge (no git) agrees on %d (%.0f %%) and calls %d of git's %d clean merges conflicts (%.0f %%)",
		n, gitClean, gitAgree, 100*float64(gitAgree)/n, ownAgree, 100*float64(ownAgree)/n,
		ownRefused, gitClean, 100*float64(ownRefused)/float64(max(gitClean, 1)))
}

// treeOf is the id of the tree holding files.
func treeOf(files map[string]treeFile) plumbing.Hash {
	entries := make([]*index.Entry, 0, len(files))
	for p, f := range files {
		entries = append(entries, &index.Entry{Name: p, Mode: f.mode, Hash: f.hash})
	}
	sortEntries(entries)
	h, _ := buildTree(entries)
	return h
}
