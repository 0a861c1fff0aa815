package gitcommit

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Round three (issue 19): attributes and line endings. Each case's
// .gitattributes lives in its directory; the batches differ in core.autocrlf.

// attrCase writes a .gitattributes and files (name → content).
func attrCase(name, attrs string, files map[string]string) batchCase {
	return batchCase{name: name, change: func(t *testing.T, h *diffRepo) {
		if attrs != "" {
			h.Write(".gitattributes", attrs)
		}
		for f, c := range files {
			h.Write(f, c)
		}
	}}
}

// eolSamples is one file of each kind of line ending under the prefix.
func eolSamples(prefix, ext string) map[string]string {
	return map[string]string{
		prefix + "crlf." + ext:    "a\r\nb\r\n",
		prefix + "lf." + ext:      "a\nb\n",
		prefix + "mixed." + ext:   "a\r\nb\nc\r\n",
		prefix + "lonecr." + ext:  "a\rb\r\n",
		prefix + "nul." + ext:     "a\x00\r\n",
		prefix + "noeol." + ext:   "a\r\nb",
		prefix + "empty." + ext:   "",
		prefix + "cr-only." + ext: "\r",
		prefix + "crcrlf." + ext:  "a\r\r\nb\r\n",
	}
}

func eolCases() []batchCase {
	return []batchCase{
		attrCase("text=auto on every kind of line ending", "* text=auto\n", eolSamples("", "t")),
		attrCase("text on every kind of line ending", "* text\n", eolSamples("", "t")),
		attrCase("-text on every kind of line ending", "* -text\n", eolSamples("", "t")),
		attrCase("binary on every kind of line ending", "* binary\n", eolSamples("", "t")),
		attrCase("eol=crlf alone implies text", "* eol=crlf\n", eolSamples("", "t")),
		attrCase("eol=lf alone implies text", "* eol=lf\n", eolSamples("", "t")),
		attrCase("text=auto eol=crlf", "* text=auto eol=crlf\n", eolSamples("", "t")),
		attrCase("-text eol=crlf: -text wins", "* -text eol=crlf\n", eolSamples("", "t")),
		attrCase("unspecified text (!text) on every kind", "* text\n*.u !text\n", eolSamples("", "u")),
		attrCase("no attributes at all", "", eolSamples("", "t")),
		attrCase("later lines override earlier ones", "*.t text\n*.t -text\nx.* text\n", map[string]string{"a.t": "a\r\n", "x.t": "x\r\n"}),
		attrCase("a macro defined in a nested .gitattributes is ignored", "[attr]mytext text\n*.m mytext\n", map[string]string{"a.m": "a\r\n"}),
		attrCase("a negative pattern is ignored", "!*.n text\n*.p text\n", map[string]string{"a.n": "a\r\n", "a.p": "p\r\n"}),
		attrCase("the binary macro used as a value", "* text\n*.b binary\n*.c -diff -merge -text\n", map[string]string{"a.b": "b\r\n", "a.c": "c\r\n", "a.t": "t\r\n"}),
		attrCase("a quoted pattern", "\"a b.t\" text\n\"q\\\"t.t\" text\n", map[string]string{"a b.t": "a\r\n", "q\"t.t": "q\r\n", "c.t": "c\r\n"}),
		attrCase("a pattern with a slash is anchored to its directory", "sub/*.t text\n", map[string]string{"sub/a.t": "a\r\n", "x/sub/a.t": "a\r\n", "a.t": "a\r\n"}),
		attrCase("a directory pattern does not apply to its files", "d/ text\nd2/** text\n", map[string]string{"d/a.t": "a\r\n", "d2/a.t": "a\r\n", "d2/e/b.t": "b\r\n"}),
		attrCase("**/ in attribute patterns", "**/gen/*.t text\n", map[string]string{"gen/a.t": "a\r\n", "x/y/gen/b.t": "b\r\n", "gen/z/c.t": "c\r\n"}),
		attrCase(".gitattributes with CRLF lines and a BOM", "\ufeff*.t text\r\n*.u text\r\n", map[string]string{"a.t": "a\r\n", "a.u": "u\r\n"}),
		attrCase("a NUL ends its .gitattributes line, not the file", "*.t te\x00xt\n*.u text\n*.v text\x00\r\n", map[string]string{"a.t": "a\r\n", "a.u": "u\r\n", "a.v": "v\r\n"}),
		attrCase("attribute names and values are case-sensitive", "*.t TEXT\n*.u text=AUTO\n*.v eol=CRLF\n", map[string]string{"a.t": "a\r\n", "a.u": "u\r\n", "a.v": "v\r\n"}),
		attrCase("patterns are case-sensitive", "*.T text\n", map[string]string{"a.t": "a\r\n", "a.T": "T\r\n"}),
		attrCase("a comment and blank lines", "# *.t text\n\n   \n*.u text # trailing\n", map[string]string{"a.t": "a\r\n", "a.u": "u\r\n", "#": "x\r\n"}),
		attrCase("text=auto on UTF-16 with a BOM is binary", "* text=auto\n", map[string]string{"u16.txt": "\xff\xfea\x00\r\x00\n\x00"}),
		attrCase("text=auto with many control characters is binary", "* text=auto\n", map[string]string{
			"ctrl.txt": strings.Repeat("\x01\x02\x03\x04\x05\x06\x07\x08", 4) + "a\r\n",
			"few.txt":  "\x1b[1mbold\x1b[0m\r\nplain\r\nplain\r\nplain\r\nplain\r\nplain\r\nplain\r\nplain\r\n",
			"eof.txt":  "dos\r\n\x1a",
		}),
		attrCase("text=auto: a NUL far past the first 8000 bytes", "* text=auto\n", map[string]string{
			"late-nul.txt": strings.Repeat("line\r\n", 4000) + "\x00\r\n",
		}),
		attrCase("ident with every $Id$ form", "* ident\n", map[string]string{
			"a.c": "$Id$\n$Id: abc $\n$Id:no-end\n$Id: x\ny $\n$Id$$Id$\n$Id:$\n",
			"b.c": "no ident here\n",
			"c.c": "$Id: binary \x00 $\n",
		}),
		attrCase("ident together with text", "* ident text\n", map[string]string{"a.c": "$Id: zz $\r\nline\r\n"}),
		{
			name: "text=auto keeps CRLF in files committed with CRLF",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("in-index.txt", "a\r\nb\r\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "* text=auto\n")
				h.Write("in-index.txt", "a\r\nb\r\nc\r\n")
				h.Write("new.txt", "a\r\n")
			},
		},
		{
			name: "text (not auto) converts files committed with CRLF",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("in-index.txt", "a\r\nb\r\n")
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "* text\n")
				h.Write("in-index.txt", "a\r\nb\r\nc\r\n")
			},
		},
		{
			name: "nested .gitattributes overrides its parent",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "*.t text\n*.b -text\n")
				h.Write("sub/.gitattributes", "*.t -text\n*.b text\n")
				for _, f := range []string{"a.t", "a.b", "sub/a.t", "sub/a.b", "sub/deep/c.t"} {
					h.Write(f, "x\r\n")
				}
			},
		},
		{
			name: "changing only .gitattributes does not restage unchanged files",
			setup: func(t *testing.T, h *diffRepo) {
				h.Write("a.t", "a\r\n")
				h.Touch("a.t", time.Now().Add(-time.Hour)) // not racily clean (see the racy case)
			},
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "*.t text\n")
			},
		},
		{
			name: "symlinks are never converted",
			change: func(t *testing.T, h *diffRepo) {
				h.Write(".gitattributes", "* text eol=crlf ident\n")
				h.Symlink("target\r", "link")
				h.Symlink("$Id$", "idlink")
			},
		},
	}
}

