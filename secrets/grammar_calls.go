package secrets

import (
	"strings"
)

// Calls that take a key: signing, MAC and cipher calls whatever their
// library — hmac.new(b"k", …), jwt.encode(p, "k"), jwt.sign(p, 'k'),
// crypto.createHmac('sha256', 'k'), createCipheriv('aes-256-cbc', 'k',
// iv), new SecretKeySpec("k".getBytes(), …), hash_hmac('sha256', $d,
// 'k'), hmac.New(sha256.New, []byte("k")), SignedString([]byte("k")),
// AES.new(b"k", …), Fernet(b"k"). Their string arguments are key material
// unless they name an algorithm, a mode or an encoding, index a map, or
// sit in an options object.

// callKeywords are the words of such a call's name (lower case).
var callKeywords = []string{"hmac", "cipher", "crypt", "jwt", "jws", "jose", "sign", "keyspec", "fernet", "aes", "blowfish", "chacha",
	"secretbox", "from_password", "mac"}

// algorithmName: what a call's string argument names that is not a key.
var algorithmName = lazyRegexp(`(?i)^(?:hmac[-_]?)?(?:sha|md|ripemd|blake|sm)[-_]?\d*$|^(?:hs|rs|es|ps|eddsa)\d{0,3}$|^aes[-_]?\d*(?:[-_][a-z0-9]+)*$|` +
	`^(?:hex|base64|base64url|utf-?8|latin1|ascii|binary|ucs2|utf16le|raw)$|^hmacsha\d+$|^hmacmd5$|^pbkdf2.*$|^(?:des|3des|des-ede3(?:-cbc)?|chacha20(?:-poly1305)?|blowfish|bf-cbc|rc4|rsa|ecdsa|ed25519|x25519|none)$|` +
	`^(?:aes|rsa|des)/[a-z]+/[a-z0-9]+$`)

func scanCalls(text, lower string) []span {
	var spans []span
	done := -1
	for _, kw := range callKeywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(kw)
			// The call's name runs on to its opening parenthesis.
			e := p + len(kw)
			for e < len(text) && (isNameByte(text[e]) || text[e] == ':') {
				e++
			}
			if e >= len(text) || text[e] != '(' || e < done {
				continue
			}
			end, sp := callArgs(text, e)
			spans = append(spans, sp...)
			done = end
		}
	}
	return spans
}

// callArgs appends the key material among the string arguments of the
// call whose '(' is at open, and returns where the call ends.
func callArgs(text string, open int) (int, []span) {
	var spans []span
	depth, braces := 0, 0
	limit := min(len(text), open+600)
	for i := open; i < limit; i++ {
		switch c := text[i]; c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i, spans
			}
		case '{':
			braces++
		case '}':
			braces--
		case '\n':
			if depth > 0 && i+1 < limit && text[i+1] == '\n' {
				return i, spans
			}
		case '"', '\'', '`':
			j := strings.IndexByte(text[i+1:limit], c)
			if j < 0 {
				return i, spans
			}
			s, e := i+1, i+1+j
			before := strings.TrimRight(text[open:i], " \t")
			if braces == 0 && !strings.HasSuffix(before, "[") && !strings.HasPrefix(text[e+1:], "]") && !namedOption(before) &&
				keyMaterial(text[s:e]) {
				spans = append(spans, span{s, e})
			}
			i = e
		}
	}
	return limit, spans
}

// namedOption: the argument is a named option (algorithm="HS256",
// encoding: 'hex'), not a positional key.
func namedOption(before string) bool {
	if !strings.HasSuffix(before, "=") && !strings.HasSuffix(before, ":") {
		return false
	}
	b := strings.TrimRight(before, "=: \t")
	n := len(b)
	for n > 0 && isNameByte(b[n-1]) {
		n--
	}
	_, secret := secretLabel(b[n:])
	return !secret
}

// keyMaterial: a call's string argument that is a key: no blank, not an
// algorithm's name, not a word or a template, generated-looking.
func keyMaterial(v string) bool {
	if len(v) < 8 || strings.ContainsAny(v, " \t\n") || algorithmName.MatchString(v) || masked(v) || naturalText(v) ||
		strings.ContainsAny(v, "$%{") || fileName.MatchString(v) || strings.Contains(v, "/") && pathLike(v) || lookAlike(v) && !hexKey.MatchString(v) {
		return false
	}
	return randomish(v, 8) || strongMix(v) || hexKey.MatchString(v) || len(v) >= 16 && !wordy(v)
}
