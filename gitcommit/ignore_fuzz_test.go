package gitcommit

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var (
	ignoreFuzzSeed = flag.Uint64("ignore-fuzz-seed", 13, "seed of TestIgnoreFuzz")
	ignoreFuzzSets = flag.Int("ignore-fuzz-sets", 3000, "pattern sets TestIgnoreFuzz compares with git check-ignore")
)

// The fuzz compares our ignore decisions with `git check-ignore` over
// generated pattern sets. Each set lives in its own top-level directory
// (s000, s001, …) with the same tree below it, so one check-ignore call
// answers a whole batch of sets.

var (
	fuzzDirs  = []string{"a", "foo", "src", "foo/bar", "src/a", "a/foo", "abc", "foo/bar/baz"}
	fuzzFiles = []string{"x.go", "y.txt", "b", "abd", "abc.go", ".hidden", "a b", "Foo"}
	fuzzParts = []string{"a", "b", "ab", "abc", "abd", "foo", "bar", "baz", "src", "x.go", "y.txt", ".hidden", "Foo",
		"*", "**", "?", "*.go", "a*", "*b*", "[ab]", "[!c]", "[^a]", "ab[!c]", "[a-c]*", "?b?", "\\a", "[[:alpha:]]*", "a b", "fo[o]"}
)

func genPattern(rng *rand.Rand) string {
	n := 1 + rng.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fuzzParts[rng.IntN(len(fuzzParts))]
	}
	sep := "/"
	if rng.IntN(15) == 0 {
		sep = "//"
	}
	p := strings.Join(parts, sep)
	if rng.IntN(4) == 0 {
		p = "/" + p
	}
	if rng.IntN(4) == 0 {
		p += "/"
	}
	if rng.IntN(12) == 0 {
		p = "**/" + p
	}
	if rng.IntN(12) == 0 {
		p += "/**"
	}
	if rng.IntN(4) == 0 {
		p = "!" + p
	}
	switch rng.IntN(26) {
	case 20:
		p += "\t" // a trailing tab is kept
	case 21:
		p += "\r\r" // only the last CR goes
	case 22:
		p = "\ufeff" + p // a BOM not at the file's start is part of the pattern
	case 23:
		p = strings.Replace(p, "a", "\x00", 1) // a NUL inside
	case 24:
		p += "\\" // a trailing backslash
	case 25:
		p += " \\  " // an escaped space followed by spaces
	case 0:
		p += "  "
	case 1:
		p += "\\ "
	case 2:
		p = "#" + p
	case 3:
		p = "\\" + p
	case 4:
		p += "\r" // a CRLF line: git drops the CR
	case 5:
		p += "\x00" + fuzzParts[rng.IntN(len(fuzzParts))] // a NUL ends the pattern
	}
	return p
}

func genPatternSet(rng *rand.Rand) string {
	var b strings.Builder
	if rng.IntN(20) == 0 {
		b.WriteString("\ufeff") // a UTF-8 BOM before the first pattern
	}
	for range 1 + rng.IntN(5) {
		b.WriteString(genPattern(rng))
		b.WriteByte('\n')
	}
	return b.String()
}

// walkIgnored is the walk's decision for path: ignored if any directory on
// the way is excluded (the walk never enters it) or the path itself is.
// ignores maps a directory ("" or "dir/") to its .gitignore patterns.
func walkIgnored(ignores map[string]ignoreList, path string, isDir, fold bool) bool {
	comps := strings.Split(path, "/")
	var pats ignoreList
	dir := ""
	for i := range comps {
		pats = append(pats[:len(pats):len(pats)], ignores[dir]...)
		cur := strings.Join(comps[:i+1], "/")
		if pats.excluded(cur, i < len(comps)-1 || isDir, fold) {
			return true
		}
		dir = cur + "/"
	}
	return false
}

// TestIgnoreFuzz runs case-sensitive, then (on a tenth of the sets) with
// core.ignoreCase=true, where patterns fold case.
func TestIgnoreFuzz(t *testing.T) {
	t.Parallel()
	t.Run("case-sensitive", func(t *testing.T) { ignoreFuzz(t, false, *ignoreFuzzSets) })
	t.Run("core.ignoreCase", func(t *testing.T) { ignoreFuzz(t, true, *ignoreFuzzSets/10) })
}

