package plans

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
)

var (
	gatesHeading = regexp.MustCompile(`(?i)^(?:validation\s+|quality\s+)?gates\b`)
	depsHeading  = regexp.MustCompile(`(?i)^(?:phase\s+)?dependencies\b`)
	// dependsOnLine matches "**Depends On:**", "**Depends on**:" and a bare
	// "Depends On:" at the start of a line.
	dependsOnLine = regexp.MustCompile(`(?i)^\s*(?:\*\*|__)?\s*depends[\s_-]+on\s*(?::\s*(?:\*\*|__)?|(?:\*\*|__)\s*:)\s*`)
	// depLabel is the "Label:" an item of a Dependencies section starts with.
	depLabel = regexp.MustCompile(`^\s*(?:\[[\sxX]\]\s*)?(?:\*\*|__)?\s*([A-Za-z][A-Za-z /-]*?)\s*(?::\s*(?:\*\*|__)?|(?:\*\*|__)\s*:)\s*`)
	// noDeps recognises values that say "no dependency": N/A, None, -, ...
	noDeps = regexp.MustCompile(`(?i)^[\s*_(]*(?:$|n/?a\b|none\b|nothing\b|no\s+(?:dependenc|prior|previous)|independent\b|not\s+applicable\b|[-—–]+(?:\s|$))`)

	idPattern = `[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*`
	// phaseMention matches "Phase 1", "Phases 1 and 2", "Phase 1, 2, 3",
	// "Phase 1 & 2", "Phase 1-3".
	phaseMention = regexp.MustCompile(`(?i)\bphases?\s+(` + idPattern + `(?:\s*[-–]\s*[0-9]+)?` +
		`(?:\s*(?:,|&|/|\band\b|\bor\b)\s*(?:phases?\s+)?` + idPattern + `(?:\s*[-–]\s*[0-9]+)?)*)`)
	mentionItem = regexp.MustCompile(`(` + idPattern + `)(?:\s*[-–]\s*([0-9]+))?`)
	intID       = regexp.MustCompile(`^[0-9]+$`)

	readNotes   = regexp.MustCompile(`(?i)^(?:\*\*|__)?\s*read\s+(?:the\s+)?previous\s+notes?\b`)
	writeNotes  = regexp.MustCompile("(?i)^(?:\\*\\*|__)?\\s*write(?:\\*\\*|__)?\\s+(?:(?:the\\s+|your\\s+)?(?:phase\\s+)?notes?\\s*(?:(?:to|in|into|at)\\s*)?:?\\s*)?(?:\\*\\*|__)?\\s*`([^`]+)`")
	backticked  = regexp.MustCompile("`([^`]+)`")
	commandKw   = regexp.MustCompile(`(?i)\bcommand\s*:`)
	noBefore    = regexp.MustCompile(`(?i)\bno\s+$`)
	titlePrefix = regexp.MustCompile(`(?i)^.*?\bphase\s+` + idPattern + `\s*[:—–-]\s*(.+)$`)
)

// depRef is a dependency as written in a phase file, before it is matched
// against the master table: a link to a file, or an id mentioned as
// "Phase N".
type depRef struct {
	link string
	text string // the link's text: its "Phase N" is used when the link is broken
	id   string
	line int
}

// phaseDoc is what a phase file says, before the master plan's context
// (ids, files, configured gate commands) is applied.
type phaseDoc struct {
	title     string
	titleLine int
	deps      []depRef
	gates     []Gate
	gatesLine int // line of the first gates heading, 0 without one
	tasks     []Task
	read      []string
	readLine  map[string]int
	write     []string
}

// readPhases reads every phase file named in the table.
func (l *loader) readPhases() {
	for _, ph := range l.plan.Phases {
		if l.unread[ph] {
			continue
		}
		raw, err := os.ReadFile(ph.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.errorf(CodeMissingPhaseFile, l.plan.Path, ph.Line,
				"phase %s: phase file %s not found (looked for %s); create it or fix the link", ph.ID, ph.File, ph.Path)
			continue
		case err != nil:
			l.errorf(CodeUnreadablePhaseFile, l.plan.Path, ph.Line, "phase %s: read phase file %s: %v", ph.ID, ph.File, err)
			continue
		}
		src := normalize(raw)
		ph.Content = string(src)
		doc := parsePhase(l.md.parse(src))
		l.applyPhase(ph, doc)
	}
}

