package gitcommit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The checkout direction, held to git: every case commits blobs as given
// (no conversion on the way in), configures the checkout, then makes one
// worktree with `git worktree add` and one with AddWorktree, and compares
// every file's bytes and mode, and `git status` in both.

type checkoutCase struct {
	name   string
	blobs  map[string]string // path → blob content; a "!" prefix on the path: executable; "@": symlink
	config []string          // "key=value" set in the repository after the commit
	// refused, when set, is what AddWorktree's error must contain; then
	// gitFails says whether `git worktree add` fails too.
	refused  string
	gitFails bool
	late     bool // the refusal shows only when the filter runs: CheckCheckout passes
}

const crlfMixed = "lf\ncrlf\r\nlast"

func TestCheckoutMatchesGit(t *testing.T) {
	rot := "tr a-zA-Z n-za-mN-ZA-M"
	cases := []checkoutCase{
		{
			name:   "no attributes; a filter naming no driver; a failing smudge filter, not required: written unfiltered",
			blobs:  map[string]string{"a.txt": "a\nb\n", "!run.sh": "#!/bin/sh\n", "@link": "a.txt", "empty": "", ".gitattributes": "*.x filter=nosuch\n*.bad filter=bad\n", "a.x": "data\n", "a.bad": "data\n"},
			config: []string{"filter.bad.smudge=exit 3"},
		},
		{
			name:  "eol=crlf, text, -text, binary, crlf legacy, eol=lf",
			blobs: map[string]string{".gitattributes": "*.cr eol=crlf\n*.t text\n*.n -text\n*.b binary\n*.legacy crlf\n*.lf eol=lf\n!run.cr eol=crlf\n", "a.cr": "one\ntwo\n", "!run.cr": "#!/bin/sh\necho\n", "mixed.cr": crlfMixed, "nul.cr": "a\x00\nb\n", "lone.cr": "a\rb\n", "a.t": "x\n", "a.n": "x\n", "a.b": "x\n", "a.legacy": "x\n", "a.lf": "x\n", "sub/deep.cr": "d\n"},
		},
		{
			name:   "text with core.eol=crlf; text=auto with core.autocrlf=true",
			blobs:  map[string]string{".gitattributes": "*.t text\n*.a text=auto\n", "a.t": "x\ny\n", "a.a": "x\ny\n", "crlf.a": "x\r\ny\n", "bin.a": "x\x00\n", "plain.txt": "p\n", "cr.t": crlfMixed},
			config: []string{"core.eol=crlf"},
		},
		{
			name:   "core.autocrlf=true without attributes",
			blobs:  map[string]string{"a.txt": "x\ny\n", "crlf.txt": "x\r\ny\n", "bin": "x\x00\n", "eof.txt": "dos\n\x1a", "ctrl": "\x01\x02\x03\x04\n", "lone": "a\rb\n", "empty": ""},
			config: []string{"core.autocrlf=true"},
		},
		{
			name:   "core.autocrlf=input and text=auto eol=crlf",
			blobs:  map[string]string{".gitattributes": "*.ae text=auto eol=crlf\n*.al text=auto eol=lf\n", "a.ae": "x\n", "a.al": "x\n", "a.txt": "x\n"},
			config: []string{"core.autocrlf=input"},
		},
		{
			name:  "ident expands $Id$ and $Id:…$, keeps others' keywords",
			blobs: map[string]string{".gitattributes": "*.c ident\n*.crc ident eol=crlf\n", "a.c": "/* $Id$ */\n$Id: old $\n$Id: a b $\n$Id:x$ $Id\n$Id: across\nlines $\n$Id:$\n", "b.crc": "$Id$\n", "c.c": "no keyword\n", "d.c": "$Id: unterminated\n", "plain.txt": "$Id$\n"},
		},
		{
			name:  "subdirectory attributes, macros, !unset, a pattern with a slash",
			blobs: map[string]string{".gitattributes": "[attr]win text eol=crlf\n*.w win\n*.u eol=crlf\n", "sub/.gitattributes": "*.u !eol\n*.w -text\nnested/*.p eol=crlf\n", "a.w": "x\n", "sub/a.w": "x\n", "a.u": "x\n", "sub/a.u": "x\n", "sub/nested/a.p": "x\n", "sub/nested/deeper/a.p": "x\n"},
		},
		{
			name:  "a symlinked .gitattributes in the tree",
			blobs: map[string]string{"attrs": "*.t eol=crlf\n", "@.gitattributes": "attrs", "a.t": "x\n"},
		},
		{
			name:   "smudge and clean filters (rot13), %f, with eol=crlf before the filter",
			blobs:  map[string]string{".gitattributes": "*.secret filter=rot\n*.crs filter=rot eol=crlf\n*.path filter=path\n", "a.secret": "uryyb\n", "dir/b.secret": "qrrc\n", "c.crs": "one\ntwo\n", "sub dir/it's.path": "x\n"},
			config: []string{"filter.rot.smudge=" + rot, "filter.rot.clean=" + rot, `filter.path.smudge=sh -c 'cat; printf "%%s\n" "$1"' - %f`, "filter.path.clean=sed '$d'"},
		},
		{
			name:   "long-running process filter with the smudge capability",
			blobs:  map[string]string{".gitattributes": "*.up filter=proc\n", "a.up": "uryyb\n", "b/c.up": "jbeyq\n", "big.up": strings.Repeat("nopqrstuvw\n", 20000)},
			config: []string{"filter.proc.process=perl " + shQuote(rotProcessScript(t)) + " clean smudge", "filter.proc.smudge=false", "filter.proc.required=true"},
		},
		{
			name:   "a process filter without smudge, not required: written unfiltered",
			blobs:  map[string]string{".gitattributes": "*.up filter=proc\n", "a.up": "hello\n"},
			config: []string{"filter.proc.process=perl " + shQuote(rotProcessScript(t)) + " clean"},
		},
		{
			name:     "a required process filter without smudge fails as in git",
			blobs:    map[string]string{".gitattributes": "*.up filter=proc\n", "a.up": "hello\n"},
			config:   []string{"filter.proc.process=perl " + shQuote(rotProcessScript(t)) + " clean", "filter.proc.required=true"},
			refused:  "does not offer the smudge capability",
			gitFails: true,
		},
		{
			name:     "a failing required smudge filter fails as in git",
			blobs:    map[string]string{".gitattributes": "*.x filter=bad\n", "a.x": "data\n"},
			config:   []string{"filter.bad.smudge=exit 3", "filter.bad.clean=cat", "filter.bad.required=true"},
			refused:  "smudge filter 'bad' failed",
			gitFails: true,
			late:     true,
		},
		{
			name:     "a required filter with no smudge command fails as in git",
			blobs:    map[string]string{".gitattributes": "*.x filter=cleanonly\n", "a.x": "data\n"},
			config:   []string{"filter.cleanonly.clean=cat", "filter.cleanonly.required=true"},
			refused:  "neither filter.cleanonly.smudge nor filter.cleanonly.process",
			gitFails: true,
		},
		{
			name:    "working-tree-encoding is refused before the worktree is made",
			blobs:   map[string]string{".gitattributes": "*.u16 working-tree-encoding=UTF-16LE\n", "a.u16": "x\n"},
			refused: "working-tree-encoding",
		},
		{
			name:   "core.symlinks=false writes a link as a file",
			blobs:  map[string]string{"@link": "target", "target": "t\n"},
			config: []string{"core.symlinks=false"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkoutBothWays(t, tc) })
	}
}

