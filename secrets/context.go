package secrets

import (
	"strings"
)

// This file judges a named value by where it stands: code (a variable, a
// type, a call), prose (a commit subject, an error message), a file
// position (auth.go:12:5), a test name — none of which is a secret even
// under a secret's name.

// codeFollow: what follows a bare value in code: a separator of
// arguments, fields or statements, an assignment, a call, a type's end.
const codeFollow = ",;)]}=({.?!<>|&:"

var (
	// identRE: a variable, field access or path (api_key, cfg.Password,
	// env::var, self->token), a type (Option<String>, &[u8], []byte,
	// *string, Vec<u8>, SecretStr), a macro (vec!).
	identRE = lazyRegexp(`^(?:&(?:mut )?|\*|\[\])*[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*(?:<.*>|\[.*\]|\(.*\)?|![[({].*)?[?]?$|^&?\[.*\]$`)
	// typeRE: type names a field may be annotated with.
	typeRE = lazyRegexp(`^(?:Secret|Sensitive|Masked|Redacted|Optional|Option)?(?:Str|String|Bytes|Value|Secret)$|^(?:str|string|bytes|bytearray|int|int\d+|uint\d*|float\d*|bool|boolean|number|any|unknown|object|dict|list|Any|Buffer|Uint8Array|byte|char|usize|isize|[ui](?:8|16|32|64|128)|SecretStr|Text|text)$`)
	// codeWord: keywords that start an expression, not a value.
	codeWord = lazyRegexp(`^(?:await|new|async|yield|typeof|function|lambda|require|import|from|return|if|of|in|is|not|and|or|self|this|super|mut|ref|move|let|const|var|static|dyn|impl|fn|func|def|struct|type|interface|class|enum|match|case|when|then|else|do|with|as|use)$`)
	// statusWord: a state reported under a secret's name (password: YES,
	// id-token: write, token: expired), not a value.
	statusWord = lazyRegexp(`(?i)^(?:yes|no|on|off|ok|set|unset|write|read|none|required|missing|invalid|expired|hidden|masked|present|absent|valid|wrong|incorrect|failed|denied|ignored|provided|supplied|configured|enabled|disabled|rotated|revoked|sensitive|redacted|omitted|n/a|na|unknown|default|inherit|auto|empty)[).,;:]*$`)
	// filePos: a position in a file (auth.py:112, 27:24, :9).
	filePos = lazyRegexp(`^(?:[\w./-]+\.[A-Za-z]{1,5}:\d+(?::\d+)*|\d+(?::\d+)+|:\d+(?::\d+)*)[:)]?$`)
	// fileExt: a name that is a file's (token.go, secret.rs), so the colon
	// after it opens a position.
	fileExt = lazyRegexp(`(?i)\.(?:go|py|rs|ts|tsx|js|jsx|mjs|cjs|rb|java|kt|kts|scala|c|cc|cpp|h|hpp|cs|php|swift|m|ex|exs|erl|hs|ml|lua|pl|sh|bash|zsh|ps1|sql|yaml|yml|json|toml|ini|cfg|conf|tf|hcl|md|txt|html|vue|svelte|dart|zig|nim|jl|r)$`)
	// testName: the name of a test function or case.
	testName = lazyRegexp(`^(?:Test|Example|Fuzz|Benchmark|test_|tests?::|should|it_)`)
	// selfNamed: a value made of words that name a secret (fixture-refresh-
	// token, test_password, dev-secret): it names itself, a fixture's.
	selfNamed = lazyRegexp(`(?i)^[a-z]+(?:[_-][a-z]+)*[_-](?:token|password|passwd|secret|key|pass|pwd|credentials?)(?:[_-][a-z]+)*$|^(?:token|password|passwd|secret|key|pass|pwd)[_-][a-z]+(?:[_-][a-z]+)*$`)
)

