package plans

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

var (
	masterSuffix = regexp.MustCompile(`(?i)\s*[-–—:]+\s*master\s+plan\s*$`)
	placeholder  = regexp.MustCompile(`\{[^{}\s][^{}]*\}`)
	urlScheme    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	// strayRow is a line that looks like a phase row outside any table,
	// e.g. a table whose |---| separator line is missing.
	strayRow = regexp.MustCompile(`^\s*\|[^|]*\|\s*\[[^\]]*\]\([^)]*\)[^|]*\|`)
	idPrefix = regexp.MustCompile(`(?i)^phase\s+`)
)

// readMaster reads the plan name and the phase rows of the master plan.
func (l *loader) readMaster(src []byte) {
	d := l.md.parse(src)
	l.master = d
	file := l.plan.Path

	var h1s []heading
	for _, h := range d.headings() {
		if h.level == 1 {
			h1s = append(h1s, h)
		}
	}
	switch {
	case len(h1s) == 0:
		l.plan.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		l.warnf(CodeNoTitle, file, 1, "master plan has no H1 title; using the file name %q as the plan name", l.plan.Name)
	default:
		l.plan.Name = masterSuffix.ReplaceAllString(h1s[0].text, "")
		if placeholder.MatchString(h1s[0].text) {
			l.warnf(CodeTemplatePlaceholder, file, h1s[0].line, "title %q still has a template placeholder", h1s[0].text)
		}
		if len(h1s) > 1 {
			l.warnf(CodeMultipleH1, file, h1s[1].line,
				"second H1 %q: the master plan seems to contain other documents pasted in; only its phase table is read, phase files are read from disk",
				h1s[1].text)
		}
	}

	_ = ast.Walk(d.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*extast.Table); ok && entering {
			l.readTable(d, t)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})

	d.textBlocks(func(b ast.Node) {
		lines := b.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			if strayRow.Match(seg.Value(d.src)) {
				l.errorf(CodeBadPhaseRow, file, d.line(seg.Start),
					"this looks like a phase row but is not in a markdown table: a table needs a header row and a separator row (|---|---|) above its rows")
			}
		}
	})

	if len(l.plan.Phases) == 0 {
		l.errorf(CodeNoPhases, file, 1,
			"no phases found: list them in a table with rows like | 1 | [Title](phase-1.md) | Focus | Risk | Pending |")
	}
}

// columns says where a phase table keeps its optional cells.
type columns struct {
	focus, risk, status int // -1: absent; status -1 means "the last cell"
}

func (l *loader) readTable(d *document, t *extast.Table) {
	var header []string
	var rows []*extast.TableRow
	for c := t.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *extast.TableHeader:
			for cell := c.FirstChild(); cell != nil; cell = cell.NextSibling() {
				header = append(header, strings.ToLower(d.plain(cell)))
			}
		case *extast.TableRow:
			rows = append(rows, c)
		}
	}

	phaseTable := looksLikePhaseHeader(header)
	for _, r := range rows {
		if cells := rowCells(r); len(cells) >= 2 && localLink(cells[1]) != nil {
			phaseTable = true
			break
		}
	}
	if !phaseTable {
		return
	}

	cols := columns{focus: -1, risk: -1, status: -1}
	for i, h := range header {
		switch h {
		case "focus":
			cols.focus = i
		case "risk":
			cols.risk = i
		case "status", "state":
			cols.status = i
		}
	}
	for _, r := range rows {
		l.readRow(d, r, cols)
	}
}

func looksLikePhaseHeader(h []string) bool {
	if len(h) < 2 {
		return false
	}
	switch h[0] {
	case "phase", "id", "#", "no", "no.", "phase id", "phase #", "step":
	default:
		return false
	}
	switch h[1] {
	case "title", "name", "phase", "description", "file", "phase file":
		return true
	}
	return false
}