// TestCheckoutFuzz draws attribute files, line-ending settings and contents
// from a seeded generator: the corpus is the seeds, each a repository of
// files that hit text detection, eol, ident and a filter in combination.
func TestCheckoutFuzz(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { checkoutBothWays(t, fuzzCheckoutCase(seed)) })
	}
}

func fuzzCheckoutCase(seed uint64) checkoutCase {
	rng := rand.New(rand.NewPCG(seed, 21))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	patterns := []string{"*", "*.a", "*.b", "*.c", "sub/*", "sub/**/*.a", "x*", "/top.b"}
	states := []string{"text", "-text", "!text", "text=auto", "eol=lf", "eol=crlf", "crlf", "-crlf", "crlf=input", "ident", "binary", "filter=rot", "filter=nosuch", "-filter", "win"}
	attrs := func(n int) string {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteString("[attr]win text eol=crlf\n")
		}
		for range n {
			b.WriteString(pick(patterns...))
			for range 1 + rng.IntN(3) {
				b.WriteString(" " + pick(states...))
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	pieces := []string{"a\n", "b\r\n", "\r", "\x00", "$Id$", "$Id: x $", "$Id: a b $", "text ", "\x1a", "\n", "\r\n\r\n", "uryyb"}
	content := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pick(pieces...))
		}
		return b.String()
	}
	tc := checkoutCase{name: fmt.Sprint(seed), blobs: map[string]string{".gitattributes": attrs(2 + rng.IntN(5))}}
	if rng.IntN(2) == 0 {
		tc.blobs["sub/.gitattributes"] = attrs(1 + rng.IntN(3))
	}
	for i := range 24 {
		dir := pick("", "", "sub/", "sub/deep/")
		tc.blobs[fmt.Sprintf("%s%s%d.%s", dir, pick("f", "x", "top"), i, pick("a", "b", "c", "txt"))] = content()
	}
	tc.blobs["top.b"] = content()
	if v := pick("", "true", "input", "false"); v != "" {
		tc.config = append(tc.config, "core.autocrlf="+v)
	}
	if v := pick("", "lf", "crlf"); v != "" {
		tc.config = append(tc.config, "core.eol="+v)
	}
	tc.config = append(tc.config, "filter.rot.smudge=tr a-zA-Z n-za-mN-ZA-M", "filter.rot.clean=tr a-zA-Z n-za-mN-ZA-M")
	return tc
}

