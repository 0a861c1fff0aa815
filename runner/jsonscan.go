package runner

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A minimal JSON scanner for stream-json lines. encoding/json decodes every
// string of a line into Go values; lines here carry multi-megabyte strings
// (Write inputs, Edit originals) that nobody needs, so the scanner only finds
// where values end (bytes.IndexByte over string bodies) and decodes the few
// fields Parse keeps. It validates structure, numbers, literals and the escapes
// of decoded strings — enough to reject truncated or non-JSON lines — but does
// not check raw control characters or UTF-8 inside strings it skips.

// ErrInvalidJSON is wrapped by Parse errors for lines that are not one
// complete JSON object.
var ErrInvalidJSON = errors.New("invalid JSON")

// maxDepth bounds nesting so hostile input cannot grow the skip stack forever.
const maxDepth = 10000

func syntaxErr(off int, msg string) error {
	return fmt.Errorf("%w at byte %d: %s", ErrInvalidJSON, off, msg)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipSpace(d []byte, i int) int {
	if i < len(d) && d[i] > ' ' {
		return i // minified JSON: no space at all
	}
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just past the closing quote of the string
// whose opening quote is d[i].
func stringEnd(d []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return 0, syntaxErr(len(d), "unterminated string")
		}
		q := j + k
		// The quote is escaped iff an odd run of backslashes precedes it.
		n := 0
		for p := q - 1; p > i && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func numberEnd(d []byte, i int) (int, error) {
	j := i
	if j < len(d) && d[j] == '-' {
		j++
	}
	switch {
	case j >= len(d):
		return 0, syntaxErr(j, "unexpected end in number")
	case d[j] == '0':
		j++
	case isDigit(d[j]):
		for j < len(d) && isDigit(d[j]) {
			j++
		}
	default:
		return 0, syntaxErr(j, "invalid number")
	}
	if j < len(d) && d[j] == '.' {
		j++
		if j >= len(d) || !isDigit(d[j]) {
			return 0, syntaxErr(j, "invalid number fraction")
		}
		for j < len(d) && isDigit(d[j]) {
			j++
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if j >= len(d) || !isDigit(d[j]) {
			return 0, syntaxErr(j, "invalid number exponent")
		}
		for j < len(d) && isDigit(d[j]) {
			j++
		}
	}
	return j, nil
}

func literalEnd(d []byte, i int) (int, error) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if lit[0] == d[i] {
			if len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit {
				return i + len(lit), nil
			}
			break
		}
	}
	return 0, syntaxErr(i, "invalid literal")
}

// scalarEnd returns the end of the string, number or literal at d[i].
func scalarEnd(d []byte, i int) (int, error) {
	switch c := d[i]; {
	case c == '"':
		return stringEnd(d, i)
	case c == 't' || c == 'f' || c == 'n':
		return literalEnd(d, i)
	case c == '-' || isDigit(c):
		return numberEnd(d, i)
	}
	return 0, syntaxErr(i, fmt.Sprintf("unexpected character %q", d[i]))
}

// memberKeyEnd expects `"key" :` at d[i] and returns the index after the colon.
func memberKeyEnd(d []byte, i int) (int, error) {
	if i >= len(d) {
		return 0, syntaxErr(i, "unexpected end, want object key")
	}
	if d[i] != '"' {
		return 0, syntaxErr(i, "want object key")
	}
	j, err := stringEnd(d, i)
	if err != nil {
		return 0, err
	}
	j = skipSpace(d, j)
	if j >= len(d) || d[j] != ':' {
		return 0, syntaxErr(j, "want ':' after object key")
	}
	return j + 1, nil
}

// skipValue validates the value starting at or after d[i] (leading space
// allowed) and returns the index just past it. It is iterative so deep
// nesting cannot overflow the goroutine stack.
func skipValue(d []byte, i int) (int, error) {
	var stackBuf [32]byte
	stack := stackBuf[:0]
	var err error
value:
	for {
		i = skipSpace(d, i)
		if i >= len(d) {
			return 0, syntaxErr(i, "unexpected end, want value")
		}
		switch d[i] {
		case '{':
			i = skipSpace(d, i+1)
			if i < len(d) && d[i] == '}' {
				i++
				break
			}
			if len(stack) >= maxDepth {
				return 0, syntaxErr(i, "nesting too deep")
			}
			stack = append(stack, '{')
			if i, err = memberKeyEnd(d, i); err != nil {
				return 0, err
			}
			continue value
		case '[':
			i = skipSpace(d, i+1)
			if i < len(d) && d[i] == ']' {
				i++
				break
			}
			if len(stack) >= maxDepth {
				return 0, syntaxErr(i, "nesting too deep")
			}
			stack = append(stack, '[')
			continue value
		default:
			if i, err = scalarEnd(d, i); err != nil {
				return 0, err
			}
		}
		// After a complete value: close containers or move to the next member.
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipSpace(d, i)
			if i >= len(d) {
				return 0, syntaxErr(i, "unexpected end, want ',' or closing bracket")
			}
			top := stack[len(stack)-1]
			switch c := d[i]; {
			case c == ',':
				i = skipSpace(d, i+1)
				if top == '{' {
					if i, err = memberKeyEnd(d, i); err != nil {
						return 0, err
					}
				}
				continue value
			case top == '{' && c == '}', top == '[' && c == ']':
				i++
				stack = stack[:len(stack)-1]
			default:
				return 0, syntaxErr(i, "want ',' or closing bracket")
			}
		}
	}
}

