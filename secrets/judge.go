package secrets

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the grammars share: whether a name names a secret (secretLabel)
// and whether the value under it is one (plausibleSecret). A grammar only
// says where a name and its value stand; these decide, the same way for
// every grammar.

// headWords are the English words after a secret's root that make the
// phrase name something else: "key fingerprint", "password policy",
// "token lifetime", "secret rotation".
var headWords = map[string]bool{
	"id": true, "ids": true, "identifier": true, "fingerprint": true, "fingerprints": true, "digest": true, "hash": true, "hashes": true,
	"checksum": true, "salt": true, "policy": true, "policies": true, "lifetime": true, "ttl": true, "expiry": true, "expiration": true,
	"expires": true, "length": true, "size": true, "count": true, "limit": true, "limits": true, "hint": true, "hints": true, "rotation": true,
	"type": true, "types": true, "format": true, "version": true, "header": true, "field": true, "prefix": true, "file": true, "files": true,
	"path": true, "dir": true, "directory": true, "name": true, "names": true, "url": true, "uri": true, "endpoint": true, "location": true,
	"manager": true, "store": true, "storage": true, "ref": true, "reference": true, "alias": true, "region": true, "provider": true,
	"algorithm": true, "mode": true, "method": true, "scope": true, "scopes": true, "status": true, "strength": true, "requirement": true,
	"requirements": true, "rules": true, "usage": true, "history": true, "age": true, "reset": true, "refresh": true, "min": true, "max": true,
	"minimum": true, "maximum": true, "duration": true, "timeout": true, "server": true, "service": true, "server's": true, "schedule": true,
	"owner": true, "user": true, "username": true, "login": true, "label": true, "description": true, "help": true, "placeholder": true,
	"confirmation": true, "field's": true, "error": true, "errors": true, "check": true, "validation": true, "generation": true, "expired": true,
	"stored": true, "required": true, "missing": true, "invalid": true, "manager's": true, "vault": true, "ring": true, "chain": true,
	"pair": true, "usages": true, "spec": true, "size's": true, "bytes": true, "bits": true,
}

// headBoundary ends a label's head phrase: a preposition, an adverb, a
// participle ("API key provided"), a bracket or a quote.
var headBoundary = map[string]bool{
	"for": true, "to": true, "of": true, "on": true, "in": true, "with": true, "from": true, "at": true, "by": true, "is": true,
	"are": true, "was": true, "below": true, "above": true, "here": true, "now": true, "again": true, "please": true, "once": true,
	"first": true, "and": true, "or": true, "if": true, "as": true, "that": true, "which": true, "you": true, "we": true,
	// other languages' prepositions after an English root (Password dell'
	// amministratore, Token de acceso, Passwort für den Admin)
	"de": true, "des": true, "du": true, "del": true, "della": true, "dell": true, "di": true, "da": true, "do": true, "dos": true,
	"das": true, "der": true, "die": true, "den": true, "für": true, "pour": true, "para": true, "per": true, "por": true, "van": true,
	"voor": true, "för": true, "til": true, "dla": true, "для": true, "od": true, "d": true, "l": true, "all": true, "nell": true,
}

// declWords open a declaration in code, not a label.
var declWords = map[string]bool{"pub": true, "let": true, "const": true, "var": true, "val": true, "def": true, "fn": true, "func": true,
	"private": true, "protected": true, "public": true, "readonly": true, "export": true, "static": true, "final": true, "type": true,
	"struct": true, "class": true, "interface": true, "field": true, "property": true, "declare": true, "mut": true}

// neutralHead: words after a root that keep the phrase a secret's name
// ("client secret value", "unseal key 1", "secret string").
var neutralHead = map[string]bool{"value": true, "values": true, "string": true, "text": true, "code": true, "data": true, "material": true, "base": true}