// TestCheckoutLFS: a file git-lfs tracks is in the worktree as its content,
// not as the pointer the commit holds.
func TestCheckoutLFS(t *testing.T) {
	if _, err := exec.LookPath("git-lfs"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git-lfs not installed: .ci/run installs it, and CI never skips a case")
		}
		t.Skip("git-lfs not installed (apt-get install git-lfs)")
	}
	isolate(t)
	dir := newRepo(t)
	runGit(t, dir, "lfs", "install", "--local")
	runGit(t, dir, "lfs", "track", "*.bin")
	content := "big binary\x00" + strings.Repeat("z", 5000)
	writeFiles(t, dir, map[string]string{"assets/a.bin": content, "small.txt": "s\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "lfs")
	if ptr := runGit(t, dir, "cat-file", "-p", "HEAD:assets/a.bin"); !strings.HasPrefix(ptr, "version https://git-lfs") {
		t.Fatalf("the commit holds no LFS pointer: %q", ptr)
	}
	deb := compareCheckouts(t, dir, checkoutCase{})
	if b, err := os.ReadFile(filepath.Join(deb, "assets", "a.bin")); err != nil || string(b) != content {
		t.Fatalf("assets/a.bin = %.40q, %v; want the content", b, err)
	}
}

// TestMergeChecksOutAsGit: a merge into the user's checkout writes the
// merged files as `git merge` does.
func TestMergeChecksOutAsGit(t *testing.T) {
	isolate(t)
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{".gitattributes": "*.cr eol=crlf\n*.c ident\n", "a.cr": "one\r\n", "b.c": "$Id$\n", "plain": "p\n"})
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "base")
	r := mustOpen(t, dir)
	phaseBranch(t, r, dir, "debussy/r/phase-1", map[string]string{"a.cr": "one\r\ntwo\r\n", "b.c": "$Id$\nmore\n", "new.cr": "n\r\n"})
	twin := copyTree(t, dir)
	if _, err := r.Merge("debussy/r/phase-1", "merge phase 1"); err != nil {
		t.Fatal(err)
	}
	runGit(t, twin, "merge", "-q", "--no-edit", "--no-ff", "debussy/r/phase-1")
	if a, b := snapshot(t, dir), snapshot(t, twin); a != b {
		t.Fatalf("after the merge:\n%s\ngit merge:\n%s", a, b)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status after the merge: %q", st)
	}
}

