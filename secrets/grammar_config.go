package secrets

import (
	"strings"
)

// Config lines whose name and value are separated by blanks: the
// `keyword value` files of redis, LDAP, haproxy, keepalived, mosquitto,
// BIND and network gear (requirepass x, bindpw x, stats auth u:x,
// auth_pass x, enable secret 5 x, tacacs-server host h key x, snmp-server
// community x RO, md5 1 key "x";), a type's digit or word between name and
// value (password 7 x, secret sha512 x), aligned columns (Secret key    x)
// and tab-separated ones (api_token<TAB>x). The value is the token after
// the name; a line that reads as prose, a comment or code is not a config
// line.

// proseTokens: words that make a line a sentence, not a config line.
var proseTokens = map[string]bool{
	"the": true, "a": true, "an": true, "is": true, "are": true, "was": true, "were": true, "to": true, "your": true, "this": true,
	"that": true, "with": true, "of": true, "in": true, "and": true, "or": true, "for": true, "you": true, "be": true, "will": true,
	"must": true, "should": true, "can": true, "not": true, "it": true, "if": true, "when": true, "then": true, "we": true, "our": true,
	"my": true, "please": true, "use": true, "set": false, "from": true, "by": true, "has": true, "have": true, "no": true,
}

// typeTokens stand between a name and its value: an encryption type's
// digit (Cisco's 0, 5, 7, 8, 9), an algorithm, an encoding.
var typeTokens = map[string]bool{
	"0": true, "5": true, "6": true, "7": true, "8": true, "9": true, "sha256": true, "sha512": true, "md5": true, "ascii": true,
	"hex": true, "plain": true, "cleartext": true, "encrypted": true, "unencrypted": true, "0x": true,
}

// token is one blank-separated word of a line and its offsets.
type token struct {
	s          string
	start, end int
}

// lineTokens splits line at blanks; a quoted word is one token, its
// quotes included.
func lineTokens(line string) []token {
	var out []token
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			break
		}
		j := i
		if q := line[i]; q == '"' || q == '\'' {
			if k := strings.IndexByte(line[i+1:], q); k >= 0 {
				j = i + 1 + k + 1
			}
		}
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		out = append(out, token{line[i:j], i, j})
		i = j
	}
	return out
}

// commentLine: a line that is a comment in the config languages.
func commentLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	return strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, ";") || strings.HasPrefix(t, "!") ||
		strings.HasPrefix(t, "--") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "* ")
}

// configOnlyKeywords find the config lines without a root: SNMP's
// community, haproxy's stats auth.
var configOnlyKeywords = []string{"community", "auth"}

// configLine appends the spans of the values in one config line.
func configLine(line, lower string, offset int, spans []span) []span {
	if len(line) > 400 || commentLine(line) || strings.HasPrefix(strings.TrimSpace(line), "$ ") {
		return spans
	}
	// Aligned or tab-separated columns: a label of a few words, a gap, one
	// value (Secret key      x; api_token<TAB>x).
	if s, e, ok := columnPair(line); ok {
		return append(spans, span{offset + s, offset + e})
	}
	toks := lineTokens(line)
	if len(toks) < 2 || len(toks) > 14 {
		return spans
	}
	for _, t := range toks {
		if proseTokens[strings.ToLower(strings.Trim(t.s, ".,:;!?"))] {
			return spans
		}
	}
	snmp := strings.Contains(lower, "snmp")
	for i := 0; i+1 < len(toks); i++ {
		// A name is a bare word: NAME: x, NAME=x and --flag x are the
		// other grammars'.
		name := toks[i].s
		if !isIdentifier(name) || strings.HasPrefix(name, "-") || strings.HasSuffix(name, ".") {
			continue
		}
		kind, ok := configName(name, snmp)
		if !ok {
			continue
		}
		j := i + 1
		for j < len(toks)-1 && typeTokens[strings.ToLower(toks[j].s)] {
			j++
		}
		v := toks[j]
		if v.s == "=" || v.s == ":" || v.s == ":=" || strings.HasPrefix(v.s, "=") || strings.HasPrefix(v.s, "(") {
			continue // NAME = x is secret-field's; a call is code
		}
		// sentinel auth-pass <master> x: the value is last.
		if last := toks[len(toks)-1].s; j+2 == len(toks) && isIdentifier(v.s) && (naturalText(v.s) || lowerSlug(v.s)) && !typeRE.MatchString(v.s) &&
			!naturalText(strings.Trim(last, `";`)) && !strings.ContainsAny(last, "`[]{}()<>") {
			v = toks[j+1]
		}
		s, e := v.start, v.end
		val := strings.TrimRight(v.s, ";,")
		e = s + len(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			s, e, val = s+1, e-1, val[1:len(val)-1]
		}
		if c := strings.IndexByte(val, ':'); name == "auth" || strings.EqualFold(name, "auth") {
			// haproxy's stats auth user:password
			if c <= 0 {
				continue
			}
			s, val = s+c+1, val[c+1:]
		}
		if strings.ContainsAny(val, "`\"'") || strings.HasSuffix(val, ":") || strings.Contains(val, "=\"") || strings.HasPrefix(val, "[") {
			continue // a tag, a label, NAME=value pairs
		}
		if plausibleSecret(val, kind) || kind == rootPassword && len(val) >= 6 && allDigits.MatchString(val) {
			spans = append(spans, span{offset + s, offset + e})
			i = j
		}
	}
	return spans
}

// lowerSlug: lower-case words joined by - or _ (irreversible-cipher), a
// mode between a name and its value.
func lowerSlug(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z') && c != '-' && c != '_' {
			return false
		}
	}
	return strings.ContainsAny(s, "-_")
}

// configName reports whether a config line's token names a secret.
func configName(name string, snmp bool) (rootKind, bool) {
	l := strings.ToLower(name)
	switch {
	case l == "bearer":
		return 0, false // an HTTP scheme, then its parameters
	case l == "auth":
		return rootPassword, true // with user:password only (configLine)
	case strings.HasSuffix(l, "auth") && (strings.HasPrefix(l, "master") || strings.HasPrefix(l, "primary")):
		return rootPassword, true // redis' masterauth
	case snmp && (l == "community" || strings.HasSuffix(l, "community") || strings.HasPrefix(l, "community")):
		return rootSecret, true
	}
	if len(l) < 2 || !strings.ContainsAny(l, "abcdefghijklmnopqrstuvwxyz") {
		return 0, false
	}
	return secretLabel(name)
}

// columnPair finds a line of two columns: a label (one to four words,
// or an identifier) that names a secret, a gap of two blanks or more or a
// tab, and one value.
func columnPair(line string) (int, int, bool) {
	t := strings.TrimRight(line, " \t\r")
	lead := len(t) - len(strings.TrimLeft(t, " \t"))
	gap := -1
	for i := lead; i+1 < len(t); i++ {
		if t[i] == '\t' || t[i] == ' ' && t[i+1] == ' ' {
			gap = i
			break
		}
	}
	if gap <= lead {
		return 0, 0, false
	}
	label := t[lead:gap]
	vs := gap
	for vs < len(t) && (t[vs] == ' ' || t[vs] == '\t') {
		vs++
	}
	v := t[vs:]
	if v == "" || strings.ContainsAny(v, " \t") || strings.Count(label, " ") > 3 || strings.ContainsAny(label, ":=|│(){}[]<>\"'") {
		return 0, 0, false
	}
	kind, ok := secretLabel(label)
	if !ok || !plausibleSecret(v, kind) {
		return 0, 0, false
	}
	return vs, vs + len(v), true
}
