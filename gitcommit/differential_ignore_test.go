package gitcommit

import (
	"strings"
	"testing"
)

// Round three of the differential suite (issue 19): ignore rules at their
// edges. Each case is a directory with its own .gitignore, so its patterns
// are a nested .gitignore's (anchored at the case's directory).

// ignoreCase is a batch case writing a .gitignore and the files it judges.
func ignoreCase(name, gitignore string, files ...string) batchCase {
	return batchCase{name: name, change: func(t *testing.T, h *diffRepo) {
		h.Write(".gitignore", gitignore)
		for _, f := range files {
			if strings.HasSuffix(f, "/") {
				h.Mkdir(f)
				continue
			}
			h.Write(f, "x\n")
		}
	}}
}

var ignoreBatch = diffBatch{
	name: "ignore edge cases",
	setup: func(t *testing.T, h *diffRepo) {
		h.Write(".git/info/exclude", "# info/exclude\n*.excl\n!keep.excl\n/c*/rooted-excl\n")
	},
	cases: []batchCase{
		ignoreCase("CRLF lines", "a.log\r\nb.tmp\r\n# c\r\n!keep.log\r\n*.log\r\n", "a.log", "b.tmp", "keep.log", "c.txt"),
		ignoreCase("UTF-8 BOM before the first pattern", "\ufeffbom.txt\nother.txt\n", "bom.txt", "other.txt", "ok.txt"),
		ignoreCase("UTF-8 BOM before a comment", "\ufeff#bom.txt\nx.tmp\n", "#bom.txt", "bom.txt", "x.tmp"),
		ignoreCase("BOM not at the start is part of the pattern", "a.txt\n\ufeffb.txt\n", "a.txt", "b.txt", "\ufeffb.txt"),
		ignoreCase("NUL at the start of a line", "\x00a.txt\nb.txt\n", "a.txt", "b.txt"),
		ignoreCase("NUL then CR then LF", "a.txt\x00\r\nb.txt\r\n", "a.txt", "b.txt", "c.txt"),
		ignoreCase("a file of only NULs and newlines", "\x00\x00\n\x00\n", "a.txt"),
		ignoreCase("no trailing newline", "a.txt\nb.txt", "a.txt", "b.txt", "c.txt"),
		ignoreCase("lone CR is not a line end", "a.txt\rb.txt\n", "a.txt", "b.txt", "a.txt\rb.txt"),
		ignoreCase("negation after a wildcard", "*.log\n!keep.log\n", "a.log", "keep.log", "d/keep.log", "d/x.log"),
		ignoreCase("negation cannot re-include below an ignored directory", "build/\n!build/keep.txt\n", "build/keep.txt", "build/x.o"),
		ignoreCase("negation of dir/* re-includes", "out/*\n!out/keep.txt\n", "out/keep.txt", "out/x.o", "out/sub/y.o"),
		ignoreCase("negation order: the last match wins", "!a.txt\na.txt\nb.txt\n!b.txt\n", "a.txt", "b.txt"),
		ignoreCase("directory-only pattern and a file of that name", "build/\n", "build", "sub/build/x", "other/"),
		{
			name: "directory-only pattern does not match a symlink to a directory",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "link/\n")
				h.Write("real/x.txt", "x")
				h.Symlink("real", "link")
			},
		},
		ignoreCase("leading **/", "**/foo\n**/bar/x.txt\n", "foo", "a/foo", "a/b/foo/z", "bar/x.txt", "q/bar/x.txt", "q/bar/y.txt"),
		ignoreCase("a/**/b matches zero or more directories", "a/**/b\n", "a/b", "a/x/b", "a/x/y/b", "x/a/b", "a/bb"),
		ignoreCase("trailing /** ignores the contents, not the directory", "dir/**\n!dir/keep/\n", "dir/keep/x", "dir/y", "dir2/y"),
		ignoreCase("** inside a name is *", "a**b\nx**/y\n", "ab", "aXXb", "a/b", "x1/y", "x/y"),
		ignoreCase("*** and **/** forms", "***.tmp\n**/**/z\n", "a.tmp", "d/e.tmp", "z", "q/r/z"),
		ignoreCase("trailing spaces are trimmed", "a.txt   \nb.txt\\ \nc.txt\\ \\ \n", "a.txt", "b.txt", "b.txt ", "c.txt  ", "c.txt"),
		ignoreCase("a trailing tab is kept", "a.txt\t\n", "a.txt", "a.txt\t"),
		ignoreCase("escaped # and ! are literal", "\\#hash\n\\!bang\n#comment\n", "#hash", "!bang", "comment", "#comment"),
		ignoreCase("escaped wildcards are literal", "\\*star\nq\\?\n\\[x]\n", "*star", "astar", "q?", "qx", "[x]", "x"),
		ignoreCase("a trailing backslash", "a.txt\\\nb\\\\\n", "a.txt", "a.txt\\", "b\\"),
		ignoreCase("character classes", "[[:digit:]]*\n[a-]z\n[]]y\n[!]]w\n", "1a", "a1", "az", "-z", "]y", "aw", "]w"),
		ignoreCase("range and negated class with [^...]", "f[a-c]o\ng[^x]o\n", "fbo", "fdo", "gao", "gxo"),
		ignoreCase("a slash in the middle anchors the pattern", "a/b.txt\n", "a/b.txt", "x/a/b.txt"),
		ignoreCase("a leading slash anchors to the .gitignore's directory", "/top.txt\n", "top.txt", "d/top.txt"),
		ignoreCase("double slash in a pattern", "a//b\n", "a/b", "a/c"),
		ignoreCase(".gitignore can ignore itself", ".gitignore\n*.tmp\n", "x.tmp", "y.txt"),
		ignoreCase("patterns are case-sensitive", "*.LOG\nReadme\n", "a.log", "b.LOG", "readme", "Readme"),
		ignoreCase("whitespace-only and comment lines", "   \n\t\n # not a comment\n#x\n", " # not a comment", "x", "\t"),
		ignoreCase("ignore everything, re-include directories and .go", "*\n!*/\n!*.go\n!.gitignore\n", "a.go", "b.txt", "d/e.go", "d/f.txt"),
		ignoreCase("unicode patterns match bytes (NFC vs NFD)", "caf\u00e9.txt\n", "caf\u00e9.txt", "cafe\u0301.txt"),
		ignoreCase("a long pattern", strings.Repeat("x", 300)+"\n", strings.Repeat("x", 200), "short"),
		ignoreCase("a pattern with a trailing slash and wildcard", "*.d/\n", "a.d/x", "b.d", "c/e.d/y"),
		ignoreCase("info/exclude applies below the case and its negation too", "", "a.excl", "keep.excl", "rooted-excl", "d/rooted-excl"),
		{
			name: "nested .gitignore overrides its parent",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "*.log\nsecret/\n")
				h.Write("sub/.gitignore", "!keep.log\n*.txt\n")
				for _, f := range []string{"a.log", "sub/keep.log", "sub/x.log", "sub/a.txt", "b.txt", "sub/deep/keep.log", "sub/deep/c.txt"} {
					h.Write(f, "x\n")
				}
			},
		},
		{
			name: "a .gitignore inside an ignored directory is never read",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "ign/\n")
				h.Write("ign/.gitignore", "!*\n")
				h.Write("ign/a.txt", "x")
			},
		},
		{
			name: "a .gitignore that is a directory",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore/x", "*\n")
				h.Write("a.txt", "x")
			},
		},
		{
			name: "tracked files matching a new ignore rule stay tracked and get their edits",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("t.log", "v1\n")
				h.Write("build/out.o", "v1\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "*.log\nbuild/\n")
				h.Write("t.log", "v2\n")
				h.Write("build/out.o", "v2\n")
				h.Write("build/new.o", "new\n")
				h.Write("u.log", "u\n")
			},
		},
		{
			name: "a tracked file deleted and now ignored is deleted",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("gone.log", "v1\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "*.log\n")
				h.Remove("gone.log")
			},
		},
		{
			name: "a file renamed into an ignored directory",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "cache/\n")
				h.Write("a.txt", "a\n")
			},
			change: func(t *testing.T, h *diffRepo) { h.Rename("a.txt", "cache/a.txt") },
		},
		{
			name: "directory with only ignored files, and empty directories",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "*.o\n")
				h.Write("objs/a.o", "x")
				h.Mkdir("empty/deeper/still")
				h.Write("real/x.txt", "x")
			},
		},
		{
			name: "a symlink named like an ignored directory",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitignore", "node_modules/\nvendor\n")
				h.Write("real/x.txt", "x")
				h.Symlink("real", "node_modules")
				h.Symlink("real", "vendor")
			},
		},
	},
}

func TestDifferentialIgnore(t *testing.T) {
	runDiffBatches(t, []diffBatch{ignoreBatch})
}