// checkoutBothWays commits tc's blobs as they are, sets its config and
// compares the two checkouts.
func checkoutBothWays(t *testing.T, tc checkoutCase) {
	isolate(t)
	dir := newRepo(t)
	// One hash-object for all blobs, written raw to files first.
	raw := t.TempDir()
	var paths, modes, args []string
	for p, content := range tc.blobs {
		mode := "100644"
		switch p[0] {
		case '!':
			mode, p = "100755", p[1:]
		case '@':
			mode, p = "120000", p[1:]
		}
		f := filepath.Join(raw, fmt.Sprint(len(paths)))
		must(t, os.WriteFile(f, []byte(content), 0o644))
		paths, modes, args = append(paths, p), append(modes, mode), append(args, f)
	}
	hashes := strings.Fields(runGit(t, dir, append([]string{"hash-object", "-w", "--no-filters", "--"}, args...)...))
	var info strings.Builder
	for i, p := range paths {
		fmt.Fprintf(&info, "%s %s\t%s\n", modes[i], hashes[i], p)
	}
	runGitStdin(t, dir, info.String(), "update-index", "--add", "--index-info")
	runGit(t, dir, "commit", "-qm", "blobs")
	for _, kv := range tc.config {
		k, v, _ := strings.Cut(kv, "=")
		runGit(t, dir, "config", k, v)
	}
	compareCheckouts(t, dir, tc)
}

// compareCheckouts makes a worktree of HEAD with git and one with
// AddWorktree and compares them; it returns debussy's.
func compareCheckouts(t *testing.T, dir string, tc checkoutCase) string {
	t.Helper()
	base := runGit(t, dir, "rev-parse", "HEAD")
	parent := t.TempDir()
	gitWt, deb := filepath.Join(parent, "git"), filepath.Join(parent, "debussy")
	_, gitErr := gitOutput(dir, "worktree", "add", "-q", "-b", "by-git", gitWt, base)
	r := mustOpen(t, dir)
	checkErr := r.CheckCheckout()
	err := r.AddWorktree(deb, "by-debussy", base)
	if (checkErr != nil) != (tc.refused != "" && !tc.late) || (checkErr != nil && !strings.Contains(checkErr.Error(), tc.refused)) {
		t.Fatalf("CheckCheckout: %v; want an error containing %q", checkErr, tc.refused)
	}
	if tc.refused != "" {
		if err == nil || !strings.Contains(err.Error(), tc.refused) {
			t.Fatalf("AddWorktree: %v; want an error containing %q", err, tc.refused)
		}
		if (gitErr != nil) != tc.gitFails {
			t.Fatalf("git worktree add: %v; want failure %v", gitErr, tc.gitFails)
		}
		if _, serr := os.Stat(deb); !errors.Is(serr, fs.ErrNotExist) {
			t.Fatalf("a refused worktree is left at %s", deb)
		}
		if out, _ := gitOutput(dir, "branch", "--list", "by-debussy"); out != "" {
			t.Fatalf("a refused worktree left its branch")
		}
		return ""
	}
	if gitErr != nil {
		t.Fatalf("git worktree add: %v", gitErr)
	}
	if err != nil {
		t.Fatalf("AddWorktree: %v", err)
	}
	if a, b := snapshot(t, deb), snapshot(t, gitWt); a != b {
		t.Fatalf("AddWorktree wrote:\n%s\ngit worktree add wrote:\n%s", a, b)
	}
	// Where a file's content turns back into its blob, git status is clean
	// from the stat data alone. Where it does not (a lone CR under
	// eol=crlf, a filter that is no inverse) git's worktree is not clean
	// either once git looks at the contents; debussy's has the same bytes
	// and the same index hashes, so it says the same.
	if st := runGit(t, deb, "status", "--porcelain", "--untracked-files=all"); st != "" && contentStatus(t, gitWt) == "" {
		t.Fatalf("git status in debussy's worktree: %q; git's is clean", st)
	}
	return deb
}

// contentStatus is git status after every file's mtime changed, so that
// git compares contents, not stat data.
func contentStatus(t *testing.T, root string) string {
	t.Helper()
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	return runGit(t, root, "status", "--porcelain", "--untracked-files=all")
}

// snapshot lists every file under root but .git: path, mode and content
// (a link's target).
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var b []byte
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			b = []byte("-> " + target)
			if err != nil {
				return err
			}
		} else if b, err = os.ReadFile(p); err != nil {
			return err
		}
		if len(b) > 200 {
			b = append(b[:100:100], fmt.Sprintf("…(%d bytes, %d CRs)", len(b), bytes.Count(b, []byte("\r")))...)
		}
		lines = append(lines, fmt.Sprintf("%s %v %q", filepath.ToSlash(rel), fi.Mode(), b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// rotProcessScript is filterScript rot13ing what it cleans and smudges.
func rotProcessScript(t *testing.T) string {
	return filterScript(t, "rot.pl", `$c =~ tr/a-zA-Z/n-za-mN-ZA-M/;`)
}
