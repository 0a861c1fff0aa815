package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Reading one YAML node: its value into a field, its text and position, and the errors that point at the line to fix.

// decodeValue sets fv from node. It checks the node's YAML type first so
// that `context_threshold: 1.5` or `auto_commit: yes` are errors rather than
// silently truncated or coerced. A null value keeps the default.
func decodeValue(node ast.Node, fv reflect.Value) (problem string, tok *token.Token) {
	n := unwrap(node)
	if n.Type() == ast.NullType {
		return "", nil
	}
	switch {
	case fv.Type() == reflect.TypeFor[Duration]():
		s, ok := scalarText(n)
		if !ok {
			return fmt.Sprintf("got %s, want a duration", describe(n)), nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Sprintf("%q is not a duration", s), nil
		}
		fv.Set(reflect.ValueOf(Duration(d)))
		return "", nil
	case (fv.Kind() == reflect.Int || fv.Kind() == reflect.Int64) && n.Type() != ast.IntegerType:
		return fmt.Sprintf("%s is not an integer", describe(n)), nil
	case fv.Kind() == reflect.Float64:
		s, _ := scalarText(n)
		if n.Type() != ast.IntegerType && n.Type() != ast.FloatType {
			return fmt.Sprintf("%s is not a number", describe(n)), nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil {
			return fmt.Sprintf("%s is not a number", describe(n)), nil
		}
		fv.SetFloat(f)
		return "", nil
	case fv.Kind() == reflect.Bool && n.Type() != ast.BoolType:
		return fmt.Sprintf("%s is not true or false", describe(n)), nil
	case fv.Kind() == reflect.String:
		if _, ok := scalarText(n); !ok {
			return fmt.Sprintf("got %s, want a string", describe(n)), nil
		}
	case fv.Kind() == reflect.Map && n.Type() != ast.MappingType && n.Type() != ast.MappingValueType:
		return fmt.Sprintf("got %s, want a mapping", describe(n)), nil
	case fv.Kind() == reflect.Slice && n.Type() != ast.SequenceType:
		return fmt.Sprintf("got %s, want a list", describe(n)), nil
	}
	ptr := reflect.New(fv.Type())
	if err := decodeYAML(func() error { return yaml.NodeToValue(node, ptr.Interface(), yaml.Strict()) }); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			return ye.GetMessage(), ye.GetToken()
		}
		return err.Error(), nil
	}
	fv.Set(ptr.Elem())
	return "", nil
}

// unwrap looks through tags and anchors to the value node.
func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return n
		}
	}
}

func scalarText(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		return t.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return t.GetToken().Value, true
	}
	return "", false
}

// describe names a node for a message: the scalar as written, or its kind.
func describe(n ast.Node) string {
	switch n.Type() {
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.StringType, ast.LiteralType:
		s, _ := scalarText(n)
		return strconv.Quote(s)
	case ast.AliasType:
		return "an alias"
	}
	if s, ok := scalarText(n); ok {
		return s
	}
	return n.Type().String()
}

func keyName(k ast.MapKeyNode) string {
	if s, ok := unwrap(k).(*ast.StringNode); ok {
		return s.Value
	}
	return k.GetToken().Value
}

// nodeToken is where a node starts: a block mapping's own token is its
// first ':', so use its first key instead.
func nodeToken(n ast.Node) *token.Token {
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 && !m.IsFlowStyle {
		return m.Values[0].Key.GetToken()
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		return mv.Key.GetToken()
	}
	return n.GetToken()
}

func at(path string, n ast.Node) string {
	if tok := nodeToken(n); tok != nil {
		return fmt.Sprintf("%s:%d:%d", path, tok.Position.Line, tok.Position.Column)
	}
	return path
}

func fieldErrorAt(path string, tok *token.Token, fe *FieldError) *FieldError {
	fe.File = path
	if tok != nil {
		fe.Line, fe.Column = tok.Position.Line, tok.Position.Column
	}
	return fe
}

func syntaxError(path string, data []byte, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		lines := strings.Split(string(data), "\n")
		line, col := culprit(lines, p.Line, p.Column, ye.GetMessage())
		msg := fmt.Sprintf("%s:%d:%d: %s", path, line, col, ye.GetMessage())
		if line >= 1 && line <= len(lines) {
			text := strings.TrimRight(lines[line-1], "\r")
			msg += fmt.Sprintf("\n%5d | %s\n      | %s^", line, text, strings.Repeat(" ", max(col-1, 0)))
		}
		return &invalidError{msg: msg, cause: err}
	}
	return &invalidError{msg: fmt.Sprintf("%s: %v", path, err), cause: err}
}

// culprit is the line (1-based) and column a person has to fix, where the
// parser reports where it noticed: a key indented under a plain value
// ("model: x" then "  bad: 1") is reported at the value, an unclosed
// [ or { at whatever follows it.
func culprit(lines []string, line, col int, msg string) (int, int) {
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	switch {
	case strings.Contains(msg, "mapping value is not allowed") && line >= 1 && line <= len(lines):
		base := indent(lines[line-1])
		for i := line; i < len(lines) && i < line+20; i++ {
			t := strings.TrimSpace(lines[i])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if indent(lines[i]) <= base {
				break
			}
			if strings.Contains(t, ": ") || strings.HasSuffix(t, ":") {
				return i + 1, indent(lines[i]) + 1
			}
		}
	case strings.Contains(msg, "must be specified"):
		for i := min(line-1, len(lines)) - 1; i >= 0 && i >= line-20; i-- {
			if strings.ContainsAny(lines[i], "[{") {
				return i + 1, strings.IndexAny(lines[i], "[{") + 1
			}
		}
	}
	return line, col
}

// decodeYAML runs a go-yaml decode with its panics turned into errors:
// v1.19.2 (the newest release) dereferences nil on a tag over a scalar
// decoded into a slice, e.g. DEBUSSY_EXTRA_ARGS='!x 0' (goccy/go-yaml#735,
// fixed upstream by #862 but not released). Found by FuzzLoad.
func decodeYAML(decode func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML decoder failed: %v", r)
		}
	}()
	return decode()
}
