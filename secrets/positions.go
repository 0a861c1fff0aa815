package secrets

import (
	"strings"
)

// Positions: a value is a secret by where it stands, whatever its shape.
// genericRules' secret-field covers NAME=value and NAME: value; these
// cover the rest of the grammar:
//
//	position                          example
//	name/value pair                   {name: DB_PASSWORD, value: x} (Kubernetes env, ECS, Postman, SSM, HAR, CloudFormation)
//	table column or row               | user | password |, NAME  SECRET, ||  Value |  x || after a secret's Name row
//	printed by a command              $ gh auth token⏎x, vault read -field=password …⏎x
//	label line, value on the next     Password:⏎  x, Your new API key:⏎⏎  x
//	prose                             the password is x, reset the password to x
//	SQL                               IDENTIFIED BY 'x', WITH PASSWORD 'x', SET PASSWORD … = 'x'
//	positional argument               AUTH x, login("u", "x"), vault login x, echo 'u:x' | chpasswd
//	escaped JSON                      \"password\": \"x\"
//
// A name is a secret's when it holds one of secretWords' roots (in any
// of the languages foreignRoots lists) and is not one of the names that
// hold something else (secretName).

func positionRules() []rule {
	words := lowerWords()
	return []rule{
		{id: "name-value-pair", scanL: scanPairs, keywords: pairKeywords, multiline: true},
		{id: "table-column", scan: scanTableColumns, keywords: append([]string{"value"}, words...), multiline: true},
		{id: "printed-secret", scanL: scanPrinted, keywords: printedKeywords, multiline: true},
		{id: "label-next-line", scanL: scanLabelLines, keywords: words, multiline: true},
		{id: "prose", scanL: scanProse, keywords: append(proseRoots, foreignKeywords...), multiline: true},
		{id: "spaced-name", scanL: scanSpacedNames, keywords: []string{" key", " token", " secret"}},
		{
			id:       "sql-password",
			re:       lazyRegexp(`(?i)\bIDENTIFIED[ \t]+(?:WITH[ \t]+\S+[ \t]+)?BY[ \t]+(?:PASSWORD[ \t]+)?(?:'([^'\n]+)'|"([^"\n]+)"|([^\s;'"]+))|\bPASSWORD[ \t]+'([^'\n]+)'|\bSET[ \t]+PASSWORD\b[^=\n]*=[ \t]*(?:PASSWORD\()?'([^'\n]+)'`),
			keywords: []string{"identified", "password"},
			keep: func(_ []string, v string) bool {
				return masked(v) || strings.EqualFold(v, "values") || strings.HasPrefix(v, ":") || strings.HasPrefix(v, "&") || strings.HasPrefix(v, "$")
			},
		},
		{
			// Redis' AUTH [user] password, at a line's start or a prompt.
			id:       "redis-auth",
			re:       lazyRegexp(`(?m)(?:^|> ?|\bredis-cli\b[^\n]*[ \t])[ \t]*AUTH[ \t]+(?:[^\s]+[ \t]+)?([^\s]+)[ \t]*$`),
			keywords: []string{"auth "},
			keep:     keepFlagValue,
		},
		{
			// A call that takes a credential: its last string argument
			// after the first (login("u", "x"), SetBasicAuth("u", "x")).
			id:       "credential-call",
			re:       lazyRegexp(`(?i)\b(?:log_?in|login_user|login_as|sign_?in|authenticate|auth|connect|basic_?auth|setbasicauth|httpbasicauth|digestauth|set_?password|change_?password|with_?credentials|credentials)[ \t]*\([ \t]*(?:[^,()\n]+,[ \t]*)+(?:"([^"\n]+)"|'([^'\n]+)')[ \t]*[,)]`),
			keywords: []string{"login(", "log_in(", "signin(", "sign_in(", "authenticate(", "auth(", "connect(", "password(", "credentials(", "login (", "auth ("},
			keep:     func(g []string, v string) bool { return strings.ContainsAny(v, " \t") || keepFlagValue(g, v) },
		},
		{
			id:       "vault-login",
			re:       lazyRegexp(`\bvault[ \t]+login[ \t]+(?:-[^\s]+[ \t]+)*([^\s=-][^\s=]{7,})(?:\s|$)`),
			keywords: []string{"vault"},
			keep:     keepFlagValue,
		},
		{
			id:       "chpasswd",
			re:       lazyRegexp(`\b(?:echo|printf)[ \t]+(?:-[a-z]+[ \t]+)?["']?[^:\s"']+:([^\s"']+)["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd`),
			keywords: []string{"chpasswd"},
			keep:     keepFlagValue,
		},
		{
			// \"password\": \"x\" — JSON in a JSON string, as text.
			id:       "escaped-field",
			re:       lazyRegexp(`\\+"(` + nameRE + `)\\+"[ \t]*:[ \t]*\\+"((?:[^"\\\n]|\\[^"\\])*)\\+"`),
			from:     2,
			keywords: []string{`\"`},
			keep:     keepField,
		},
	}
}