// labelWords splits a label into words: letters and digits, an
// identifier's segments (api_key, apiKey) apart; a bracket or a quote is a
// word of its own, which ends a head phrase.
func labelWords(label string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range label {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' && unicode.IsLetter(prev):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush() // apiKey
			}
			if n := len(cur); unicode.IsLower(r) && n >= 2 && unicode.IsUpper(cur[n-1]) && unicode.IsUpper(cur[n-2]) {
				last := cur[n-1] // TLSPSKValue: the acronym, then Value
				cur = cur[:n-1]
				flush()
				cur = append(cur, last)
			}
			cur = append(cur, r)
		case strings.ContainsRune("([{<'\"`«「（【", r):
			flush()
			out = append(out, "(")
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// secretLabel reports whether label (a line's words before a separator,
// or a name) names a secret, and which kind: the last English root of its
// head phrase not followed by a word that makes the phrase name something
// else, or a root of another language.
func secretLabel(label string) (rootKind, bool) {
	if label == "" || len(label) > 160 {
		return 0, false
	}
	folded := foldLower(label)
	if h, ok := foreignRoot(folded, 0); ok {
		if !englishRootIn(folded[:h.start]) {
			return h.kind, true
		}
	}
	words := labelWords(label)
	for i, w := range words {
		words[i] = foldLower(w)
	}
	if len(words) > 0 && declWords[words[0]] {
		return 0, false // pub token: Option<String> — a declaration
	}
	kind, at := rootKind(0), -1
	for i, w := range words {
		if w == "(" || headBoundary[w] && at >= 0 {
			break
		}
		if k := englishRoot(w); k != 0 {
			kind, at = k, i
		}
	}
	if at < 0 || at > 0 && (words[at-1] == "public" || words[at-1] == "pub") {
		return 0, false
	}
	for _, w := range words[at+1:] {
		elided, _, _ := strings.Cut(w, "'") // dell'amministratore, d'accès
		switch {
		case w == "(" || headBoundary[w] || headBoundary[elided] || strings.HasSuffix(w, "ed") && len(w) > 4:
			return kind, true
		case (w == "id" || w == "ids") && words[at] == "secret":
			return rootSecret, true // Vault's, Consul's and Nomad's SecretID is the secret
		case headWords[w]:
			return 0, false
		case neutralHead[w] || allDigitsWord(w) || englishRoot(w) != 0:
		default:
			return 0, false // another noun heads the phrase: "token bucket"
		}
	}
	return kind, true
}

func allDigitsWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// englishRoot is the kind of root w is, 0 for none: a word of a name
// (password, passwd, pwd, secret, token, key, credentials, pass, pw,
// psk) or a word ending in one (rootpw, bindpw, requirepass, masterauth
// is not: auth alone names no value).
func englishRoot(w string) rootKind {
	switch w {
	case "key", "keys", "apikey", "privatekey", "secretkey", "accesskey", "signingkey", "masterkey", "authkey":
		return rootKey
	case "pass", "pw", "pwd", "psk", "passwd", "password", "passwords", "passphrase", "passcode", "pin", "puk":
		return rootPassword
	case "secret", "secrets", "token", "tokens", "credential", "credentials", "creds", "cred", "jwt", "bearer", "mnemonic", "authtok":
		return rootSecret
	}
	for _, suf := range []string{"password", "passwd", "passphrase", "pass", "pwd", "pw", "psk"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf) && !otherPass(w) {
			return rootPassword
		}
	}
	for _, suf := range []string{"secret", "token", "apikey", "authtok"} {
		if strings.HasSuffix(w, suf) && len(w) > len(suf) {
			return rootSecret
		}
	}
	return 0
}

// otherPass: words ending in pass that are not a password (bypass, compass).
func otherPass(w string) bool {
	for _, o := range []string{"bypass", "compass", "surpass", "trespass", "overpass", "underpass", "encompass", "impass"} {
		if strings.HasSuffix(w, o) {
			return true
		}
	}
	return false
}

func englishRootIn(folded string) bool {
	for _, w := range labelWords(folded) {
		if englishRoot(w) != 0 {
			return true
		}
	}
	return false
}

// naturalText reports whether v is words of a natural language — a
// translation, a status, a sentence — rather than a generated value or a
// password: letters (any script), spaces and sentence punctuation, each
// word written as words are (a capital first, or all capitals), with no
// digit.
func naturalText(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	words := 0
	for _, token := range strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(".,;:!?¿¡…'’«»\"()", r) }) {
		// A hyphenated word is written (Wi-Fi, API-Schlüssel); a
		// lower-case ASCII slug (django-insecure-xyz) is generated.
		if first, _ := utf8.DecodeRuneInString(token); strings.Contains(token, "-") && !unicode.IsUpper(first) && !hasNonASCII(token) {
			return false
		}
		for _, w := range strings.Split(token, "-") {
			if w == "" {
				continue
			}
			if !writtenWord(w) {
				return false
			}
			words++
		}
	}
	return words > 0
}

// writtenWord: letters only, lower case or capitalized or all capitals,
// with vowels where it is ASCII.
func writtenWord(w string) bool {
	{
		upperAfter, lower, nonASCII := false, 0, false
		for i, r := range w {
			switch {
			case unicode.IsDigit(r):
				return false
			case !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r):
				return false
			case r >= 0x80:
				nonASCII = true
			}
			if unicode.IsLower(r) {
				lower++
			} else if i > 0 && unicode.IsUpper(r) {
				upperAfter = true
			}
		}
		if upperAfter && lower > 0 {
			return false // mIxEd case: generated, not written
		}
		if !nonASCII && lower > 0 && !wordLike(strings.ToLower(w)) {
			return false
		}
	}
	return true
}