// attrSourceCases are attributes from outside the worktree.
var attrSourceCases = []diffCase{
	{
		name: "an attributes line of 2048 bytes or more is ignored, as git ignores it",
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".git/info/attributes", "*.t text"+strings.Repeat(" ", 2100)+"\n*.u text\n*.v -text"+strings.Repeat(" ", 2030)+"\n")
			h.Write(".gitattributes", "*.t -text\n*.v text\n")
			h.Write("a.t", "a\r\n")
			h.Write("a.u", "u\r\n")
			h.Write("a.v", "v\r\n")
		},
	},
	{
		name: "a macro defined in info/attributes is used by .gitattributes",
		change: func(t *testing.T, h *diffRepo) {
			h.Write(".git/info/attributes", "[attr]lf text eol=lf\n")
			h.Write(".gitattributes", "*.t lf\n")
			h.Write("a.t", "a\r\n")
		},
	},
	{
		name: "core.attributesFile with ~/",
		home: map[string]string{".gitconfig": defaultDiffGitconfig + "[core]\n\tattributesFile = ~/my.attributes\n", "my.attributes": "*.t text\n"},
		change: func(t *testing.T, h *diffRepo) {
			h.Write("a.t", "a\r\n")
			h.Write("b.x", "b\r\n")
		},
	},
}

func TestDifferentialEOL(t *testing.T) {
	runDiffCases(t, attrSourceCases)
	t.Run("racy", func(t *testing.T) { t.Parallel(); runDiffCase(t, racyCase) })
	// Files over the streaming threshold, once (the race detector makes
	// converting them slow).
	large := strings.Repeat("0123456789abcdef0123456789abcdef\r\n", streamThreshold/34+2000)
	runDiffBatches(t, []diffBatch{
		{name: "attributes", cases: append(eolCases(), attrCase("text and text=auto on files over the streaming threshold",
			"*.big text\n*.auto text=auto\n", map[string]string{"a.big": large, "b.auto": large + "\x00", "c.auto": large}))},
		{
			name:  "core.autocrlf=true",
			setup: func(t *testing.T, h *diffRepo) { h.Git("config", "core.autocrlf", "true") },
			cases: append(eolCases(), attrCase("autocrlf on unattributed files", "", eolSamples("", "x"))),
		},
		{
			name:  "core.autocrlf=input",
			setup: func(t *testing.T, h *diffRepo) { h.Git("config", "core.autocrlf", "input") },
			cases: append(eolCases()[:10], attrCase("autocrlf on unattributed files", "", eolSamples("", "x"))),
		},
		{
			name: "core.eol=crlf and core.safecrlf=warn",
			setup: func(t *testing.T, h *diffRepo) {
				h.Git("config", "core.eol", "crlf")
				h.Git("config", "core.safecrlf", "warn")
			},
			cases: eolCases()[:10],
		},
	})
}

// Touch sets path's access and modification times.
func (h *diffRepo) Touch(path string, at time.Time) {
	h.t.Helper()
	if err := os.Chtimes(h.path(path), at, at); err != nil {
		h.t.Fatal(err)
	}
}

// git's racy check is in whole seconds: a file whose mtime falls in the
// index's second is re-read even though its stat matches, so a conversion
// that changed since is applied. Times are set so the outcome does not depend
// on the clock.
var racyCase = diffCase{
	name: "an entry in the index's second is re-read (racy git, whole seconds)",
	setup: func(t *testing.T, h *diffRepo) {
		h.Write("a.t", "a\r\n")
		h.Touch("a.t", time.Unix(1700000000, 100))
	},
	change: func(t *testing.T, h *diffRepo) {
		h.Write(".gitattributes", "*.t text\n")
		h.Touch(".git/index", time.Unix(1700000000, 500))
	},
}
