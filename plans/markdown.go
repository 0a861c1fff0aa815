package plans

import (
	"regexp"
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// markdown is a goldmark parser with the GFM pieces plans use: tables (the
// phase list) and task-list checkboxes (tasks).
type markdown struct {
	p parser.Parser
}

func newMarkdown() *markdown {
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.TaskList))
	return &markdown{p: md.Parser()}
}

// document is a parsed file with what is needed to report positions.
type document struct {
	src        []byte
	root       ast.Node
	lineStarts []int // byte offset of each line's first byte
}

func (m *markdown) parse(src []byte) *document {
	d := &document{src: src, root: m.p.Parse(text.NewReader(src)), lineStarts: []int{0}}
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			d.lineStarts = append(d.lineStarts, i+1)
		}
	}
	return d
}

// line converts a byte offset into a 1-based line number.
func (d *document) line(off int) int {
	return sort.Search(len(d.lineStarts), func(i int) bool { return d.lineStarts[i] > off })
}

// nodeLine is the line a node starts on: its own position, or the first
// source line of a block.
func (d *document) nodeLine(n ast.Node) int {
	if n.Type() == ast.TypeBlock {
		if lines := n.Lines(); lines != nil && lines.Len() > 0 {
			return d.line(lines.At(0).Start)
		}
	}
	return d.line(n.Pos())
}

// raw is the source text of a block's lines, joined with spaces and trimmed:
// markdown as the user wrote it (backticks, links, emphasis kept).
func (d *document) raw(n ast.Node) string {
	lines := n.Lines()
	if lines == nil {
		return ""
	}
	parts := make([]string, 0, lines.Len())
	for i := range lines.Len() {
		seg := lines.At(i)
		parts = append(parts, strings.TrimSpace(string(seg.Value(d.src))))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// plain renders the inline content of n as text: emphasis dropped, code
// spans and links reduced to their text.
func (d *document) plain(n ast.Node) string {
	var b strings.Builder
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(d.src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(c.Value)
			case *ast.AutoLink:
				b.Write(c.URL(d.src))
			case *ast.RawHTML:
				// Inline HTML is markup, not text.
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// codeSpan is an inline code span with its source range, backticks
// included, so callers can tell what precedes or follows it.
type codeSpan struct {
	start, end int
	text       string
}

func (d *document) codeSpans(block ast.Node) []codeSpan {
	var out []codeSpan
	_ = ast.Walk(block, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		cs, ok := n.(*ast.CodeSpan)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		end := cs.Pos()
		for c := cs.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(d.src))
				end = t.Segment.Stop
			} else if s, ok := c.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
		for end < len(d.src) && d.src[end] == '`' {
			end++
		}
		out = append(out, codeSpan{start: cs.Pos(), end: end, text: strings.TrimSpace(b.String())})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// heading is an ATX/setext heading with its plain text.
type heading struct {
	text  string
	level int
	line  int
}

func (d *document) headings() []heading {
	var out []heading
	for c := d.root.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.Heading); ok {
			out = append(out, heading{text: d.plain(h), level: h.Level, line: d.nodeLine(h)})
		}
	}
	return out
}

// sections returns the top-level blocks under each heading whose text
// matches re, up to the next heading of the same or a higher level.
func (d *document) sections(re *regexp.Regexp) [][]ast.Node {
	var out [][]ast.Node
	var cur []ast.Node
	level := 0
	in := false
	for c := d.root.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.Heading); ok {
			if in && h.Level <= level {
				out = append(out, cur)
				in, cur = false, nil
			}
			if !in && re.MatchString(d.plain(h)) {
				in, level, cur = true, h.Level, []ast.Node{h}
				continue
			}
		}
		if in {
			cur = append(cur, c)
		}
	}
	if in {
		out = append(out, cur)
	}
	return out
}

// listItems returns, for each item of the top-level lists among blocks,
// the text block holding its first line.
func listItems(blocks []ast.Node) []ast.Node {
	var out []ast.Node
	for _, b := range blocks {
		list, ok := b.(*ast.List)
		if !ok {
			continue
		}
		for it := list.FirstChild(); it != nil; it = it.NextSibling() {
			if it.FirstChild() != nil && isTextBlock(it.FirstChild()) {
				out = append(out, it.FirstChild())
			}
		}
	}
	return out
}

func isTextBlock(n ast.Node) bool {
	switch n.(type) {
	case *ast.TextBlock, *ast.Paragraph:
		return true
	}
	return false
}

// textBlocks calls fn for every paragraph-like block in the document,
// including those inside lists and block quotes; code blocks are not text.
func (d *document) textBlocks(fn func(ast.Node)) {
	_ = ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && isTextBlock(n) {
			fn(n)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

var processWrapper = regexp.MustCompile(`(?i)^process\s+wrapper\b`)

var checkboxPrefix = regexp.MustCompile(`^\[[\sxX]\]\s*`)

// tasksOf returns every task-list item of the document in source order.
func tasksOf(d *document) []Task {
	tasks := []Task{}
	// The Python tool's "## Process Wrapper" checklist (read notes, run
	// the checks, signal done) is the same in every phase: it is how to
	// work, not the phase's tasks.
	skip := map[ast.Node]bool{}
	for _, sec := range d.sections(processWrapper) {
		for _, n := range sec {
			skip[n] = true
		}
	}
	_ = ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && skip[n] {
			return ast.WalkSkipChildren, nil
		}
		cb, ok := n.(*extast.TaskCheckBox)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		block := cb.Parent()
		tasks = append(tasks, Task{
			Text: checkboxPrefix.ReplaceAllString(d.raw(block), ""),
			Done: cb.IsChecked,
			Line: d.nodeLine(block),
		})
		return ast.WalkContinue, nil
	})
	return tasks
}

// link is a link's destination and source range within one block.
type link struct {
	dest string
	text string // plain link text, for "[Phase 1](missing.md)"
	pos  int
}

// inlineRange collects, for the inline content of block that starts within
// [from, to), the text outside links and the links themselves. Dependency
// values use it so "[Phase 1](phase-1.md)" counts once, as a link.
func (d *document) inlineRange(block ast.Node, from, to int) (string, []link) {
	var b strings.Builder
	var links []link
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Link:
				if c.Pos() >= from && c.Pos() < to {
					links = append(links, link{dest: string(c.Destination), text: d.plain(c), pos: c.Pos()})
				}
			case *ast.Text:
				// Clip: the text after "**Depends On:**" starts before the
				// value (with its leading space).
				start, stop := max(c.Segment.Start, from), min(c.Segment.Stop, to)
				if start < stop {
					b.Write(d.src[start:stop])
					b.WriteByte(' ')
				}
			case *ast.CodeSpan:
				// Code is not prose: `Phase 1` in backticks is not a dependency.
			default:
				walk(c)
			}
		}
	}
	walk(block)
	return b.String(), links
}