func rowCells(r *extast.TableRow) []ast.Node {
	var cells []ast.Node
	for c := r.FirstChild(); c != nil; c = c.NextSibling() {
		cells = append(cells, c)
	}
	return cells
}

// localLink is the first link in n that points at a file rather than a
// URL or an anchor.
func localLink(n ast.Node) *ast.Link {
	var found *ast.Link
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		lk, ok := c.(*ast.Link)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		dest := string(lk.Destination)
		if dest != "" && !strings.HasPrefix(dest, "#") && !urlScheme.MatchString(dest) {
			found = lk
			return ast.WalkStop, nil
		}
		return ast.WalkSkipChildren, nil
	})
	return found
}

func (l *loader) readRow(d *document, r *extast.TableRow, cols columns) {
	file := l.plan.Path
	line := d.line(r.Pos())
	cells := rowCells(r)
	texts := make([]string, len(cells))
	for i, c := range cells {
		texts[i] = d.plain(c)
	}
	// goldmark pads short rows with empty cells; a row of nothing is noise.
	if strings.Join(texts, "") == "" {
		return
	}

	id := idPrefix.ReplaceAllString(strings.TrimSpace(texts[0]), "")
	lk := localLink(cells[1])
	switch {
	case lk == nil:
		l.errorf(CodeBadPhaseRow, file, line,
			"phase row %q: the second cell must be a link to the phase file, like [Title](phase-%s.md)", rowText(texts), orN(id))
		return
	case id == "":
		l.errorf(CodePhaseNoID, file, line, "phase row %q has no id in its first cell", rowText(texts))
		return
	}
	if prev := l.plan.Phase(id); prev != nil {
		l.errorf(CodeDuplicateID, file, line, "phase id %s is used twice (first on line %d); ids must be unique", id, prev.Line)
		return
	}

	dest := string(lk.Destination)
	ph := &Phase{
		ID:         id,
		Title:      d.plain(lk),
		File:       dest,
		Path:       resolvePath(file, linkPath(dest)),
		Line:       line,
		DependsOn:  []string{},
		Gates:      []Gate{},
		Tasks:      []Task{},
		StatusText: statusCell(texts, cols),
	}
	if cols.focus >= 0 && cols.focus < len(texts) {
		ph.Focus = texts[cols.focus]
	} else if cols.status < 0 && len(texts) >= 4 {
		ph.Focus = texts[2]
	}
	if cols.risk >= 0 && cols.risk < len(texts) {
		ph.Risk = texts[cols.risk]
	} else if cols.status < 0 && len(texts) >= 5 {
		ph.Risk = texts[3]
	}
	status, known := parseStatus(ph.StatusText)
	ph.Status = status
	if !known {
		l.warnf(CodeUnknownStatus, file, line,
			"phase %s: status %q is not a status debussy knows; reading it as pending (known: pending, in progress, done, blocked, failed)",
			id, ph.StatusText)
	}
	if placeholder.MatchString(dest) {
		l.errorf(CodeTemplatePlaceholder, file, line,
			"phase %s links to %s, which still has a template placeholder; fill in the template before running it", id, dest)
		l.unread[ph] = true
	}
	for _, other := range l.plan.Phases {
		if other.Path == ph.Path {
			l.warnf(CodeDuplicateFile, file, line, "phases %s and %s use the same file %s", other.ID, id, dest)
		}
	}
	l.plan.Phases = append(l.plan.Phases, ph)
}

// statusCell is the status column, or the last cell when the header names
// none: the status is always written last.
func statusCell(texts []string, cols columns) string {
	if cols.status >= 0 && cols.status < len(texts) {
		return texts[cols.status]
	}
	if len(texts) < 3 {
		return ""
	}
	return texts[len(texts)-1]
}

func rowText(cells []string) string {
	return "| " + strings.Join(cells, " | ") + " |"
}

func orN(id string) string {
	if id == "" {
		return "N"
	}
	return id
}