// maskRE: a value shown masked, omitted or templated in place of the
// secret: kubectl's DATA+OMITTED, Rails' [FILTERED], terraform's
// (sensitive value), bullets, %(name)s, {name}, <name>.
var maskRE = lazyRegexp(`(?i)^(?:data\+omitted|omitted|redacted|\[?(?:filtered|masked|hidden|redacted|secret|sensitive|removed|omitted)\]?|\*+[a-z0-9]{0,6}|\(sensitive(?: value)?\)|<sensitive>|%\(\w+\)[sdr]|%[sd]|\{\{.*\}\}|\{[\w.:-]*\}|<[\w .:-]*>|\?|:\w+|@\w+|\$\d+|enc[\[:(].*)$`)

// masked reports whether v stands where the secret would but is not it.
func masked(v string) bool {
	v = strings.Trim(v, `"'`)
	if v == "" {
		return true
	}
	if r, _ := utf8.DecodeRuneInString(v); r == '•' || r == '●' || r == '∗' {
		return true
	}
	return maskRE.MatchString(v) || placeholder(v) || fake(v) || template(v)
}

// template: a value holding a template's or a deployment tool's
// substitution (#{Name}#, {{ x }}, ${X}, %(x)s, <%= x %>).
func template(v string) bool {
	for _, t := range []string{"#{", "{{", "${", "%(", "<%", "$(("} {
		if strings.Contains(v, t) {
			return true
		}
	}
	return false
}

// plausibleSecret reports whether v, found under a secret's name of kind,
// is a secret: not a mask, a reference, a status, code, a path or words;
// under a key's name it must look generated, since a key names many
// things (a cache key, a sort key, a translation key).
func plausibleSecret(v string, kind rootKind) bool {
	v = strings.TrimRight(strings.Trim(v, `"'`), ".,;")
	if len(v) < 4 || masked(v) || version.MatchString(v) || statusWord.MatchString(v) || codeWord.MatchString(v) || typeRE.MatchString(v) ||
		keepFlagValue(nil, v) || naturalText(v) || filePos.MatchString(v) {
		return false
	}
	if strings.Contains(v, "/") && pathLike(v) && !randomish(strings.ReplaceAll(v, "/", ""), 16) {
		return false
	}
	if selfNamed.MatchString(v) || englishRoot(strings.ToLower(v)) != 0 || codeValue(v) || secretsName(v) {
		return false // a name (passphrase, test_password, api-keys), code (Option<String>)
	}
	if kind == rootKey {
		return (randomish(v, 12) || hexKey.MatchString(v) || len(v) >= 8 && strongMix(v)) && !idLike(v)
	}
	return true
}

// strongMix: a value mixed as passwords are: lower, upper and digits, or
// letters and digits with a symbol that is not a separator of names
// (user:42:profile, build-2026.11 are not).
func strongMix(v string) bool {
	var lower, upper, digit, sym bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		case strings.IndexByte("!#$%&*+=?@^~", c) >= 0:
			sym = true
		}
	}
	return lower && upper && digit || sym && digit && (lower || upper)
}

// symbolMix: letters, digits and a symbol that names never hold.
func symbolMix(v string) bool {
	return strings.ContainsAny(v, "!#$%&*+=?@^~") && strings.ContainsAny(v, "0123456789") &&
		strings.IndexFunc(v, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }) >= 0
}

// mixedClasses counts the classes among lower, upper, digit and symbol
// that v holds.
func mixedClasses(v string) int {
	var seen [5]bool
	for i := 0; i < len(v); i++ {
		c := charClass(v[i])
		if c == 0 && v[i] > ' ' && v[i] < 0x7f {
			c = 4
		}
		seen[c] = true
	}
	n := 0
	for _, b := range seen[1:] {
		if b {
			n++
		}
	}
	return n
}

// version: a release's version (v9.3.0, 1.2.3-rc.1).
var version = lazyRegexp(`^v?\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.-]+)?$`)

// codeValue: a value that is code — a type, a call, a field access.
func codeValue(v string) bool {
	return identRE.MatchString(v) && !hasDigitOutsideType(v) &&
		(strings.ContainsAny(v, "<>[]().:&*!") || camelCase(v) || v == strings.ToLower(v) && strings.Contains(v, "_") || typeRE.MatchString(v))
}

// secretsName: a lower-case name made of words, one of them a secret's
// (api-keys, db-credentials): what names a secret, not its value.
func secretsName(v string) bool {
	if strings.ToLower(v) != v || strings.ContainsAny(v, "0123456789") {
		return false
	}
	for _, w := range labelWords(v) {
		if englishRoot(w) != 0 {
			return true
		}
	}
	return false
}

// secretNamed is secretLabel's verdict alone.
func secretNamed(label string) bool {
	_, ok := secretLabel(label)
	return ok
}
