package gitcommit

import (
	"bytes"
)

// git's config file syntax, parsed the way git's config.c does.

// parseConfig is git's config.c parser (git_parse_source, get_base_var,
// get_extended_base_var, get_value, parse_value). It calls fn with the full
// variable name and its value; bare is a variable without "=".
func parseConfig(b []byte, fn func(key, value string, bare bool)) error {
	p := &configParser{b: bytes.TrimPrefix(b, utf8BOM), line: 1}
	var section string // "core" or "remote.origin"; "" before the first header
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return nil
			}
			comment = false
			continue
		}
		if comment || isConfigSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			s, ok := p.baseVar()
			if !ok || s == "" {
				return p.err()
			}
			section = s
			continue
		}
		if !isASCIIAlpha(c) {
			return p.err()
		}
		name := []byte{lower(c)}
		for {
			c = p.next()
			if p.eof || !isKeyChar(c) {
				break
			}
			name = append(name, lower(c))
		}
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		key := string(name) // before any header: git reads it, and no lookup finds it
		if section != "" {
			key = section + "." + key
		}
		if c == '\n' {
			fn(key, "", true)
			continue
		}
		if c != '=' {
			return p.err()
		}
		v, ok := p.value()
		if !ok {
			return p.err()
		}
		fn(key, v, false)
	}
}

type configParser struct {
	b    []byte
	pos  int
	line int
	eof  bool
}

// next returns the next byte with "\r\n" read as "\n"; at the end it
// returns '\n' and sets eof.
func (p *configParser) next() byte {
	if p.pos >= len(p.b) {
		if !p.eof {
			p.eof = true
		}
		return '\n'
	}
	c := p.b[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.b) && p.b[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// err reports the line being read (git counts the line a newline ends).
func (p *configParser) err() error {
	line := p.line
	if p.pos > 0 && p.pos <= len(p.b) && p.b[p.pos-1] == '\n' {
		line--
	}
	return &configParseError{line: max(line, 1)}
}

func (p *configParser) baseVar() (string, bool) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return "", false
		}
		if c == ']' {
			return string(name), true
		}
		if isConfigSpace(c) {
			return p.extendedBaseVar(string(name), c)
		}
		if !isKeyChar(c) && c != '.' {
			return "", false
		}
		name = append(name, lower(c))
	}
}

func (p *configParser) extendedBaseVar(name string, c byte) (string, bool) {
	for {
		if c == '\n' {
			return "", false
		}
		c = p.next()
		if !isConfigSpace(c) {
			break
		}
	}
	if c != '"' {
		return "", false
	}
	sub := []byte{}
	for {
		c = p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return "", false
			}
		}
		sub = append(sub, c)
	}
	if p.next() != ']' {
		return "", false
	}
	return name + "." + string(sub), true
}

func (p *configParser) value() (string, bool) {
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				if p.eof {
					return "", false
				}
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isASCIIAlpha(c byte) bool  { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isKeyChar(c byte) bool     { return isASCIIAlpha(c) || (c >= '0' && c <= '9') || c == '-' }
func lower(c byte) byte         { return wmToLower(c) }
