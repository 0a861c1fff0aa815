package gitcommit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// TestVerifyPathFuzz holds verifyPath to git's verify_path: names built from
// the pieces that make .git and .gitmodules aliases on NTFS (8.3 short names,
// trailing dots and spaces, ":" streams, backslashes) and HFS (ignorable
// code points), given to `git update-index --index-info`, which ignores the
// ones verify_path refuses (one process for 3,000 names). core.protectNTFS
// is git's default (on);
// core.protectHFS is set on, so both are exercised.
func TestVerifyPathFuzz(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	runGit(t, dir, "config", "core.protectHFS", "true")
	pieces := []string{".git", ".GIT", ".Git", "git~1", "GIT~1", ".gitmodules", "gitmod~1", "gi7eba~1", ".gitmodules ",
		".", "..", " ", ":", "::$INDEX_ALLOCATION", ":x", "\\", "/", "\u200c", "\u200d", "\ufeff", "a", "x", "~1", "~2", "modules", "g", "it"}
	rng := rand.New(rand.NewPCG(19, 0))
	type cand struct {
		name    string
		symlink bool
	}
	var cands []cand
	var in bytes.Buffer
	for i := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		c := cand{name: fmt.Sprintf("n%d/%s", i, b.String()), symlink: rng.IntN(3) == 0}
		cands = append(cands, c)
		mode := "100644"
		if c.symlink {
			mode = "120000"
		}
		fmt.Fprintf(&in, "%s %s\t%s\x00", mode, emptyBlob, c.name)
	}
	cmd := exec.Command("git", "update-index", "-z", "--index-info")
	cmd.Dir, cmd.Stdin = dir, &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v\n%s", err, out)
	}
	accepted := map[string]bool{}
	for _, name := range strings.Split(runGit(t, dir, "ls-files", "-z"), "\x00") {
		accepted[name] = true
	}
	bad := 0
	for _, c := range cands {
		got, want := verifyPath(c.name, c.symlink, true, true), accepted[c.name]
		if !got && want && strings.Contains(c.name, "\\") {
			// Deliberately stricter: git treats a backslash as a separator
			// only on Windows, where "a\\.git\\config" would write into .git
			// on checkout; debussy refuses it on every system.
			continue
		}
		if got != want && bad < 20 {
			bad++
			t.Errorf("verifyPath(%q, symlink=%v) = %v, git says %v", c.name, c.symlink, got, want)
		}
	}
}
