package runner

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Field types for Parse that decode leniently (a value of another JSON type
// reads as zero, like a missing field) and within bounds.

// integer is a JSON number read into an int64. A fraction is truncated; a
// number outside the int64 range is an error, never a wrapped value.
type integer int64

func (n *integer) UnmarshalJSON(raw []byte) error {
	if !isNumber(raw) {
		return nil
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		*n = integer(i)
		return nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	// -2^63 and 2^63 are exact float64s; every float64 in between truncates
	// into an int64.
	if err != nil || f < math.MinInt64 || f >= -math.MinInt64 {
		return fmt.Errorf("%w: %.40s does not fit an int64", ErrOutOfRange, raw)
	}
	*n = integer(f)
	return nil
}

// float is a JSON number read into a float64; one beyond its range (1e400)
// is an error rather than ±Inf. Underflow rounds to zero, which is correct.
type float float64

func (f *float) UnmarshalJSON(raw []byte) error {
	if !isNumber(raw) {
		return nil
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return fmt.Errorf("%w: %.40s does not fit a float64", ErrOutOfRange, raw)
	}
	*f = float(v)
	return nil
}

func isNumber(raw []byte) bool {
	return raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'
}

// text is a JSON string decoded up to MaxTextBytes, cut on a rune boundary,
// with its full decoded length. encoding/json can only materialise a whole
// string, and these carry whole files (Edit originals, Read results): a
// 100 MB string would be decoded to keep 16 KB of it. So the literal, which
// encoding/json has validated before UnmarshalJSON sees it, is unescaped
// here exactly as encoding/json does (FuzzText checks that).
type text struct {
	s    string
	n    int  // decoded length of the whole string
	kind byte // first byte of the value ('"' for a string), 0 if absent
}

func (t *text) isString() bool { return t.kind == '"' }

func (t *text) UnmarshalJSON(raw []byte) error {
	*t = text{kind: raw[0]}
	if t.kind != '"' {
		return nil
	}
	var b textBuf
	b.init(MaxTextBytes, len(raw))
	b.writeLiteral(raw)
	t.s, t.n = string(b.b), b.n
	return nil
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
	t.b = make([]byte, 0, min(hint, limit))
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

// writeText appends a decoded text; a text that was cut fills t, as the
// whole string would have.
func (t *textBuf) writeText(x text) {
	if !x.isString() {
		return
	}
	t.write([]byte(x.s))
	if x.n > len(x.s) {
		t.n += x.n - len(x.s)
		t.full = true
	}
}

var replacement = []byte(string(utf8.RuneError))

// writeLiteral decodes a JSON string literal, quotes included, that
// encoding/json has validated: escapes are well-formed and there are no raw
// control characters. Like encoding/json it turns each byte of invalid
// UTF-8, and each unpaired surrogate escape, into U+FFFD.
func (t *textBuf) writeLiteral(raw []byte) {
	body := raw[1 : len(raw)-1]
	for len(body) > 0 {
		k := bytes.IndexByte(body, '\\')
		if k < 0 {
			k = len(body)
		}
		t.writeUTF8(body[:k])
		body = body[k:]
		if len(body) == 0 {
			return
		}
		var r rune
		n := 2
		switch c := body[1]; c {
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
			r, n = hex4(body[2:]), 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(body) >= 12 && body[6] == '\\' && body[7] == 'u' {
					r2 = hex4(body[8:])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r, n = dec, 12
				} else {
					r = utf8.RuneError
				}
			}
		default: // '"', '\\', '/'
			r = rune(c)
		}
		var tmp [utf8.UTFMax]byte
		t.write(tmp[:utf8.EncodeRune(tmp[:], r)])
		body = body[n:]
	}
}

// writeUTF8 writes p with each byte of invalid UTF-8 replaced by U+FFFD.
func (t *textBuf) writeUTF8(p []byte) {
	for len(p) > 0 {
		if utf8.Valid(p) {
			t.write(p)
			return
		}
		k := 0
		for k < len(p) {
			r, size := utf8.DecodeRune(p[k:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			k += size
		}
		t.write(p[:k])
		if k < len(p) {
			t.write(replacement)
			k++
		}
		p = p[k:]
	}
}

// hex4 reads 4 hex digits, which encoding/json has checked are there.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