func ignoreFuzz(t *testing.T, fold bool, sets int) {
	const perBatch = 150
	home := t.TempDir()
	env := diffEnv(home, nil)
	dir := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "config", "core.ignoreCase", strconv.FormatBool(fold)).CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}

	// The same tree under every set's directory; its paths, relative to it.
	var rel []string
	isDir := map[string]bool{}
	for _, d := range fuzzDirs {
		rel = append(rel, d)
		isDir[d] = true
	}
	for _, d := range append([]string{""}, fuzzDirs...) {
		for _, f := range fuzzFiles {
			rel = append(rel, strings.TrimPrefix(d+"/"+f, "/"))
		}
	}
	setDir := func(i int) string { return fmt.Sprintf("s%03d", i) }
	for i := range perBatch {
		for _, p := range rel {
			abs := filepath.Join(dir, setDir(i), filepath.FromSlash(p))
			if isDir[p] {
				must(t, os.MkdirAll(abs, 0o755))
				continue
			}
			must(t, os.MkdirAll(filepath.Dir(abs), 0o755))
			must(t, os.WriteFile(abs, nil, 0o644))
		}
	}

	rng := rand.New(rand.NewPCG(*ignoreFuzzSeed, 0))
	diffs, ignored, total := 0, 0, 0
	for batch := 0; batch*perBatch < sets; batch++ {
		// Each set: its directory's .gitignore and, sometimes, one in foo/.
		ignores := map[string]ignoreList{}
		content := map[string]string{}
		for i := range perBatch {
			sd := setDir(i)
			for _, sub := range []string{"", "foo/"} {
				name := sd + "/" + sub + ".gitignore"
				if sub != "" && rng.IntN(3) != 0 {
					must(t, os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))))
					continue
				}
				set := genPatternSet(rng)
				content[name] = set
				must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(set), 0o644))
				ignores[sd+"/"+sub] = parseIgnoreFile([]byte(set), sd+"/"+sub)
			}
		}
		var stdin bytes.Buffer
		var paths []string
		for i := range perBatch {
			for _, p := range rel {
				full := setDir(i) + "/" + p
				paths = append(paths, full)
				stdin.WriteString(full)
				stdin.WriteByte(0)
			}
		}
		cmd := exec.Command("git", "check-ignore", "--stdin", "-z", "-v", "-n")
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, &stdin
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("git check-ignore: %v", err)
		}
		// Records of four NUL-terminated fields: source, line, pattern, path.
		fields := strings.Split(string(out), "\x00")
		for i := 0; i+3 < len(fields); i += 4 {
			src, line, pattern, path := fields[i], fields[i+1], fields[i+2], fields[i+3]
			want := src != "" && !strings.HasPrefix(pattern, "!")
			got := walkIgnored(ignores, path, isDir[path[strings.IndexByte(path, '/')+1:]], fold)
			total++
			if want {
				ignored++
			}
			if got == want {
				continue
			}
			diffs++
			if diffs <= 20 {
				set := path[:strings.IndexByte(path, '/')]
				t.Errorf("%s: ignored = %v, git says %v (%s:%s %q)\n%s/.gitignore:\n%s%s/foo/.gitignore:\n%s",
					path, got, want, src, line, pattern, set, content[set+"/.gitignore"], set, content[set+"/foo/.gitignore"])
			}
		}
		if n := len(fields) / 4; n != len(paths) {
			t.Fatalf("git check-ignore answered %d paths of %d", n, len(paths))
		}
	}
	t.Logf("%d paths compared, %d ignored by git", total, ignored)
	if diffs > 0 {
		t.Errorf("%d decisions differ from git check-ignore (seed %d)", diffs, *ignoreFuzzSeed)
	}
}

// FuzzIgnore compares one .gitignore (any bytes) with git check-ignore over
// the fuzz tree. Plain `go test` runs the seeds only (each starts git);
// `go test -fuzz FuzzIgnore` explores.
func FuzzIgnore(f *testing.F) {
	f.Add([]byte("\ufeff*.go\r\n!x.go\n"))
	f.Add([]byte("a\x00b\nfoo/**/\n"))
	f.Add([]byte("\\#x\n\\!a\n[!c]*\t\n"))
	f.Add([]byte("/**\n!*/\n!*.txt\r\n"))
	f.Add([]byte("foo\\ \\  \nsrc/a/\n**/b\n"))
	f.Fuzz(func(t *testing.T, gitignore []byte) {
		if len(gitignore) > 4096 {
			t.Skip()
		}
		dir := filepath.Join(t.TempDir(), "repo")
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		var rel []string
		isDir := map[string]bool{}
		for _, d := range fuzzDirs {
			must(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755))
			rel, isDir[d] = append(rel, d), true
		}
		for _, d := range append([]string{""}, fuzzDirs...) {
			for _, f := range fuzzFiles {
				p := strings.TrimPrefix(d+"/"+f, "/")
				must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), nil, 0o644))
				rel = append(rel, p)
			}
		}
		must(t, os.WriteFile(filepath.Join(dir, ".gitignore"), gitignore, 0o644))
		ignores := map[string]ignoreList{"": parseIgnoreFile(gitignore, "")}
		cmd := exec.Command("git", "check-ignore", "--stdin", "-z", "-v", "-n")
		cmd.Dir, cmd.Env = dir, diffEnv(t.TempDir(), nil)
		cmd.Stdin = strings.NewReader(strings.Join(rel, "\x00") + "\x00")
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("git check-ignore: %v", err)
		}
		fields := strings.Split(string(out), "\x00")
		for i := 0; i+3 < len(fields); i += 4 {
			src, pattern, path := fields[i], fields[i+2], fields[i+3]
			want := src != "" && !strings.HasPrefix(pattern, "!")
			if got := walkIgnored(ignores, path, isDir[path], false); got != want {
				t.Errorf("%s: ignored = %v, git says %v (pattern %q) for .gitignore %q", path, got, want, pattern, gitignore)
			}
		}
	})
}