// windowsAt are the spans of text around each occurrence of one of kws
// in lower (text lower-cased), from lines before lines above to after
// lines below, merged: the multi-line scanners run their regexps there
// only, not over the whole text.
func windowsAt(text, lower string, kws []string, before, after int) []span {
	var ws []span
	for _, kw := range kws {
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			p := from + i
			s := strings.LastIndexByte(text[:p], '\n') + 1
			for n := 0; n < before && s > 0; n++ {
				s = strings.LastIndexByte(text[:s-1], '\n') + 1
			}
			e := lineEnd(text, p)
			for n := 0; n < after && e < len(text); n++ {
				e = lineEnd(text, e+1)
			}
			ws = append(ws, span{max(0, s), min(len(text), e)})
			from = p + len(kw)
		}
	}
	return merge(ws)
}

// scanWindows runs re over the windows around kws and returns its
// matches' indexes in text.
func scanWindows(re *lazyRE, text, lower string, kws []string, before, after int) [][]int {
	var out [][]int
	for _, w := range windowsAt(text, lower, kws, before, after) {
		for _, m := range re.FindAllStringSubmatchIndex(text[w.start:w.end], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += w.start
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// spacedFirst: the first word of a two-word secret's name (API key,
// Access token, Client secret).
var spacedFirst = map[string]bool{"api": true, "access": true, "secret": true, "private": true, "license": true, "signing": true, "encryption": true,
	"master": true, "auth": true, "bearer": true, "refresh": true, "session": true, "client": true, "app": true, "bot": true, "deploy": true}

// spacedValue: the separator and value after a two-word name.
var spacedValue = lazyRegexp(`^[ \t]*(?::|=|->|→)[ \t]*` + valueRE)

// scanSpacedNames finds "API key: x", "Access token = x": at each " key",
// " token", " secret", a first word from spacedFirst before it and a
// separator after it.
func scanSpacedNames(text, lower string) []span {
	var spans []span
	for _, kw := range []string{" key", " token", " secret"} {
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(kw)
			ws := p
			for ws > 0 && isLetter(lower[ws-1]) {
				ws--
			}
			if !spacedFirst[lower[ws:p]] || ws > 0 && isNameByte(lower[ws-1]) {
				continue
			}
			e := p + len(kw)
			if e < len(lower) && isNameByte(lower[e]) {
				continue // api tokens, secret_key
			}
			m := spacedValue.FindStringSubmatchIndex(text[e:min(len(text), e+512)])
			if m == nil {
				continue
			}
			for g := 1; 2*g < len(m); g++ {
				s, t := m[2*g], m[2*g+1]
				if s < 0 || t <= s {
					continue
				}
				v := text[e+s : e+t]
				if len(v) >= 4 && !keepFlagValue(nil, v) && !codeLike.MatchString(v) && !codeOrProse(text, text[ws:e], ws, e, e+s, e+t) {
					spans = append(spans, span{e + s, e + t})
				}
				break
			}
		}
	}
	return spans
}

// proseRoots start the names prose gives a secret.
var proseRoots = []string{"password", "passwd", "passphrase", "passcode", "pin", "token", "key", "secret", "credential", "passwort", "mot de passe"}

var (
	// proseAfter: after a root, what makes the next word its value:
	// "password is x", "token for the bot is x", "password reset to x".
	proseAfter = lazyRegexp(`^(?i:` + proseName + `)(?:[ \t]+(?:for|of|on)[ \t]+[^\s,.:;]+(?:[ \t]+[^\s,.:;]+)?)?[ \t]+(?:is|was|are|be|becomes|now|set[ \t]+to|changed[ \t]+to|reset[ \t]+to|updated[ \t]+to|to|ist|lautet|war|est|était|es|era|é|è|jest|je|är|er|будет|—|->|→|=>)(?:[ \t]+(?:now|still|set[ \t]+to|just))?[ \t]+[*"'` + "`" + `]{0,2}([^\s"'` + "`" + `*]+)|` +
		`^(?:` + foreignRoots + `)[ \t]*(?:是|为|為|は|는|은|：)[ \t]*[*"'` + "`" + `「]{0,2}([^\s"'` + "`" + `*」。，]+)`)
	// proseVerb: before a root, a verb that makes the word after it its
	// value: "log in with password x", "use the token x".
	proseVerb    = lazyRegexp(`(?i)\b(?:with|using|use|enter|type|try)[ \t]+(?:the[ \t]+)?(?:[a-z]+[ \t]+)?$`)
	proseNameVal = lazyRegexp(`^(?i:` + proseName + `)[ \t]+[*"'` + "`" + `]{0,2}([^\s"'` + "`" + `*]+)`)
)

// scanProse finds "the password is x" and "with password x": at each
// root of a secret's name that starts a word.
func scanProse(text, lower string) []span {
	var spans []span
	for _, root := range append(proseRoots, foreignKeywords...) {
		for from := 0; ; {
			i := strings.Index(lower[from:], root)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(root)
			// The name may start before the root (api token, client
			// secret): the regexps take words before it as part of it.
			ns := p
			for ns > 0 && isLetter(lower[ns-1]) {
				ns--
			}
			if ns != p {
				continue // inside a word (monkey, apiKey)
			}
			// A name in prose is a word: a space follows it (or an s and
			// a space), not _LIMIT, s: or (.
			a := p + len(root)
			for a < len(lower) && (isLetter(lower[a]) || lower[a] >= 0x80) && root[0] < 0x80 {
				a++ // the rest of the word: contraseña, passwords
			}
			if root[0] < 0x80 && (a >= len(lower) || lower[a] != ' ' && lower[a] != '\t') || publicBefore(text, ns) {
				continue
			}
			end := min(len(text), p+160)
			var m []int
			if m = proseAfter.FindStringSubmatchIndex(text[ns:end]); m == nil {
				if !proseVerb.MatchString(lower[max(0, ns-40):ns]) {
					continue
				}
				if m = proseNameVal.FindStringSubmatchIndex(text[ns:end]); m == nil {
					continue
				}
			}
			g := 2
			if len(m) > 4 && m[2] < 0 {
				g = 4
			}
			if m[g] < 0 {
				continue
			}
			if v := text[ns+m[g] : ns+m[g+1]]; proseValue(v) && !codeBefore(text[ns:ns+m[g]]) {
				v = strings.TrimRight(v, ".,;:!?)]}")
				spans = append(spans, span{ns + m[g], ns + m[g] + len(v)})
			}
		}
	}
	return spans
}

// codeBefore: the name in a prose match is code (apiKey, get_token).
func codeBefore(head string) bool {
	for i := 1; i < len(head); i++ {
		if head[i-1] >= 'a' && head[i-1] <= 'z' && head[i] >= 'A' && head[i] <= 'Z' || head[i] == '_' || head[i] == '.' {
			return true
		}
	}
	return false
}

// proseName: the names prose gives a secret.
const proseName = `passwords?|passwd|passphrase|pass[ -]?code|pin|(?:api|access|auth|bearer|bot|personal[ \t]+access|refresh|session)?[ \t]*(?:token|key)|secret|client[ \t]+secret|credentials?|` + foreignRoots

// proseWords: what follows "the password is" in prose, not a password.
var proseWords = lazyRegexp(`(?i)^(?:the|a|an|not|no|now|still|set|stored|kept|in|at|on|being|too|required|invalid|expired|wrong|incorrect|missing|empty|correct|valid|used|needed|read|written|saved|changed|reset|rotated|revoked|generated|encrypted|hashed|hidden|masked|redacted|shown|printed|given|provided|supplied|configured|defined|passed|sent|available|ready|different|same|only|also|case|from|to|for|of|with|by|and|or|but|if|when|this|that|it|its|your|my|our|their|his|her|what|which|where|there|here|unknown|none|null|nil|true|false|ok|done|correct|right|secure|strong|weak|short|long|too|very|just|always|never|each|every|one|two|three|[a-z]+(?:ed|ing|ly|able|ible|ous|ive|al|ful|less|ment|ness|tion|sion)|\d{1,3})[.,;:!?)]*$`)

// proseValue reports whether v, after "the password is", is a value.
func proseValue(v string) bool {
	v = strings.TrimRight(v, ".,;:!?)]}")
	if len(v) < 4 || strings.ContainsAny(v[:1], "([{<") || strings.Contains(v, "/") && pathLike(v) && !randomish(strings.ReplaceAll(v, "/", ""), 16) || placeholder(v) || proseWords.MatchString(v) || statusWord.MatchString(v) {
		return false
	}
	// A plain word is prose ("the token is valid", "das Token ist
	// ungültig"); a value has a digit, a symbol or mixed case, or is long.
	return !wordRun(v) && !naturalText(v) || len(v) >= 16 && !naturalText(v)
}

// secretName: a name whose value is a secret (DB_PASSWORD, api-token,
// Client secret, contraseña), not a name of something else
// (password_file, secretName, token_ttl).
func secretName(name string) bool {
	n := strings.Trim(strings.TrimSpace(name), "\"'`*:/")
	if n == "" || len(n) > 64 {
		return false
	}
	if i := strings.LastIndexAny(n, "/"); i >= 0 {
		n = n[i+1:] // /prod/db/password
	}
	words := strings.ReplaceAll(n, " ", "_")
	if secretIDName.MatchString(words) {
		return true
	}
	return strong(words) && !notSecretName.MatchString(words) && !camelNotSecret.MatchString(words) && !otherName.MatchString(words)
}

// pairKeywords: a value field (value:, "Value":, ParameterValue=).
var pairKeywords = []string{"value:", "value\":", "value':", "value =", "value=", "value\" :", "secretstring\":"}

// pairRE: a name field, up to three other fields, a value field: the
// name/value pairs of Kubernetes env, ECS task definitions, Postman
// environments, SSM parameters, HAR headers, CloudFormation parameters.
var pairRE = lazyRegexp(`(?i)["']?(?:name|key|parametername|parameterkey)["']?[ \t]*[:=][ \t]*["']?([^"'\s,{}\[\]]+)["']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]+)?)?` +
	`(?:["']?(?:type|enabled|description|version|arn|datatype|tier)["']?[ \t]*[:=][ \t]*["']?[^"'\n,{}]*["']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?){0,3}` +
	`["']?(?:value|parametervalue|secretstring|secret_string)["']?[ \t]*[:=][ \t]*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s,{}"'\[\]][^\s,{}"']*))`)

func scanPairs(text, lower string) []span {
	var spans []span
	for _, m := range scanWindows(pairRE, text, lower, pairKeywords, 6, 1) {
		if n := text[m[2]:m[3]]; !secretName(n) && !strings.EqualFold(n, "authorization") && !strings.EqualFold(n, "proxy-authorization") {
			continue
		}
		for g := 2; g <= 4; g++ {
			if s, e := m[2*g], m[2*g+1]; s >= 0 && e > s {
				if v := text[s:e]; !masked(v) {
					spans = append(spans, span{s, e})
				}
			}
		}
	}
	return spans
}

// cells splits a table row: | a | b | or a  b (two spaces or more). ok
// is false for a line that is not a row.
func cells(line string) (cs []span, ok bool) {
	t := strings.TrimRight(line, " \t\r")
	if strings.HasPrefix(strings.TrimLeft(t, " \t"), "|") || strings.Contains(t, " | ") {
		for i := 0; i < len(t); {
			for i < len(t) && (t[i] == '|' || t[i] == ' ' || t[i] == '\t') {
				i++
			}
			j := i
			for j < len(t) && t[j] != '|' {
				j++
			}
			e := j
			for e > i && (t[e-1] == ' ' || t[e-1] == '\t') {
				e--
			}
			if e > i {
				cs = append(cs, span{i, e})
			}
			i = j
		}
		return cs, len(cs) > 0
	}
	for i := 0; i < len(t); {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		j := i
		for j < len(t) && !(t[j] == '\t' || t[j] == ' ' && j+1 < len(t) && t[j+1] == ' ') {
			j++
		}
		if j > i {
			cs = append(cs, span{i, j})
		}
		i = j
	}
	return cs, len(cs) >= 2
}

var (
	ruleLine    = lazyRegexp(`^[ \t|+:=-]*$`)
	valueHeader = lazyRegexp(`(?i)^(?:value|secret|secretstring|secret value|password|key value)$`)
	nameHeader  = lazyRegexp(`(?i)^(?:name|key|parameter|parametername|parameter name)$`)
	// tableHeader: a header cell: a few words.
	tableHeader = lazyRegexp(`^[\p{L} _'-]{1,40}$`)
)

// scanTableColumns redacts the cells of a table's column headed by a
// secret's name (| user | password |, NAME  TOKEN), and the Value row of
// a two-column table whose Name row names a secret or whose Type is
// SecureString (aws ssm get-parameter --output table).
func scanTableColumns(text string) []span {
	text = boxNormalized(text)
	var spans []span
	var cols []int // secret columns of the current table
	width := 0
	secretRow, inTable := false, false
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := text[pos:end]
		if ruleLine.MatchString(line) && strings.TrimSpace(line) != "" {
			pos = end + 1
			continue
		}
		cs, ok := cells(line)
		if !ok {
			cols, secretRow, width, inTable = nil, false, 0, false
			pos = end + 1
			continue
		}
		first := !inTable // a header is a table's first row
		inTable = true
		get := func(i int) string { return line[cs[i].start:cs[i].end] }
		if len(cs) == 2 {
			k, v := get(0), get(1)
			switch {
			case nameHeader.MatchString(k) && secretName(v) || strings.EqualFold(k, "type") && strings.EqualFold(v, "SecureString"):
				secretRow = true
			case secretRow && valueHeader.MatchString(k) && !placeholder(v):
				spans = append(spans, span{pos + cs[1].start, pos + cs[1].end})
			}
		}
		if cols != nil && len(cs) == width {
			for _, c := range cols {
				if v := get(c); !placeholder(v) && !strings.ContainsAny(v, " \t") {
					spans = append(spans, span{pos + cs[c].start, pos + cs[c].end})
				}
			}
		} else if len(cs) >= 2 && first {
			cols, width = nil, len(cs)
			header := true
			for i := range cs {
				if !tableHeader.MatchString(get(i)) || camelCase(get(i)) {
					header = false
				}
			}
			for i := range cs {
				if header && secretName(get(i)) && len(strings.Fields(get(i))) <= 3 {
					cols = append(cols, i)
				}
			}
		}
		pos = end + 1
	}
	return spans
}

// mayName reports whether lower (lower-cased) holds a root of a secret's
// name: a cheap look before secretName's regexps.
func mayName(lower string) bool {
	for _, w := range lowerWords() {
		if strings.Contains(lower, w) {
			return true
		}
	}
	for _, w := range foreignKeywords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return strings.Contains(lower, "passe")
}

// scanLabelLines finds a label line naming a secret (Password:, Your new
// API key:, Client secret) with the value alone on the next line (after
// one blank line at most).
func scanLabelLines(text, lower string) []span {
	var spans []span
	for pos := 0; pos < len(text); {
		end := lineEnd(text, pos)
		line := strings.TrimSpace(text[pos:end])
		next := end + 1
		if len(line) < 2 || len(line) > 60 || next >= len(text) {
			pos = next
			continue
		}
		// The value: the next line, or the one after a blank line.
		vs := next
		ve := lineEnd(text, vs)
		if strings.TrimSpace(text[vs:ve]) == "" && ve+1 < len(text) {
			vs = ve + 1
			ve = lineEnd(text, vs)
		}
		v := strings.TrimSpace(text[vs:ve])
		if len(v) < 6 || strings.ContainsAny(v, " \t") {
			pos = next
			continue
		}
		if strings.HasSuffix(v, ":") || strings.ContainsAny(v[:1], "<[({#$") || !mayName(lower[pos:end]) {
			pos = next
			continue
		}
		if strings.HasPrefix(line, "$ ") || strings.ContainsAny(line, "<>") {
			pos = next // a command: printed-secret judges what it prints
			continue
		}
		label := strings.TrimRight(strings.TrimLeft(line, "#>*- \t"), ":： \t")
		words := strings.Fields(label)
		if len(words) == 0 || len(words) > 5 || !secretName(words[len(words)-1]) && !secretName(label) || strings.ContainsAny(label, "=,;(){}[]\"'`:：/|") {
			pos = next
			continue
		}
		if strings.HasSuffix(v, ":") || placeholder(v) || wordRun(v) || ruleLine.MatchString(v) || strings.HasPrefix(v, "$") || strings.ContainsAny(v[:1], "<[({#") || codeLike.MatchString(v) {
			pos = next
			continue
		}
		s := vs + strings.Index(text[vs:ve], v)
		spans = append(spans, span{s, s + len(v)})
		pos = next
	}
	return spans
}