func (l *loader) applyPhase(ph *Phase, doc phaseDoc) {
	file := ph.Path
	if doc.title != "" {
		ph.Title = doc.title
		if placeholder.MatchString(doc.title) {
			l.warnf(CodeTemplatePlaceholder, file, doc.titleLine, "title %q still has a template placeholder", doc.title)
		}
	} else {
		l.warnf(CodeNoTitle, file, 1, "phase %s: phase file has no H1 title; using the table's title %q", ph.ID, ph.Title)
	}
	ph.Tasks = doc.tasks
	ph.ReadNotes = doc.read
	ph.noteLine = doc.readLine
	ph.WriteNotes = doc.write
	l.refs[ph] = doc.deps

	for _, g := range doc.gates {
		// gate_commands for a gate's name wins over the plan's own command:
		// it is how a user points a gate at a program installed elsewhere.
		if cmd, ok := lookupGate(l.opts.GateCommands, g.Name); ok {
			g.Command, g.FromConfig = cmd, true
		}
		if g.Command == "" {
			if cmd, ok := lookupPreset(l.presets, g); ok {
				g.Command, g.Preset = cmd, true
			} else {
				g.Unchecked = true
				sev, then := SeverityWarning, "it is UNCHECKED: the agent is told to meet it, and it is never reported as passed"
				if l.opts.StrictGates {
					sev, then = SeverityError, "strict_gates refuses it"
				}
				l.add(sev, CodeGateNoCommand, file, g.Line,
					"gate %q has no command, no preset and no gate_commands entry, so %s; put the command in backticks (- %s: `command` - expectation) or map %q in the config's gate_commands",
					g.Name, then, g.Name, g.Name)
			}
		}
		ph.Gates = append(ph.Gates, g)
	}

	switch {
	case len(ph.Gates) > 0:
	case len(ph.Tasks) == 0:
		l.warnf(CodeEmptyPhase, file, max(doc.gatesLine, 1),
			"phase %s has no gates and no tasks: nothing says what to do or how to check it", ph.ID)
	case doc.gatesLine > 0:
		l.warnf(CodeNoGates, file, doc.gatesLine,
			"phase %s: the gates section lists no gates (- name: `command`); the phase completes on the agent's word alone", ph.ID)
	default:
		l.warnf(CodeNoGates, file, 1,
			"phase %s has no gates (a \"## Gates\" section of - name: `command` items); it completes on the agent's word alone", ph.ID)
	}
}

// lookupGate finds a configured command by gate name, exactly or else
// ignoring case.
func lookupGate(cmds map[string]string, name string) (string, bool) {
	if cmd, ok := cmds[name]; ok && cmd != "" {
		return cmd, true
	}
	keys := make([]string, 0, len(cmds))
	for k := range cmds {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic when several keys differ only in case
	for _, k := range keys {
		if strings.EqualFold(k, name) && cmds[k] != "" {
			return cmds[k], true
		}
	}
	return "", false
}

// parsePhase reads a phase file's title, dependencies, gates, tasks and
// notes paths.
func parsePhase(d *document) phaseDoc {
	doc := phaseDoc{readLine: map[string]int{}}
	for _, h := range d.headings() {
		if h.level == 1 {
			doc.title, doc.titleLine = h.text, h.line
			// "Missing Phase Phase 1: Phase One" (the Python tool's template
			// "{plan} Phase {n}: {title}"): the id is shown beside the title,
			// so keep only the title.
			if m := titlePrefix.FindStringSubmatch(h.text); m != nil && m[1] != "" {
				doc.title = m[1]
			}
			break
		}
	}
	doc.tasks = tasksOf(d)

	// "**Depends On:**" lines, wherever they are.
	d.textBlocks(func(b ast.Node) {
		lines := b.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			m := dependsOnLine.FindIndex(seg.Value(d.src))
			if m == nil {
				continue
			}
			doc.deps = append(doc.deps, d.depValue(b, seg.Start+m[1], seg.Stop)...)
		}
	})

	// "## Dependencies" items: labelled ("Previous phase: ...", "Requires:
	// ..."), or bare "Phase N" / links.
	for _, sec := range d.sections(depsHeading) {
		for _, b := range listItems(sec) {
			start, end := blockRange(b)
			text := checkboxPrefix.ReplaceAllString(d.raw(b), "")
			if m := depLabel.FindSubmatchIndex(d.src[start:end]); m != nil {
				if isDepLabel(string(d.src[start+m[2] : start+m[3]])) {
					doc.deps = append(doc.deps, d.depValue(b, start+m[1], end)...)
				}
				continue
			}
			lower := strings.ToLower(text)
			if strings.HasPrefix(lower, "phase") || strings.HasPrefix(text, "[") {
				doc.deps = append(doc.deps, d.depValue(b, start, end)...)
			}
		}
	}

	for _, sec := range d.sections(gatesHeading) {
		if doc.gatesLine == 0 {
			doc.gatesLine = d.nodeLine(sec[0])
		}
		for _, b := range listItems(sec) {
			doc.gates = append(doc.gates, d.gate(b))
		}
	}

	// Notes paths live in list items (the Process Wrapper checklist).
	d.textBlocks(func(b ast.Node) {
		if _, ok := b.Parent().(*ast.ListItem); !ok || b.Parent().FirstChild() != b {
			return
		}
		text := checkboxPrefix.ReplaceAllString(d.raw(b), "")
		if loc := readNotes.FindStringIndex(text); loc != nil {
			for _, m := range backticked.FindAllStringSubmatch(text[loc[1]:], -1) {
				path := strings.TrimSpace(m[1])
				if _, ok := doc.readLine[path]; !ok {
					doc.readLine[path] = d.nodeLine(b)
				}
				doc.read = appendUnique(doc.read, path)
			}
		}
		if m := writeNotes.FindStringSubmatch(text); m != nil {
			doc.write = appendUnique(doc.write, strings.TrimSpace(m[1]))
		}
	})
	return doc
}

