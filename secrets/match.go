package secrets

import "strings"

// One rule over one chunk: whether its keywords are there, its matches,
// and which of them are secrets (not allowed, not code, trimmed of what
// belongs to the text around them).

// wholeMatch: the whole match is the secret, whatever its groups.
func (ru *rule) wholeMatch() bool {
	return ru.whole || ru.wholeIfNamed && namedOnly(ru.re.get())
}

func (ru *rule) hit(lower string) bool {
	if len(ru.keywords) == 0 {
		return true
	}
	for _, k := range ru.keywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// find appends the spans of ru's secrets in text, which starts at offset
// in the whole.
func (r *Redactor) find(ru *rule, text string, offset int, spans []span) []span {
	if ru.scanL != nil {
		return r.scanned(ru, ru.scanL(text, foldLower(text)), text, offset, spans)
	}
	if ru.scan != nil {
		return r.scanned(ru, ru.scan(text), text, offset, spans)
	}
	for _, m := range ru.re.FindAllStringSubmatchIndex(text, -1) {
		spans = r.match(ru, m, text, offset, spans, text, 0)
	}
	return spans
}

// scanned appends the spans a scanner found that are not allowed.
func (r *Redactor) scanned(ru *rule, found []span, text string, offset int, spans []span) []span {
	for _, sp := range found {
		if secret := text[sp.start:sp.end]; !r.allowed(ru, secret, secret, lineAround(text, sp.start, sp.end)) {
			spans = append(spans, span{offset + sp.start, offset + sp.end})
		}
	}
	return spans
}

// match appends the span of the secret in match m of text, if it is one.
func (r *Redactor) match(ru *rule, m []int, text string, offset int, spans []span, whole string, base int) []span {
	if m != nil {
		start, end := m[0], m[1]
		if ngroups := len(m)/2 - 1; ngroups > 0 && !ru.wholeMatch() {
			g := ru.group
			if g == 0 {
				for i := max(1, ru.from); i <= ngroups; i++ {
					if m[2*i] >= 0 && m[2*i+1] > m[2*i] {
						g = i
						break
					}
				}
			}
			if g == 0 || g > ngroups || m[2*g] < 0 {
				return spans
			}
			start, end = m[2*g], m[2*g+1]
		}
		if raw := text[start:end]; strings.HasPrefix(raw, "{") && placeholder(raw) {
			return spans // {base64(user:pass\n)}: a placeholder whole
		}
		if v := text[start:end]; start == 0 || text[start-1] != '"' && text[start-1] != '\'' {
			// A bare value, not a quoted one whose escapes are its own.
			end = start + len(trimUnbalanced(cutAtPair(cutEscape(v))))
		}
		if start == end {
			return spans
		}
		secret, match := text[start:end], text[m[0]:m[1]]
		if ru.entropy > 0 && shannonEntropy(secret) <= ru.entropy {
			return spans
		}
		if ru.keep != nil && ru.keep(submatches(text, m), secret) {
			return spans
		}
		// Where it stands, after what it is: most values are kept by
		// keep, and at reads the text around them.
		if ru.at != nil && ru.at(whole, m, base, base+start, base+end) {
			return spans
		}
		if r.allowed(ru, secret, match, lineAround(text, m[0], m[1])) {
			return spans
		}
		spans = append(spans, span{offset + start, offset + end})
	}
	return spans
}

func (r *Redactor) allowed(ru *rule, secret, match, line string) bool {
	if r.allowLits[secret] || r.allowLits[match] {
		return true
	}
	for _, re := range r.allowREs {
		if re.MatchString(secret) {
			return true
		}
	}
	if r.global.allowed(secret, match, line) {
		return true
	}
	for _, a := range ru.allow {
		if a.allowed(secret, match, line) {
			return true
		}
	}
	return false
}

func submatches(text string, m []int) []string {
	out := make([]string, len(m)/2)
	for i := range out {
		if m[2*i] >= 0 {
			out[i] = text[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

// lineAround is the line or lines holding text[start:end].
func lineAround(text string, start, end int) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		return text[ls:]
	}
	return text[ls : end+le]
}

// cutEscape cuts a bare value at an escape (\n, \t, \"): in a JSON or
// shell string, the value ends where the escaped line or quote begins.
func cutEscape(v string) string {
	for i := 1; i+1 < len(v); i++ {
		if v[i] == '\\' && strings.IndexByte(`nrt"`, v[i+1]) >= 0 {
			return v[:i]
		}
	}
	return v
}

// cutAtPair cuts a bare value at a comma that starts another pair
// (n,o.haKey=!1: minified code's next assignment), not at one inside it.
func cutAtPair(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] != ',' {
			continue
		}
		j := i + 1
		for j < len(v) && isNameByte(v[j]) {
			j++
		}
		if j > i+1 && j < len(v) && (v[j] == '=' || v[j] == ':') {
			return v[:i]
		}
	}
	return v
}

// trimUnbalanced drops the closing brackets a bare value took from the
// code around it: OpenAI(api_key=x) keeps its parenthesis.
func trimUnbalanced(v string) string {
	for len(v) > 0 {
		c := v[len(v)-1]
		var open byte
		switch c {
		case ')':
			open = '('
		case ']':
			open = '['
		case '}':
			open = '{'
		default:
			return v
		}
		if strings.Count(v, string(open)) >= strings.Count(v, string(c)) {
			return v
		}
		v = v[:len(v)-1]
	}
	return v
}
