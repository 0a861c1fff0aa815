package secrets

import (
	"slices"
	"strings"
)

// Scanners find what a regular expression says badly: a value judged by
// its look in a position that holds values (random-token), every value of
// a cookie header, a column of a CSV export, a .pgpass line. Each is a
// single pass over its text.

func scanRules() []rule {
	return []rule{
		{id: "random-token", scan: scanRandom},
		{id: "cookie", scan: scanCookies, keywords: []string{"cookie", "-b "}},
		{id: "csv-credentials", scan: scanCSV, keywords: []string{"password", "secret", "token", "passwd", "api key", "apikey", "api_key"}, multiline: true},
		{id: "pgpass", scan: scanPgpass, keywords: []string{":"}},
		{id: "table-row", scan: scanTableRows, keywords: []string{"pass", "pwd", "secret", "token", "api_key", "apikey", "private_key", "credential"}},
	}
}

func tokenByte(c byte) bool {
	return charClass(c) != 0 || strings.IndexByte("+/_=.~-%", c) >= 0
}

// secretSegment: a URL path segment after which tokens go.
var secretSegment = lazyRegexp(`(?i)^(?:web)?hooks?$|^webhooks?|^(?:services|triggers|tokens?|keys?|secrets?|api[_-]?keys?|access[_-]?tokens?|auth|sig|signatures?|credentials?|bot)$`)

// otherValueName: a name whose value is not a secret, for the rules that
// judge a value by its look.
func otherValueName(name string) bool {
	n := strings.TrimLeft(name, "-")
	return notSecretValueName.MatchString(n) || notSecretName.MatchString(n) || camelNotSecret.MatchString(n) || otherName.MatchString(n)
}

// notSecretValueName: names whose values are generated but public: ids,
// digests, versions, nonces in traces (x-request-id, etag, integrity).
var notSecretValueName = lazyRegexp(`(?i)(?:^|[_.-]|[a-z](?-i:[A-Z]))(?:kid|id|ids|uuid|guid|hash|sha|sha1|sha256|sha512|md5|digest|checksum|etag|integrity|commit|ref|rev|revision|version|trace|traceparent|tracestate|span|request|correlation|fingerprint|thumbprint|nonce|name|file|path|url|uri|image|tag|branch|ray|key_?id|src|href|alt|class|style|q|query|search|state|challenge|code_challenge|salt|h1|sha384|blake2b|blake3)s?$`)

// publicValueName: names whose random-looking values are public: a
// WireGuard peer, a recipient, an address, a signature of Claude's
// thinking, a JWK's modulus and coordinates, a charge, a numbered id.
var publicValueName = lazyRegexp(`(?i)^(?:peer|recipient|recipients|address|addr|from|to|owner|contract|sender|signer|cid|charge|subscription|customer|invoice|payment_intent|balance_transaction|transaction|txn|tx|block|blockhash|signature|data|n|e|x|y|modulus|exponent|nodekey|machinekey|discokey)$|(?:^|[_.-])id(?:[_.-]?\d+)$`)

// scanRandom finds random-looking tokens of 20 or more characters in a
// position that holds a value: after NAME= or Name: (an assignment, a
// header, a query parameter), after a --flag, in a URL's user or path. A
// token in prose is left alone: only its position makes it a value.
func scanRandom(text string) []span {
	var spans []span
	for i := 0; i < len(text); {
		if !tokenByte(text[i]) || text[i] == '=' {
			i++
			continue
		}
		j := i
		for j < len(text) && tokenByte(text[j]) {
			if text[j] == '=' && j > i {
				// NAME=value splits; base64's padding (x==) does not.
				e := j
				for e < len(text) && text[e] == '=' {
					e++
				}
				if e < len(text) && tokenByte(text[e]) {
					break
				}
				j = e
				continue
			}
			j++
		}
		if j-i >= 20 {
			spans = judgeToken(text, i, j, spans)
		}
		i = j
	}
	return spans
}

