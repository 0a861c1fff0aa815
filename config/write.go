package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/debussy-dev/debussy/internal/atomicfile"
)

// Setting is one top-level key and its value as YAML text.
type Setting struct {
	Key, Value string
}

// SetKeys sets top-level keys of the config file at path, creating it if
// missing, and keeps every other byte as it was: the user's keys, order,
// comments and blank lines. A key already set on one line gets its value
// replaced on that line (its comments stay); the others are appended. The
// comment lines (without "#") go above the first key set, in place of
// those an earlier SetKeys wrote with the same first word (marker), so
// tuning twice leaves one comment. A value that spans lines is not
// rewritten: the error names its line.
func SetKeys(path string, settings []Setting, marker string, comment []string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read config: %w", err)
	}
	lines, err := keyLines(path, data)
	if err != nil {
		return err
	}
	text := strings.Split(string(data), "\n")
	if len(text) > 0 && text[len(text)-1] == "" {
		text = text[:len(text)-1] // the final newline
	}
	first := -1 // the first line set in place, 0-based
	var appended []string
	for _, s := range settings {
		n, ok := lines[s.Key]
		if n < 0 {
			return fmt.Errorf("%w: %s:%d: %s is not a one-line value; set it by hand", ErrInvalid, path, -n, s.Key)
		}
		if !ok {
			appended = append(appended, s.Key+": "+s.Value)
			continue
		}
		text[n-1] = replaceValue(text[n-1], s.Key, s.Value)
		if first < 0 || n-1 < first {
			first = n - 1
		}
	}
	// The comment an earlier run wrote goes; lines above first shift.
	prefix := "# " + marker
	var kept []string
	for i, l := range text {
		if strings.HasPrefix(l, prefix) {
			if i < first {
				first--
			}
			continue
		}
		kept = append(kept, l)
	}
	text = kept
	var note []string
	for _, c := range comment {
		note = append(note, strings.TrimRight("# "+c, " "))
	}
	if first >= 0 {
		text = append(text[:first], append(note, text[first:]...)...)
		note = nil
	}
	if len(appended) > 0 {
		if len(text) > 0 && strings.TrimSpace(text[len(text)-1]) != "" {
			text = append(text, "")
		}
		text = append(text, note...)
		text = append(text, appended...)
	}
	out := []byte(strings.Join(text, "\n") + "\n")
	// A symlinked config is written where it points, with the mode it had.
	mode := os.FileMode(0o644)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
		if fi, err := os.Stat(real); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := atomicfile.Write(path, out, mode); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// keyLines maps each top-level key of the file to its line (1-based),
// negated for a key whose value does not sit on that one line.
func keyLines(path string, data []byte) (map[string]int, error) {
	out := map[string]int{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	f, err := parser.ParseBytes(data, parser.ParseComments)
	if err != nil {
		return nil, syntaxError(path, data, err)
	}
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		var values []*ast.MappingValueNode
		switch n := doc.Body.(type) {
		case *ast.MappingNode:
			values = n.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{n}
		case *ast.CommentNode:
			continue
		default:
			return nil, &invalidError{msg: fmt.Sprintf("%s: the file must be a mapping of key: value, got %s", at(path, doc.Body), describe(doc.Body))}
		}
		for _, mv := range values {
			kt := mv.Key.GetToken()
			line := kt.Position.Line
			v := unwrap(mv.Value)
			switch v.Type() {
			case ast.IntegerType, ast.FloatType, ast.StringType, ast.BoolType, ast.NullType:
			default:
				out[kt.Value] = -line
				continue
			}
			if vt := v.GetToken(); vt != nil && vt.Position.Line != line {
				out[kt.Value] = -line
				continue
			}
			out[kt.Value] = line
		}
	}
	return out, nil
}

// replaceValue is line ("key: old  # note") with the value new.
func replaceValue(line, key, value string) string {
	i := strings.Index(line, ":")
	rest := line[i+1:]
	comment := ""
	if j := strings.Index(rest, " #"); j >= 0 {
		comment = "  " + strings.TrimSpace(rest[j:])
	}
	return line[:i+1] + " " + value + comment
}
