package gitcommit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Attribute states as git keeps them: set ("text"), unset ("-text"),
// unspecified ("!text", or never mentioned) and a string ("eol=lf").
type attrKind uint8

const (
	attrUnspecified attrKind = iota
	attrSet
	attrUnset
	attrString
)

type attrValue struct {
	kind  attrKind
	value string
}

type attrState struct {
	name string
	val  attrValue
}

// attrLine is one line of an attributes file: a path pattern or a macro
// definition ("[attr]binary -diff -merge -text") and its states in order.
type attrLine struct {
	macro   string // the macro's name; "" for a pattern line
	pattern string // without a leading "!" and trailing "/"
	noDir   bool   // no '/' in the pattern: match the basename at any depth
	mustDir bool   // trailing '/': matches directories only, so never a file
	states  []attrState
}

// attrFile is one parsed attributes file; dir is the worktree directory its
// patterns are relative to ("" for the root and for files outside the tree).
type attrFile struct {
	path  string
	dir   string
	lines []attrLine
}

// builtinAttrs is git's one built-in macro.
var builtinAttrs = &attrFile{path: "[builtin]", lines: []attrLine{{
	macro:  "binary",
	states: []attrState{{"diff", attrValue{kind: attrUnset}}, {"merge", attrValue{kind: attrUnset}}, {"text", attrValue{kind: attrUnset}}},
}}}

// attrs answers git check-attr for worktree paths during one commit: it
// reads each directory's .gitattributes once, as git does for `git add`
// (from the worktree, never following a symlinked in-tree file).
type attrs struct {
	r       *Repo
	global  []*attrFile // lowest priority first: builtin, system, global
	info    *attrFile   // $GIT_COMMON_DIR/info/attributes, highest priority
	loaded  bool
	loadErr error

	mu   sync.Mutex
	dirs map[string]*attrFile // by worktree directory; nil: none there
}

func (r *Repo) newAttrs(cfg gitConfig) *attrs {
	a := &attrs{r: r, dirs: map[string]*attrFile{}}
	a.global = []*attrFile{builtinAttrs}
	if r.getenv("GIT_ATTR_NOSYSTEM") == "" {
		a.global = append(a.global, readAttrFileOrNil(r, "/etc/gitattributes", "", true, true))
	}
	var global string
	if f := cfg.get("core.attributesFile"); f != "" {
		global = r.expandPath(f, r.root)
	} else if x := r.xdgConfigHome(); x != "" {
		global = filepath.Join(x, "git", "attributes")
	}
	if global != "" {
		a.global = append(a.global, readAttrFileOrNil(r, global, "", true, true))
	}
	a.info = readAttrFileOrNil(r, filepath.Join(r.commonDir, "info", "attributes"), "", true, true)
	return a
}