// eachMember walks the object at or after d[i]. fn receives each raw key
// (escapes not decoded) and the index of its value, and must return the
// index just past that value. A non-object value is skipped and fn is not
// called.
func eachMember(d []byte, i int, fn func(key []byte, i int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) {
		return 0, syntaxErr(i, "unexpected end, want value")
	}
	if d[i] != '{' {
		return skipValue(d, i)
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return 0, syntaxErr(i, "want object key")
		}
		ke, err := stringEnd(d, i)
		if err != nil {
			return 0, err
		}
		key := d[i+1 : ke-1]
		j := skipSpace(d, ke)
		if j >= len(d) || d[j] != ':' {
			return 0, syntaxErr(j, "want ':' after object key")
		}
		j = skipSpace(d, j+1)
		if j >= len(d) {
			return 0, syntaxErr(j, "unexpected end, want value")
		}
		if i, err = fn(key, j); err != nil {
			return 0, err
		}
		i = skipSpace(d, i)
		if i >= len(d) {
			return 0, syntaxErr(i, "unexpected end, want ',' or '}'")
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "want ',' or '}'")
		}
	}
}

// eachElement walks the array at or after d[i] like eachMember walks objects.
func eachElement(d []byte, i int, fn func(i int) (int, error)) (int, error) {
	i = skipSpace(d, i)
	if i >= len(d) {
		return 0, syntaxErr(i, "unexpected end, want value")
	}
	if d[i] != '[' {
		return skipValue(d, i)
	}
	i = skipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	var err error
	for {
		if i >= len(d) {
			return 0, syntaxErr(i, "unexpected end, want value")
		}
		if i, err = fn(i); err != nil {
			return 0, err
		}
		i = skipSpace(d, i)
		if i >= len(d) {
			return 0, syntaxErr(i, "unexpected end, want ',' or ']'")
		}
		switch d[i] {
		case ',':
			i = skipSpace(d, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxErr(i, "want ',' or ']'")
		}
	}
}

// rawString returns the undecoded body of the string at d[i]; ok is false
// (and the value skipped) when the value is not a string.
func rawString(d []byte, i int) (body []byte, end int, ok bool, err error) {
	if d[i] != '"' {
		end, err = skipValue(d, i)
		return nil, end, false, err
	}
	end, err = stringEnd(d, i)
	if err != nil {
		return nil, 0, false, err
	}
	return d[i+1 : end-1], end, true, nil
}

// stringValue decodes the string at d[i]; null or any other type gives "".
func stringValue(d []byte, i int) (string, int, error) {
	body, end, ok, err := rawString(d, i)
	if err != nil || !ok {
		return "", end, err
	}
	s, err := unquote(body, i)
	return s, end, err
}

// boundedString decodes the string at d[i], keeping at most limit bytes;
// n is the decoded length of the whole string.
func boundedString(d []byte, i, limit int) (s string, n, end int, err error) {
	body, end, ok, err := rawString(d, i)
	if err != nil || !ok {
		return "", 0, end, err
	}
	var t textBuf
	t.init(limit, len(body))
	if err := t.writeJSON(body, i); err != nil {
		return "", 0, 0, err
	}
	return string(t.b), t.n, end, nil
}

func numberSpan(d []byte, i int) ([]byte, int, bool, error) {
	if d[i] != '-' && !isDigit(d[i]) {
		end, err := skipValue(d, i)
		return nil, end, false, err
	}
	end, err := numberEnd(d, i)
	if err != nil {
		return nil, 0, false, err
	}
	return d[i:end], end, true, nil
}

// intValue reads an integer (a float is truncated); other types give 0.
func intValue(d []byte, i int) (int64, int, error) {
	num, end, ok, err := numberSpan(d, i)
	if err != nil || !ok {
		return 0, end, err
	}
	var n int64
	neg := num[0] == '-'
	digits := num
	if neg {
		digits = num[1:]
	}
	for k, c := range digits {
		if !isDigit(c) || k >= 18 {
			f, _ := parseFloat(num)
			return int64(f), end, nil
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, end, nil
}

func floatValue(d []byte, i int) (float64, int, error) {
	num, end, ok, err := numberSpan(d, i)
	if err != nil || !ok {
		return 0, end, err
	}
	f, _ := parseFloat(num)
	return f, end, nil
}

// boolValue reads true/false; other types give false.
func boolValue(d []byte, i int) (bool, int, error) {
	end, err := skipValue(d, i)
	if err != nil {
		return false, 0, err
	}
	return d[i] == 't', end, nil
}

// unquote decodes a JSON string body; off is only used in error messages.
func unquote(body []byte, off int) (string, error) {
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil
	}
	var t textBuf
	t.init(len(body), len(body))
	if err := t.writeJSON(body, off); err != nil {
		return "", err
	}
	return string(t.b), nil
}

// textBuf accumulates decoded text up to limit bytes, cut on a UTF-8
// boundary, while n counts the full decoded length.
type textBuf struct {
	b     []byte
	limit int
	n     int
	full  bool
}

func (t *textBuf) init(limit, hint int) {
	t.limit = limit
	if hint > limit {
		hint = limit
	}
	t.b = make([]byte, 0, hint)
}

func (t *textBuf) write(p []byte) {
	t.n += len(p)
	if t.full {
		return
	}
	room := t.limit - len(t.b)
	if len(p) <= room {
		t.b = append(t.b, p...)
		return
	}
	cut := room
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	t.b = append(t.b, p[:cut]...)
	t.full = true
}

// writeJSON decodes a JSON string body into t.
func (t *textBuf) writeJSON(body []byte, off int) error {
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			t.write(body)
			return nil
		}
		if k > 0 {
			t.write(body[:k])
		}
		body = body[k:]
		if len(body) < 2 {
			return syntaxErr(off, "truncated escape")
		}
		var r rune
		n := 2
		switch body[1] {
		case '"', '\\', '/':
			r = rune(body[1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			var ok bool
			if r, ok = hex4(body[2:]); !ok {
				return syntaxErr(off, "invalid \\u escape")
			}
			n = 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if len(body) >= 12 && body[6] == '\\' && body[7] == 'u' {
					r2, ok = hex4(body[8:])
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r, n = dec, 12
				} else {
					r = utf8.RuneError // lone surrogate, as encoding/json does
				}
			}
		default:
			return syntaxErr(off, fmt.Sprintf("invalid escape \\%c", body[1]))
		}
		if r < utf8.RuneSelf {
			t.write([]byte{byte(r)})
		} else {
			var tmp [utf8.UTFMax]byte
			t.write(tmp[:utf8.EncodeRune(tmp[:], r)])
		}
		body = body[n:]
	}
	return nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func parseFloat(num []byte) (float64, error) { return strconv.ParseFloat(string(num), 64) }