func isDepLabel(label string) bool {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "previous phase", "previous phases", "prior phase", "prior phases", "requires", "required",
		"depends on", "depends", "dependencies", "phase dependencies", "prerequisite", "prerequisites",
		"after", "blocked by", "phase", "phases":
		return true
	}
	return false
}

// depValue reads the dependencies in src[from:to] of block: links to phase
// files and "Phase N" mentions, unless the value says there are none.
func (d *document) depValue(block ast.Node, from, to int) []depRef {
	if noDeps.Match(d.src[from:to]) {
		return nil
	}
	line := d.line(from)
	prose, links := d.inlineRange(block, from, to)
	var refs []depRef
	for _, lk := range links {
		if lk.dest == "" || strings.HasPrefix(lk.dest, "#") || urlScheme.MatchString(lk.dest) {
			continue
		}
		refs = append(refs, depRef{link: lk.dest, text: lk.text, line: d.line(lk.pos)})
	}
	for _, id := range mentions(prose) {
		refs = append(refs, depRef{id: id, line: line})
	}
	return refs
}

// mentions returns the ids named as "Phase N" in text, ranges expanded.
func mentions(text string) []string {
	var ids []string
	for _, m := range phaseMention.FindAllStringSubmatch(text, -1) {
		for _, it := range mentionItem.FindAllStringSubmatch(m[1], -1) {
			id, hi := it[1], it[2]
			switch strings.ToLower(id) {
			case "and", "or", "phase", "phases":
				continue
			}
			if hi != "" && intID.MatchString(id) {
				lo, _ := strconv.Atoi(id)
				top, _ := strconv.Atoi(hi)
				if lo <= top && top-lo < 100 {
					for n := lo; n <= top; n++ {
						ids = append(ids, strconv.Itoa(n))
					}
					continue
				}
			}
			ids = append(ids, id)
		}
	}
	return ids
}

// gate reads one "- name: requirement" item of a gates section. The
// command is the first code span, or the one after "command:"; a span that
// itself starts with "command:" loses that prefix.
func (d *document) gate(b ast.Node) Gate {
	start, end := blockRange(b)
	spans := d.codeSpans(b)
	text := checkboxPrefix.ReplaceAllString(d.raw(b), "")

	var cmd string
	kw := -1
	for _, loc := range commandKw.FindAllIndex(d.src[start:end], -1) {
		// "# no command: the agent checks" says there is none.
		if noBefore.Match(d.src[start : start+loc[0]]) {
			continue
		}
		if !insideSpan(spans, start+loc[0]) {
			kw = start + loc[0]
			break
		}
	}
	switch {
	case kw >= 0:
		for _, s := range spans {
			if s.start > kw {
				cmd = s.text
				break
			}
		}
		if cmd == "" {
			cmd = bareCommand(d.src, kw, end)
		}
	case len(spans) > 0:
		cmd = spans[0].text
		if loc := commandKw.FindStringIndex(cmd); loc != nil && loc[0] == 0 {
			cmd = strings.TrimSpace(cmd[loc[1]:])
		}
	}

	fenced := false
	if cmd == "" {
		cmd = d.fencedCommand(b)
		fenced = cmd != ""
	}
	text = strings.TrimSpace(text)
	g := Gate{Command: cmd, Line: d.nodeLine(b), Requirement: text}
	if i := colonOutsideCode(text); i >= 0 && !strings.Contains(text[:i], "`") {
		g.Name = strings.Trim(text[:i], "*_ \t")
		g.Requirement = strings.TrimSpace(text[i+1:])
		// "**name: requirement**": the emphasis opened before the name
		// closes inside the requirement.
		for _, mark := range []string{"**", "__"} {
			if strings.Count(text[:i], mark)%2 == 1 {
				g.Requirement = strings.TrimSpace(strings.Replace(g.Requirement, mark, "", 1))
			}
		}
	}
	if strings.EqualFold(g.Name, "command") {
		g.Name = "" // "- command: `npm test` ➜ ..." names the gate by its command
	}
	if g.Name == "" && fenced && text != "" && !strings.Contains(text, "`") {
		// "- lint" over its fenced block: the item is the gate's name.
		g.Name, g.Requirement = strings.Trim(text, "*_ \t"), ""
	}
	if g.Name == "" {
		g.Name = cmd
		if g.Name == "" {
			g.Name = g.Requirement
		}
	}
	return g
}