func judgeToken(text string, i, j int, spans []span) []span {
	tok := strings.TrimRight(text[i:j], ".")
	j = i + len(tok)
	if discordToken(tok) {
		return append(spans, span{i, j})
	}
	if strings.HasPrefix(tok, "//") {
		// A URL after its scheme: the user (before @) is judged, and the
		// path's segments after one that says a secret follows
		// (/bot<token>/, /webhooks/<id>/<token>); an id in a path
		// (/document/d/<id>) is not a secret.
		segs := strings.Split(tok[2:], "/")
		pos := i + 2
		after := false
		for k, seg := range segs {
			user := k == 0 && j < len(text) && text[j] == '@'
			random := randomish(strings.TrimPrefix(seg, "bot"), 20) && !lookAlike(seg) || after && len(seg) >= 32 && hexRE.MatchString(seg)
			if (user || after || k > 0 && strings.HasPrefix(seg, "bot")) && random {
				spans = append(spans, span{pos, pos + len(seg)})
			}
			if k > 0 && secretSegment.MatchString(seg) {
				after = true
			}
			pos += len(seg) + 1
		}
		return spans
	}
	if !valuePosition(text, i) || lookAlike(tok) || strings.Contains(tok, "/") && pathLike(tok) {
		return spans
	}
	if randomish(tok, 20) && !idShape(tok) {
		spans = append(spans, span{i, j})
	}
	return spans
}

// idShape: a random value under a neutral name that is an id's, not a
// credential's: shorter than 28 (nanoid, cuid2, ksuid, Firebase's push
// ids), or lower case and digits only up to 32 (cuid, xid). A credential
// under a name that says nothing is longer, and its own rule (a prefix,
// a name) finds it otherwise.
func idShape(tok string) bool {
	if len(tok) < 28 {
		return true
	}
	return len(tok) <= 32 && strings.ToLower(tok) == tok
}

// pathLike: a/b/c with word-like segments (a file path, a module path).
func pathLike(tok string) bool {
	for _, seg := range strings.Split(tok, "/") {
		if randomish(seg, 16) {
			return false
		}
	}
	return true
}

// valuePosition reports whether the token at i follows "NAME=", "Name:",
// "--flag " or "-f ", with a name that may hold a secret.
func valuePosition(text string, i int) bool {
	k := i
	for n := 0; k > 0 && n < 3 && (text[k-1] == '"' || text[k-1] == '\'' || text[k-1] == ' ' || text[k-1] == '\t'); n++ {
		k--
	}
	if k == 0 {
		return false
	}
	switch c := text[k-1]; {
	case c == '=' || c == ':':
		k--
		for k > 0 && (text[k-1] == '"' || text[k-1] == '\'' || text[k-1] == ' ' || text[k-1] == '\t' || text[k-1] == ':') {
			k--
		}
		e := k
		for k > 0 && isNameByte(text[k-1]) {
			k--
		}
		name := text[k:e]
		return name != "" && !otherValueName(name) && !publicValueName.MatchString(name) && !allDigits.MatchString(name) &&
			!strings.HasPrefix(strings.ToLower(name), "http") && !publicBefore(text, k)
	case k < i && isNameByte(c):
		// --flag value: the word before is a flag.
		e := k
		for k > 0 && isNameByte(text[k-1]) {
			k--
		}
		name := text[k:e]
		return strings.HasPrefix(name, "-") && len(strings.TrimLeft(name, "-")) > 0 && (k == 0 || text[k-1] == ' ' || text[k-1] == '\t') &&
			!otherValueName(name)
	}
	return false
}

var (
	cookieRE = lazyRegexp(`(?i)(?:\b(?:set-)?cookie2?["']?[ \t]*[:=][ \t]*["']?|(?:^|\s)(?:-b|--cookie)[ \t]+["']?)([^"'\r\n]+)`)
	// Set-Cookie's attributes, not values.
	cookieAttr = lazyRegexp(`(?i)^(?:path|domain|expires|max-age|samesite|secure|httponly|priority|partitioned|version|comment)$`)
	sessionish = lazyRegexp(`(?i)sess|sid|auth|token|jwt|login|remember|csrf|xsrf|secret|key|user`)
)