// globals returns the files outside the worktree that exist.
func (a *attrs) globals() []*attrFile {
	var out []*attrFile
	for _, f := range append(a.global[1:len(a.global):len(a.global)], a.info) {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

func readAttrFileOrNil(r *Repo, path, dir string, macros, follow bool) *attrFile {
	f, err := readAttrFile(path, dir, macros, follow)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("skip unreadable attributes file", "file", path, "err", err)
	}
	return f
}

// readAttrFile parses an attributes file; (nil, ErrNotExist) when it is
// missing. An in-tree file that is a symlink is treated as missing: git
// opens those with O_NOFOLLOW since 2.32.
func readAttrFile(path, dir string, macros, follow bool) (*attrFile, error) {
	if !follow {
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fs.ErrNotExist
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseAttrFile(b, path, dir, macros), nil
}

// dirFile returns the .gitattributes of worktree directory dir, or nil.
func (a *attrs) dirFile(dir string) (*attrFile, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.dirs[dir]; ok {
		return f, nil
	}
	p := filepath.Join(a.r.root, filepath.FromSlash(dir), ".gitattributes")
	f, err := readAttrFile(p, dir, dir == "", false)
	if errors.Is(err, fs.ErrNotExist) {
		if b, ok := a.r.ruleFileFromIndex(path.Join(dir, ".gitattributes")); ok {
			f, err = parseAttrFile(b, p, dir, dir == ""), nil
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	a.dirs[dir] = f
	return f, nil
}

func parseAttrFile(b []byte, path, dir string, macros bool) *attrFile {
	f := &attrFile{path: path, dir: dir}
	b = bytes.TrimPrefix(b, utf8BOM)
	for raw := range bytes.SplitSeq(b, []byte("\n")) {
		// As git's read_attr_from_file: a line without its CR, up to a NUL;
		// one of attrMaxLine bytes or more is ignored (with a warning).
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			raw = raw[:i]
		}
		if len(raw) >= attrMaxLine {
			continue
		}
		if l, ok := parseAttrLine(string(raw), macros); ok {
			f.lines = append(f.lines, l)
		}
	}
	return f
}

const attrBlank = " \t\r\n"

// attrMaxLine is git's ATTR_MAX_LINE_LENGTH.
const attrMaxLine = 2048

// parseAttrLine follows git's parse_attr_line: a line with an invalid
// attribute name, a negative pattern or a macro where macros are not allowed
// is dropped whole (git warns).
func parseAttrLine(line string, macros bool) (attrLine, bool) {
	line = strings.TrimLeft(line, attrBlank)
	if line == "" || line[0] == '#' {
		return attrLine{}, false
	}
	var name string
	if line[0] == '"' {
		uq, rest, ok := unquoteC(line)
		if !ok {
			return attrLine{}, false
		}
		name, line = uq, rest
	} else {
		end := strings.IndexAny(line, attrBlank)
		if end < 0 {
			end = len(line)
		}
		name, line = line[:end], line[end:]
	}
	var l attrLine
	if m, ok := strings.CutPrefix(name, "[attr]"); ok {
		if !macros || !validAttrName(m) {
			return attrLine{}, false
		}
		l.macro = m
	} else {
		if strings.HasPrefix(name, "!") {
			return attrLine{}, false // "Negative patterns are ignored in git attributes"
		}
		if p, ok := strings.CutSuffix(name, "/"); ok {
			name, l.mustDir = p, true
		}
		l.pattern = name
		l.noDir = !strings.Contains(name, "/")
	}
	for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(attrBlank, r) }) {
		var st attrState
		switch {
		case strings.HasPrefix(tok, "-"):
			st = attrState{tok[1:], attrValue{kind: attrUnset}}
		case strings.HasPrefix(tok, "!"):
			st = attrState{tok[1:], attrValue{kind: attrUnspecified}}
		default:
			if k, v, ok := strings.Cut(tok, "="); ok {
				st = attrState{k, attrValue{kind: attrString, value: v}}
			} else {
				st = attrState{tok, attrValue{kind: attrSet}}
			}
		}
		if !validAttrName(st.name) {
			return attrLine{}, false
		}
		l.states = append(l.states, st)
	}
	return l, true
}

func validAttrName(n string) bool {
	if n == "" || n[0] == '-' {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c != '-' && c != '.' && c != '_' && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// unquoteC reads a C-quoted string at the start of s, as git writes quoted
// paths, and returns it with the rest of s.
func unquoteC(s string) (string, string, bool) {
	end := 1
	for end < len(s) {
		if s[end] == '\\' {
			end += 2
			continue
		}
		if s[end] == '"' {
			break
		}
		end++
	}
	if end >= len(s) {
		return "", "", false
	}
	// Go's unquoting accepts git's escapes (\t \n \" \\ \ooo) and more.
	uq, err := strconv.Unquote(s[:end+1])
	if err != nil {
		return "", "", false
	}
	return uq, s[end+1:], true
}

// matches reports whether pattern line l applies to the file name (a path
// relative to the worktree root) for an attributes file in dir.
func (l *attrLine) matches(name, dir string) bool {
	if l.macro != "" || l.mustDir {
		return false
	}
	if l.noDir {
		_, base := splitDir(name)
		return wildmatch(l.pattern, base, false)
	}
	rel := name
	if dir != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(name, dir+"/"); !ok {
			return false
		}
	}
	return wildmatch(strings.TrimPrefix(l.pattern, "/"), rel, true)
}

// lookup returns every attribute git would report for the file name, as
// `git check-attr -a` would, plus unspecified entries it met.
func (a *attrs) lookup(name string) (map[string]attrValue, error) {
	stack, err := a.stack(name)
	if err != nil {
		return nil, err
	}

	// Macros: the highest-priority definition wins.
	macros := map[string]*attrLine{}
	for _, f := range stack {
		if f == nil {
			continue
		}
		for i := len(f.lines) - 1; i >= 0; i-- {
			if m := f.lines[i].macro; m != "" && macros[m] == nil {
				macros[m] = &f.lines[i]
			}
		}
	}

	// The first value found, searching from the highest priority and from
	// each file's last line, wins; a set macro contributes its states at
	// the point it is set.
	out := map[string]attrValue{}
	var fill func(states []attrState)
	fill = func(states []attrState) {
		for i := len(states) - 1; i >= 0; i-- {
			st := states[i]
			if _, done := out[st.name]; done {
				continue
			}
			out[st.name] = st.val
			if m := macros[st.name]; m != nil && st.val.kind == attrSet {
				fill(m.states)
			}
		}
	}
	for _, f := range stack {
		if f == nil {
			continue
		}
		for i := len(f.lines) - 1; i >= 0; i-- {
			if f.lines[i].matches(name, f.dir) {
				fill(f.lines[i].states)
			}
		}
	}
	return out, nil
}

// stack returns the attribute files that apply to the file name, highest
// priority first: info/attributes, its directory's .gitattributes up to the
// root's, the global and system files, the built-in macro.
func (a *attrs) stack(name string) ([]*attrFile, error) {
	stack := []*attrFile{a.info}
	dir := name
	for {
		d, _ := splitDir(dir)
		f, err := a.dirFile(d)
		if err != nil {
			return nil, err
		}
		stack = append(stack, f)
		if d == "" {
			break
		}
		dir = d
	}
	for i := len(a.global) - 1; i >= 0; i-- {
		stack = append(stack, a.global[i])
	}
	return stack, nil
}

// none reports whether no attribute file but the built-in one applies to
// name: then only core.autocrlf can change its content.
func (a *attrs) none(name string) (bool, error) {
	stack, err := a.stack(name)
	if err != nil {
		return false, err
	}
	for _, f := range stack {
		if f != nil && f != builtinAttrs && len(f.lines) > 0 {
			return false, nil
		}
	}
	return true, nil
}
