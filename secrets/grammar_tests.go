package secrets

import (
	"strings"
)

// Test output: the operands of a failed comparison — pytest's assert a ==
// b and its - / + lines, unittest's 'a' != 'b', Go's = "a", want "b",
// jest's Expected: / Received:, rspec's expected: / got:, JUnit's
// expected: <a> but was: <b>, cargo's left: / right: — are secrets when
// what is compared is (a test, a variable or a message near them names a
// secret: test_login_uses_configured_password, TestSignToken,
// client.api_key, "secret key mismatch") and they look generated. And an
// exception's message quoting a value after a secret's name: invalid token
// 'x', bad password "x".

// assertKeywords find the lines of a failed comparison (folded).
var assertKeywords = []string{"assert", "expected", "received", "want", "got", "left:", "right:", "but was", "!=", "tobe(", "toequal(", " eq("}

// assertLine: a line that states a comparison.
var assertLine = lazyRegexp(`(?i)\bassert|\b(?:expected|received|got|want|wanted|actual|left|right)\b[ \t]*[:=<"']|\bbut was\b|!=|\.(?:tobe|toequal|tostrictequal|eq|equal|equals)\(|\.to(?:_not)?[ \t]+(?:eq|eql|equal|be)\(|\bwant\b[ \t]+["'<]|, want\b`)

// quotedLiterals are the offsets of the '…', "…" and <…> literals in line.
func quotedLiterals(line string) []span {
	var out []span
	for i := 0; i < len(line); i++ {
		c := line[i]
		closing := c
		switch c {
		case '"', '\'':
		case '<':
			closing = '>'
		default:
			continue
		}
		j := strings.IndexByte(line[i+1:], closing)
		if j < 0 {
			break
		}
		out = append(out, span{i + 1, i + 1 + j})
		i += j + 1
	}
	return out
}

func scanAssertions(text, lower string) []span {
	var spans []span
	for _, ls := range lineStarts(text, lower, assertKeywords) {
		le := lineEnd(text, ls)
		line := text[ls:le]
		if !assertLine.MatchString(line) {
			continue
		}
		named := secretNear(text, ls, le)
		operand := func(v string) bool { return comparedSecret(v, named) }
		for _, q := range quotedLiterals(line) {
			if v := line[q.start:q.end]; operand(v) {
				spans = append(spans, span{ls + q.start, ls + q.end})
			}
		}
		// A bare operand after its label (left: x, Expected: x).
		if i := strings.LastIndex(line, ": "); i >= 0 {
			if v := strings.TrimSpace(line[i+2:]); v != "" && !strings.ContainsAny(v, " \t\"'<") && operand(v) {
				s := ls + i + 2 + strings.Index(line[i+2:], v)
				spans = append(spans, span{s, s + len(v)})
			}
		}
		// The diff lines after it (- a, + b).
		pos := le + 1
		for n := 0; n < 7 && pos < len(text); n++ {
			e := lineEnd(text, pos)
			l := text[pos:e]
			t := strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(l, " \t"), "E "), " \t")
			if len(t) > 2 && (t[0] == '-' || t[0] == '+') && strings.IndexByte(" \t'\"", t[1]) >= 0 {
				if v := strings.TrimSpace(t[1:]); !strings.ContainsAny(v, " \t") && operand(strings.Trim(v, `"',`)) {
					v = strings.Trim(v, `"',`)
					s := pos + strings.Index(l, v)
					spans = append(spans, span{s, s + len(v)})
				}
			}
			pos = e + 1
		}
	}
	return spans
}

// secretNear reports whether the lines around text[ls:le] (five above,
// three below) name a secret in a word of code or prose.
func secretNear(text string, ls, le int) bool {
	s := ls
	for n := 0; n < 5 && s > 0; n++ {
		s = strings.LastIndexByte(text[:s-1], '\n') + 1
	}
	e := le
	for n := 0; n < 3 && e < len(text); n++ {
		e = lineEnd(text, e+1)
	}
	for _, w := range labelWords(text[s:e]) {
		if englishRoot(strings.ToLower(w)) != 0 {
			return true
		}
	}
	return hasForeignRoot(foldLower(text[s:e]))
}

// comparedSecret: a compared value that looks generated, not a word, a
// number, a message, a mask or code; with no secret's name near, only a
// long random one (a token's length, not an id's).
func comparedSecret(v string, named bool) bool {
	if len(v) < 8 || strings.ContainsAny(v, " \t") || masked(v) || naturalText(v) || allDigits.MatchString(v) || codeValue(v) ||
		strings.ContainsAny(v, "()[]{}") {
		return false
	}
	if !named {
		return len(v) >= 28 && randomish(v, 20) && !lookAlike(v)
	}
	if lookAlike(v) && !hexKey.MatchString(v) {
		return false // a UUID, a digest, an id compared
	}
	return randomish(v, 8) || strongMix(v) || hexKey.MatchString(v) || len(v) >= 16 && !wordy(v)
}

// quotedAfterName: a quoted value right after a secret's name in a
// message: invalid token 'x', bad password "x", (password "x").
var quotedAfterName = lazyRegexp(`(?i)\b((?:api[ _-]?)?(?:token|key|secret|password|passwd|passphrase|credentials?|pwd))[ \t]+(?:provided[ \t]*:?[ \t]*)?(?:"([^"\n]{4,})"|'([^'\n]{4,})'|` + "`([^`\\n]{4,})`" + `)`)

// quotedAfterNameIn appends the quoted values after a secret's name in
// line (at offset ls).
func quotedAfterNameIn(line string, ls int, spans []span) []span {
	if !strings.ContainsAny(line, "\"'`") {
		return spans
	}
	for _, m := range quotedAfterName.FindAllStringSubmatchIndex(line, -1) {
		kind, _ := secretLabel(line[m[2]:m[3]])
		for g := 2; g <= 4; g++ {
			if s := m[2*g]; s >= 0 {
				v := line[s:m[2*g+1]]
				if !strings.ContainsAny(v, " \t") && plausibleSecret(v, kind) {
					spans = append(spans, span{ls + s, ls + m[2*g+1]})
				}
			}
		}
	}
	return spans
}