// scanCookies redacts each cookie's value in Cookie and Set-Cookie
// headers (and curl -b): a session id is a credential whatever its name.
func scanCookies(text string) []span {
	var spans []span
	for _, m := range cookieRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2], m[3]
		pos := start
		for _, pair := range strings.Split(text[start:end], ";") {
			eq := strings.IndexByte(pair, '=')
			if eq > 0 {
				name := strings.TrimSpace(pair[:eq])
				v := strings.TrimSpace(pair[eq+1:])
				vs := pos + eq + 1 + strings.Index(pair[eq+1:], v)
				if v != "" && !cookieAttr.MatchString(name) && cookieSecret(name, v) {
					spans = append(spans, span{vs, vs + len(v)})
				}
			}
			pos += len(pair) + 1
		}
	}
	return spans
}

func cookieSecret(name, v string) bool {
	v = strings.Trim(v, `"`)
	if placeholder(v) || allDigits.MatchString(v) || strings.Contains(v, " ") || strings.HasPrefix(v, "$") {
		return false
	}
	if sessionish.MatchString(name) {
		return len(v) >= 6
	}
	return len(v) >= 16 && (randomish(v, 16) || hexRE.MatchString(v) || uuidRE.MatchString(v))
}

// csvSecretColumn: a CSV header naming a secret (an IAM credentials
// export's "Secret access key", a "password" column).
var csvSecretColumn = lazyRegexp(`(?i)^\s*"?(?:[\w.-]+ ){0,2}[\w.-]*(?:password|passwd|pwd|secret|token|api[ _-]?key|private[ _-]?key)[\w.-]*(?: [\w.-]+){0,2}"?\s*$`)

// scanCSV redacts the secret columns of CSV rows under a header that
// names them, up to the first line with another number of fields.
func scanCSV(text string) []span {
	var spans []span
	var cols []int
	width := 0
	pos := 0
	for pos < len(text) {
		end := lineEnd(text, pos)
		line := strings.TrimRight(text[pos:end], "\r")
		if strings.IndexByte(line, ',') < 0 {
			cols = nil
			pos = end + 1
			continue
		}
		fields := strings.Split(line, ",")
		if cols != nil && len(fields) == width {
			off := pos
			for k, f := range fields {
				if v := strings.Trim(strings.TrimSpace(f), `"`); slices.Contains(cols, k) && v != "" && !placeholder(v) {
					vs := off + strings.Index(f, v)
					spans = append(spans, span{vs, vs + len(v)})
				}
				off += len(f) + 1
			}
		} else {
			cols = nil
			if !csvHeader(fields) {
				pos = end + 1
				continue
			}
			for k, f := range fields {
				if csvSecretColumn.MatchString(f) && !notSecretName.MatchString(strings.TrimSpace(strings.Trim(strings.TrimSpace(f), `"`))) &&
					!strings.HasSuffix(strings.ToLower(strings.TrimSpace(strings.Trim(f, `" `))), " id") {
					cols = append(cols, k)
				}
			}
			width = len(fields)
		}
		pos = end + 1
	}
	return spans
}

// csvHeader: every field a column's name: a few words, no code.
func csvHeader(fields []string) bool {
	for _, f := range fields {
		f = strings.Trim(strings.TrimSpace(f), `"`)
		if len(f) > 40 || len(strings.Fields(f)) > 4 || strings.ContainsAny(f, "()[]{}=<>'\"%$") {
			return false
		}
	}
	return true
}

