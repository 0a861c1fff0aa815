package secrets

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Encoded forms: a secret inside base64 (one run, or wrapped at 64 or 76
// columns) or URL-encoding is found by decoding the span, redacting what
// it decodes to, and, if that changed, replacing the whole encoded span.
// Escaped JSON (\"password\": \"x\") is the escaped-field rule's, and
// \n-escaped blocks are read as they stand (a bare value ends at \n).

// encoded appends the spans of s whose decoded text holds a secret.
func (r *Redactor) encoded(s string, depth int, spans []span) []span {
	if strings.IndexByte(s, '%') >= 0 {
		for _, sp := range urlEncodedRuns(s) {
			if d, err := url.QueryUnescape(s[sp.start:sp.end]); err == nil && d != s[sp.start:sp.end] && r.redact(d, depth+1) != d {
				spans = append(spans, sp)
			}
		}
	}
	for _, sp := range base64Runs(s) {
		d, ok := decodeRun(s[sp.start:sp.end])
		if ok && readable(d) && r.redact(string(d), depth+1) != string(d) {
			spans = append(spans, sp)
		}
	}
	return spans
}

func urlByte(c byte) bool {
	return charClass(c) != 0 || strings.IndexByte("%._~+-*!'()", c) >= 0
}

// urlEncodedRuns are the runs of URL-safe bytes with two escapes or more
// (%3D, %22), the form that hides NAME=value and JSON.
func urlEncodedRuns(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		if !urlByte(s[i]) {
			i++
			continue
		}
		j, esc := i, 0
		for j < len(s) && urlByte(s[j]) {
			if s[j] == '%' && j+2 < len(s) && isHex(s[j+1]) && isHex(s[j+2]) {
				esc++
			}
			j++
		}
		if esc >= 2 {
			out = append(out, span{i, j})
		}
		i = j
	}
	return out
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func b64Byte(c byte) bool { return charClass(c) != 0 || c == '+' || c == '/' || c == '-' || c == '_' }

// base64Runs are runs of 24 base64 bytes or more, with their padding; a
// run that fills its line and goes on on the next (base64 wrapped at 64
// or 76 columns) is one run with the lines after it.
func base64Runs(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		if !b64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for {
			for j < len(s) && b64Byte(s[j]) {
				j++
			}
			for j < len(s) && s[j] == '=' {
				j++
			}
			// Wrapped: a full line (64 or 76 wide) followed by more.
			ls := strings.LastIndexByte(s[:j], '\n') + 1
			if w := j - ls; (w == 64 || w == 76) && j+1 < len(s) && s[j] == '\n' && b64Byte(s[j+1]) {
				j++
				continue
			}
			break
		}
		if j-i >= 24 {
			out = append(out, span{i, j})
		}
		i = j
	}
	return out
}

func decodeRun(v string) ([]byte, bool) {
	v = strings.ReplaceAll(v, "\n", "")
	if len(v)%4 == 1 {
		return nil, false
	}
	return decode64(v)
}

// readable: decoded bytes that are text (a config, a JSON document, a
// NAME=value line), not a key's or a digest's bytes.
func readable(d []byte) bool {
	if len(d) < 12 || !utf8.Valid(d) {
		return false
	}
	for _, c := range d {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return strings.ContainsAny(string(d), " \n=:\"")
}

// unescaped appends the spans of s that hold a secret once its escaped
// quotes and separators are read (JSON in a JavaScript string or an HTML
// page: {\u0022password\u0022:\u0022x\u0022}, \x22token\x22, &quot;key&quot;),
// each mapped back over the escapes it covers.
func (r *Redactor) unescaped(s string, depth int, spans []span) []span {
	if !strings.Contains(s, `\u00`) && !strings.Contains(s, `\x2`) && !strings.Contains(s, `\x3`) && !strings.Contains(s, "&quot;") &&
		!strings.Contains(s, "&#3") && !strings.Contains(s, "&#x2") {
		return spans
	}
	var dec []byte
	var start, end []int // each decoded byte's escape in s
	for i := 0; i < len(s); {
		c, n := unescapeAt(s, i)
		dec = append(dec, c)
		start = append(start, i)
		end = append(end, i+n)
		i += n
	}
	if len(dec) == len(s) {
		return spans
	}
	for _, sp := range r.spansIn(string(dec), depth+1) {
		if sp.end > sp.start {
			spans = append(spans, span{start[sp.start], end[sp.end-1]})
		}
	}
	return spans
}

// escapes are the forms of ", ', = and : that unescaped reads.
var escapes = []struct {
	form string
	c    byte
}{
	{`\u0022`, '"'}, {`\U0022`, '"'}, {`\x22`, '"'}, {"&quot;", '"'}, {"&#34;", '"'}, {"&#x22;", '"'},
	{`\u0027`, '\''}, {`\x27`, '\''}, {"&#39;", '\''}, {"&#x27;", '\''}, {"&apos;", '\''},
	{`\u003d`, '='}, {`\u003D`, '='}, {`\x3d`, '='}, {`\u003a`, ':'}, {`\u003A`, ':'}, {`\x3a`, ':'},
}

// unescapeAt is the byte s holds at i and how many bytes its form takes.
func unescapeAt(s string, i int) (byte, int) {
	if c := s[i]; c == '\\' || c == '&' {
		for _, e := range escapes {
			if strings.HasPrefix(s[i:], e.form) {
				return e.c, len(e.form)
			}
		}
	}
	return s[i], 1
}

// hexdumpLines are the lines of s that a hex dump prints (xxd, hexdump
// -C, od): an offset, then bytes in hex, then their text, whose words are
// a file's bytes, not names and values to judge.
func hexdumpLines(s string) []span {
	var out []span
	for pos := 0; pos < len(s); {
		end := lineEnd(s, pos)
		if hexdumpLine.MatchString(s[pos:end]) {
			out = append(out, span{pos, end})
		}
		pos = end + 1
	}
	return out
}

var hexdumpLine = lazyRegexp(`^[ \t]*(?:[0-9a-fA-F]{6,8}:?(?:[ \t]{1,2}[0-9a-fA-F]{2,4}){4,}|[0-7]{7}(?:[ \t]+\S{1,3}){4,})`)

// outsideHexdumps drops the spans that fall inside a hex dump's lines.
func outsideHexdumps(s string, spans []span) []span {
	if len(spans) == 0 || !strings.Contains(s, "00000") {
		return spans
	}
	dumps := hexdumpLines(s)
	if len(dumps) == 0 {
		return spans
	}
	out := spans[:0]
	for _, sp := range spans {
		inside := false
		for _, d := range dumps {
			if sp.start >= d.start && sp.end <= d.end+1 {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, sp)
		}
	}
	return out
}
