package gitcommit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReservedNameFuzz holds what CommitAll lets into a new tree (verifyPath
// with git's defaults, then fsckPathProblem) to what git lets in and `git
// fsck --strict` then accepts: names built from the NTFS pieces (8.3 short
// names, trailing dots and spaces, streams, backslashes) and the code points
// HFS+ ignores, as a file, a symlink and a directory. git add is asked
// through `update-index --index-info` (one process), fsck through one
// single-entry tree per name (`mktree --batch`, one fsck).
const fsckFuzzNames = 1200

func TestReservedNameFuzz(t *testing.T) {
	t.Parallel()
	isolateEnv := diffEnv(t.TempDir(), nil)
	dir := t.TempDir()
	git := func(stdin []byte, args ...string) (string, string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, isolateEnv, bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil && args[0] != "fsck" {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), errb.String()
	}
	git(nil, "init", "-q")
	git(nil, "hash-object", "-w", "--stdin") // the empty blob every entry names
	pieces := []string{".git", ".GIT", ".Git", "git~1", "GIT~1", ".gitmodules", "gitmod~1", "gi7eba~1", "GI7EBA~2", ".gitmodules ",
		".", " ", ":", "::$INDEX_ALLOCATION", ":x", "\\", "\u200c", "\u200d", "\u200e", "\u206f", "\ufeff", "a", "x", "~1", "~2",
		"modules", "g", "it", "i", "t", ".gitattributes", ".mailmap"}
	// A directory entry's own tree, one per name (fsck reports a
	// non-blob .gitmodules at that tree, not at its parent).
	var subIn bytes.Buffer
	for i := range fsckFuzzNames {
		fmt.Fprintf(&subIn, "100644 blob %s\tsub%d\x00\x00", emptyBlob, i)
	}
	out, _ := git(subIn.Bytes(), "mktree", "-z", "--batch")
	subs := strings.Fields(out)

	type cand struct {
		name string
		kind int // 0 file, 1 symlink, 2 directory
	}
	rng := rand.New(rand.NewPCG(19, 3))
	var cands []cand
	var index, trees bytes.Buffer
	for i := range fsckFuzzNames {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		c := cand{name: b.String(), kind: rng.IntN(3)}
		cands = append(cands, c)
		mode, typ, hash, path := "100644", "blob", emptyBlob.String(), fmt.Sprintf("n%d/%s", i, c.name)
		indexMode := mode
		switch c.kind {
		case 1:
			mode, indexMode = "120000", "120000"
		case 2:
			mode, typ, hash = "040000", "tree", subs[i]
			path += "/x"
		}
		fmt.Fprintf(&index, "%s %s\t%s\x00", indexMode, emptyBlob, path)
		fmt.Fprintf(&trees, "%s %s %s\t%s\x00\x00", mode, typ, hash, c.name)
	}
	git(index.Bytes(), "update-index", "-z", "--index-info")
	accepted := map[string]bool{}
	out, _ = git(nil, "ls-files", "-z")
	for _, p := range strings.Split(out, "\x00") {
		accepted[p] = true
	}
	out, _ = git(trees.Bytes(), "mktree", "-z", "--missing", "--batch")
	treeOf := strings.Fields(out)
	if len(treeOf) != len(cands) {
		t.Fatalf("mktree made %d trees for %d names", len(treeOf), len(cands))
	}
	_, fsckOut := git(nil, "fsck", "--strict", "--no-dangling", "--no-progress")
	fsckBad := map[string]string{}
	for _, m := range regexp.MustCompile(`error in tree ([0-9a-f]{40}): (\w+)`).FindAllStringSubmatch(fsckOut, -1) {
		fsckBad[m[1]] = m[2]
	}

	bad := 0
	for i, c := range cands {
		path := fmt.Sprintf("n%d/%s", i, c.name)
		gitPath := path
		if c.kind == 2 {
			gitPath += "/x"
		}
		fsckSays := fsckBad[treeOf[i]]
		if c.kind == 2 && fsckSays == "" {
			fsckSays = fsckBad[subs[i]]
		}
		gitOK := accepted[gitPath] && fsckSays == ""
		symlink := c.kind == 1
		ours := verifyPath(gitPath, symlink, true, false) && fsckPathProblem(gitPath, symlink) == ""
		if !ours && gitOK && strings.Contains(c.name, "\\") {
			continue // deliberately stricter, as TestVerifyPathFuzz explains
		}
		if ours != gitOK {
			if bad++; bad <= 20 {
				t.Errorf("%q (kind %d): debussy commits it = %v; git add takes it = %v, fsck says %q", c.name, c.kind, ours, accepted[gitPath], fsckSays)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d names disagree", bad, len(cands))
	}
}