// scanTableRows redacts the value of a row "password    s3cr3t" in a
// table of names and values (vault kv get, column -t): a line of two
// words two or more spaces apart, the first a secret's name.
func scanTableRows(text string) []span {
	text = boxNormalized(text)
	var spans []span
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := strings.TrimRight(text[pos:end], " \t\r|")
		lead := len(line) - len(strings.TrimLeft(line, " \t|"))
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		// psql's rows (smtp_pass  | x, expanded display's password | x): a
		// name alone in the first cell.
		psql := len(cells) == 2 && strings.Count(text[pos:end], "|") == 1 && isIdentifier(strings.TrimSpace(cells[0]))
		if (strings.HasPrefix(strings.TrimSpace(line), "|") || psql) && len(cells) == 2 {
			// A markdown table: | password | s3cr3t |
			name, v := strings.Trim(strings.TrimSpace(cells[0]), "*`"), strings.Trim(strings.TrimSpace(cells[1]), "`")
			if v != "" && !strings.ContainsAny(v, " \t") && strong(name) && !keepField([]string{"", name}, v) {
				s := pos + strings.LastIndex(line, v)
				spans = append(spans, span{s, s + len(v)})
			}
			pos = end + 1
			continue
		}
		if gap := strings.Index(line[lead:], "  "); gap > 0 && len(line) < 512 {
			name := line[lead : lead+gap]
			rest := strings.TrimLeft(line[lead+gap:], " \t|")
			if rest != "" && !strings.ContainsAny(rest, " \t") && tableName.MatchString(name) &&
				strong(name) && !keepField([]string{"", name}, rest) {
				s := pos + len(line) - len(rest)
				spans = append(spans, span{s, s + len(rest)})
			}
		}
		pos = end + 1
	}
	return spans
}

// tableName: a table's key (password, api_key, DB_PASS), not a Go
// struct's field aligned with its type (Tokens   int64).
var tableName = lazyRegexp(`^(?:[a-z0-9_.-]+|[A-Z0-9_.-]+)$`)

// scanPgpass redacts the password of .pgpass lines:
// host:port:database:user:password, the port a number or *.
func scanPgpass(text string) []span {
	var spans []span
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := text[pos:end]
		if strings.Count(line, ":") >= 4 && len(line) < 512 {
			lead := len(line) - len(strings.TrimLeft(line, " \t"))
			f := strings.SplitN(strings.TrimSpace(line), ":", 5)
			host, port, db, user, pw := f[0], f[1], f[2], f[3], strings.TrimRight(f[4], "\r")
			if pgField(host) && (port == "*" || allDigits.MatchString(port) && len(port) <= 5) && pgField(db) && pgField(user) &&
				pw != "" && !strings.ContainsAny(pw, " \t") && strings.ContainsAny(host, ".*abcdefghijklmnopqrstuvwxyz") && !placeholder(pw) && len(pw) >= 4 {
				s := pos + lead + len(host) + len(port) + len(db) + len(user) + 4
				spans = append(spans, span{s, s + len(pw)})
			}
		}
		pos = end + 1
	}
	return spans
}

func pgField(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\"'=/") && len(s) < 128
}

// boxNormalized is text with the box-drawing characters of terminal
// tables (│ ┃ ║, ─ ━ ═, corners and crossings; three bytes each) written
// as ASCII of the same length: a vertical as "|  ", anything else as
// "-+-", so the table scanners read rich's, psql's and tabulate's boxes as
// they read markdown's.
func boxNormalized(text string) string {
	if !strings.Contains(text, "\xe2\x94") && !strings.Contains(text, "\xe2\x95") {
		return text
	}
	b := []byte(text)
	for i := 0; i+2 < len(b); i++ {
		if b[i] != 0xe2 || b[i+1] != 0x94 && b[i+1] != 0x95 {
			continue
		}
		switch string(b[i : i+3]) {
		case "│", "┃", "║", "╎", "╏", "┆", "┇", "┊", "┋":
			copy(b[i:], "|  ")
		default:
			copy(b[i:], "-+-")
		}
		i += 2
	}
	return string(b)
}