// codeOrProse reports whether the value at whole[s:e], under name (which
// ends at whole[ne:]), stands in code, prose or a position, not as a
// secret's value.
func codeOrProse(whole string, name string, ns, ne, s, e int) bool {
	v := whole[s:e]
	quoted := s > 0 && strings.IndexByte("\"'`", whole[s-1]) >= 0
	ls := strings.LastIndexByte(whole[:ns], '\n') + 1
	lineEnd := strings.IndexByte(whole[e:], '\n')
	if lineEnd < 0 {
		lineEnd = len(whole)
	} else {
		lineEnd += e
	}
	rest := strings.TrimLeft(whole[e:lineEnd], " \t")
	sep := whole[ne:s]
	// token::tests::x, auth.py:112, auth.ts:44:24: a path, not a name.
	if strings.HasPrefix(whole[ne:], "::") || ns >= 2 && (whole[ns-2:ns] == "::" || whole[ns-2:ns] == "${") || publicBefore(whole, ns) || fileExt.MatchString(name) || filePos.MatchString(v) {
		return true
	}
	// --- PASS: TestX, ok PASSED: the status word "pass" is a name only
	// before '=' (PASS=…) or as a lower-case key (pass: …).
	if strings.EqualFold(name, "pass") && (strings.Contains(sep, ":") && name != "pass" || testName.MatchString(v)) {
		return true
	}
	if testName.MatchString(v) && !quoted {
		return true
	}
	if quoted {
		return selfNamed.MatchString(v)
	}
	if statusWord.MatchString(v) || codeWord.MatchString(v) || typeRE.MatchString(v) || selfNamed.MatchString(v) ||
		strings.HasPrefix(v, "!") || strings.HasPrefix(v, "(") || strings.HasPrefix(v, "&") || strings.HasPrefix(v, "${") {
		return true
	}
	if identRE.MatchString(v) && !hasDigitOutsideType(v) {
		// A variable or type: in code it is followed by a separator or an
		// operator; at the end of a line it is code when its line is.
		if rest != "" && strings.IndexByte(codeFollow, rest[0]) >= 0 || strings.ContainsAny(v, "<>[]().:&*!") || v == strings.ToLower(v) && strings.Contains(v, "_") || camelCase(v) {
			return true
		}
	}
	// Prose: a word followed by more words (auth: rotate the token,
	// project auth: Compilation failure). A password's name at a line's
	// start still takes a passphrase.
	if w := strings.TrimRight(v, ":.,;"); (wordRun(v) || identRE.MatchString(w) && wordy(w) && !hasDigit.MatchString(w)) && rest != "" && (isLetter(rest[0]) || wordRun(v) && rest[0] >= '0' && rest[0] <= '9') {
		lead := strings.TrimLeft(whole[ls:ns], " \t-*>#\"'")
		if lead != "" || !passwordName.MatchString(name) {
			return true
		}
	}
	return false
}

// passwordName: a password's name (not a token's, a key's or auth).
var passwordName = lazyRegexp(`(?i)passw|pwd|passphrase|^pass$|pass[_.-]|[_.-]pass$|` + foreignRoots)

var typeWidth = lazyRegexp(`(?:^|[^A-Za-z0-9])(?:[uif](?:8|16|32|64|128)|u?int(?:8|16|32|64)|float(?:32|64))(?:$|[^A-Za-z0-9])|(?i)u?int(?:8|16|32|64)array|float(?:32|64)array|sha(?:1|256|512)`)

func hasDigitOutsideType(v string) bool {
	// Vec<u8>, int64, Uint8Array, sha256: digits of a type's width.
	t := typeWidth.ReplaceAllString(v, "")
	return strings.ContainsAny(t, "0123456789")
}

// camelCase: apiKey, accessToken, SecretStore — words joined in code.
func camelCase(v string) bool {
	if !wordy(v) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i-1] >= 'a' && v[i-1] <= 'z' && v[i] >= 'A' && v[i] <= 'Z' {
			return true
		}
	}
	return false
}

// wordRun: a word of prose: letters only, lower case or capitalized, with
// vowels.
func wordRun(v string) bool {
	v = strings.TrimRight(v, ".,;:")
	if len(v) < 2 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isLetter(v[i]) || i > 0 && v[i] >= 'A' && v[i] <= 'Z' {
			return false
		}
	}
	return wordLike(strings.ToLower(v))
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// namedAt is rule.at for NAME=value rules: group 1 is the name.
func namedAt(whole string, m []int, base, s, e int) bool {
	if len(m) < 4 || m[2] < 0 {
		return false
	}
	ns, ne := base+m[2], base+m[3]
	return codeOrProse(whole, whole[ns:ne], ns, ne, s, e)
}

// publicBefore: the name at ns follows "public" (public key: …).
func publicBefore(whole string, ns int) bool {
	b := strings.TrimRight(whole[max(0, ns-8):ns], " \t_-")
	return strings.HasSuffix(strings.ToLower(b), "public")
}