// fencedCommand is the command of a gate written as a fenced code block
// under its list item ("- tests:" then ```bash … ```): its lines, comments
// and blanks dropped, backslash continuations joined, chained with && so
// the first failing line fails the gate. A block whose lines say
// "command: X" (the Python tool's converted plans) runs what follows
// "command:" on those lines alone; the rest are its notes. Such a block
// also counts when it is not indented under the item: it then ends the
// list and follows it.
func (d *document) fencedCommand(b ast.Node) string {
	for n := b.NextSibling(); n != nil; n = n.NextSibling() {
		if fc, ok := n.(*ast.FencedCodeBlock); ok {
			return d.fenceCommand(fc, false)
		}
	}
	item := b.Parent()
	if _, ok := item.(*ast.ListItem); !ok || item.NextSibling() != nil || item.Parent() == nil {
		return ""
	}
	if fc, ok := item.Parent().NextSibling().(*ast.FencedCodeBlock); ok {
		return d.fenceCommand(fc, true)
	}
	return ""
}

// fenceCommand reads a fenced block as a gate's command (see
// fencedCommand); keyedOnly takes only its "command: X" lines.
func (d *document) fenceCommand(fc *ast.FencedCodeBlock, keyedOnly bool) string {
	var cmds, keyed []string
	cont := ""
	lines := fc.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		line := strings.TrimSpace(string(seg.Value(d.src)))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if c, ok := strings.CutSuffix(line, "\\"); ok {
			cont += strings.TrimSpace(c) + " "
			continue
		}
		line = cont + line
		cont = ""
		cmds = append(cmds, line)
		if loc := commandKw.FindStringIndex(line); loc != nil && loc[0] == 0 {
			if c := strings.Trim(strings.TrimSpace(line[loc[1]:]), "`"); c != "" {
				keyed = append(keyed, c)
			}
		}
	}
	if cont != "" {
		cmds = append(cmds, strings.TrimSpace(cont))
	}
	if keyed != nil || keyedOnly {
		cmds = keyed
	}
	return strings.Join(cmds, " && ")
}

// bareCommand is the text after "command:" when it is not in backticks,
// up to the end of the line or the parenthesis that opened it.
func bareCommand(src []byte, kw, end int) string {
	colon := kw + strings.IndexByte(string(src[kw:end]), ':') + 1
	rest := string(src[colon:end])
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	before := strings.TrimRight(string(src[:kw]), " \t")
	if strings.HasSuffix(before, "(") {
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[:i]
		}
	}
	return strings.TrimSpace(rest)
}

func insideSpan(spans []codeSpan, off int) bool {
	for _, s := range spans {
		if off >= s.start && off < s.end {
			return true
		}
	}
	return false
}

// colonOutsideCode is the index of the first ':' in s that is not inside a
// backtick code span, or -1.
func colonOutsideCode(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return i
		case '`':
			n := 1
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			fence := strings.Repeat("`", n)
			j := strings.Index(s[i+n:], fence)
			if j < 0 {
				return -1
			}
			i += n + j + n - 1
		}
	}
	return -1
}

// blockRange is the source range of a text block's lines.
func blockRange(b ast.Node) (int, int) {
	lines := b.Lines()
	if lines.Len() == 0 {
		return b.Pos(), b.Pos()
	}
	return lines.At(0).Start, lines.At(lines.Len() - 1).Stop
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
