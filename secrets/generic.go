package secrets

import (
	"encoding/base64"
	"strings"
)

// Words that make a name a secret's: API_KEY, db_password, --auth-token.
const secretWords = `key|token|secret|passw(?:or)?d|pwd|passphrase|credentials?|creds?|auth|pass|pw|pat|jwt|cookie|mnemonic|psk|pin`

// foreignRoots are the word for password (and secret key) in other
// languages: Passwort/Kennwort, contraseña/clave, mot de passe, senha,
// parola d'ordine, wachtwoord, пароль, 密码/口令/密钥, パスワード, 비밀번호,
// hasło, şifre, lösenord, salasana, heslo, jelszó.
const foreignRoots = `passwort|kennwort|contrase(?:ñ|n)a|clave|mot[ _-]de[ _-]passe|senha|parola[ _-]d'ordine|wachtwoord|пароль|密码|密碼|口令|密钥|パスワード|暗証番号|비밀번호|has(?:ł|l)o|(?:ş|s)ifre|l(?:ö|o)senord|adgangskode|passord|salasana|heslo|jelsz(?:ó|o)|κωδικός|סיסמה|كلمة[ _]المرور|mật[ _]khẩu|kata[ _]sandi`

// nameRE is a variable, field or flag name containing one of secretWords.
const nameRE = `[A-Za-z0-9_.-]*(?i:` + secretWords + `)[A-Za-z0-9_.-]*`

// The armor lines of a private key block (PEM, OpenSSH, PGP's KEY BLOCK):
// the private-key rules and BlockWriter find blocks by them.
const (
	pemBegin = `-----BEGIN (?:[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----`
	pemEnd   = `-----END (?:[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V\d)-----`
)

// A quoted value (escapes kept whole, so JSON stays valid) or a bare one.
// The bare value may not start with '=', which keeps Go's "token := x"
// and "key == x" out, and ends at a comma only before a blank or a quote
// (a password may hold one). Wrapped literals come first: Python's
// triple quotes and b'…', r"…", C#'s @"…", Rust's r#"…"#, Ruby's %q(…),
// PowerShell's here-string @"⏎…⏎"@.
const valueRE = `(?:"""\r?\n?([^"\n]+?)\r?\n?"""|'''\r?\n?([^'\n]+?)\r?\n?'''|@["']\r?\n([^\n]+)\r?\n["']@|` +
	`(?:[bBrRuUf]{1,2}|@)"((?:[^"\\\n]|\\.)*)"|[bBrRuUf]{1,2}'([^'\n]*)'|r#+"([^"\n]*)"#+|%[qQ][(\[{<]([^)\]}>\n]*)[)\]}>]|` +
	`(?:\[\]byte|Buffer\.from|bytes|bytearray|String)\([ \t]*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')|"((?:[^"\\\n]|\\.)*)"\.(?:getBytes|encode|toByteArray)\(|` +
	`"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"'` + "`" + `,;=](?:[^\s"'` + "`" + `,;]|,[^\s"'` + "`" + `,;])*)|` + "`([^`\n]+)`" + `)`

func genericRules() []rule {
	return []rule{
		{
			// A private key block; one cut short (clipped output) is
			// redacted to the end.
			id:        "private-key",
			re:        lazyRegexp(`(?s)` + pemBegin + `.*?(?:` + pemEnd + `|\z)`),
			keywords:  []string{"private key", "static key"},
			multiline: true,
			keep:      func(_ []string, v string) bool { return !keyBody(v) },
		},
		{
			// The end of a block whose start was cut off (a gate's output
			// keeps its tail): the base64 lines before its END line, and
			// the line the cut went through.
			id:        "private-key-tail",
			re:        lazyRegexp(`(?m)(?:^.*\n)?(?:^[ \t]*[A-Za-z0-9+/=]+\r?\n)*^[ \t]*` + pemEnd),
			keywords:  []string{"private key", "static key"},
			multiline: true,
			keep:      func(_ []string, v string) bool { return !keyBody(v) },
		},
		{
			// scheme://user:password@host — the password.
			id:       "url-credentials",
			re:       lazyRegexp(`\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/@'"<>]*:([^\s/@'"<>]+)@[A-Za-z0-9\[]`),
			keywords: []string{"://"},
			keep:     func(_ []string, v string) bool { return placeholder(v) },
		},
		{
			// Authorization: <any scheme> <credentials> (Basic, Bearer, Bot,
			// SSWS, GenieKey, Negotiate, …), Proxy-Authorization: …
			id:       "authorization-header",
			re:       lazyRegexp("(?i)\\bauthorization[\"'`]?[ \\t]*[:=][ \\t]*[\"'`]?(?:([A-Za-z][A-Za-z0-9_.-]*)[ \\t]+)?([^\\s\"'`]{6,}[^\"'`\\r\\n]*)"),
			from:     2,
			keywords: []string{"authorization"},
			keep:     func(_ []string, v string) bool { return placeholder(strings.TrimSpace(v)) },
		},
		{
			id:       "bearer",
			re:       lazyRegexp(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)`),
			keywords: []string{"bearer"},
		},
		{
			// Basic credentials outside a header: only base64 that
			// decodes to user:password, so "Basic authentication" stays.
			id:       "basic-credentials",
			re:       lazyRegexp(`(?i)\bbasic[ \t]+([A-Za-z0-9+/]{8,}={0,2})`),
			keywords: []string{"basic"},
			keep: func(_ []string, v string) bool {
				d, err := base64.StdEncoding.DecodeString(v)
				return err != nil || !strings.Contains(string(d), ":")
			},
		},
		{
			// NAME=value, NAME: value, "name": "value", name = 'value'
			// (env, YAML, JSON, TOML, INI, the AWS credentials file).
			id:       "secret-field",
			re:       lazyRegexp(`(?:^|[^A-Za-z0-9_.-])(` + nameRE + `)["'*` + "`" + `]{0,3}(?:[ \t]*:=[ \t]*|[ \t]*:[ \t]*(?:\*\*[ \t]*|[|>][+-]?[ \t]*\r?\n[ \t]*)?|[ \t]*=>[ \t]*|=|[ \t]+=[ \t]*)` + valueRE),
			from:     2,
			keywords: lowerWords(),
			named:    true,
			lead:     1,
			keep:     keepField,
			at:       namedAt,
		},
		{
			// Passwort: x, contraseña=x, 密码：x — secret-field for the
			// names of other languages (a rule of its own: Unicode case
			// folding in secret-field's regexp would slow every "key").
			id:       "foreign-field",
			re:       lazyRegexp(`(?i)(?:^|[^\p{L}0-9_.-])([\p{L}0-9_.-]*?(?:` + foreignRoots + `)[\p{L}0-9_.-]*)["'*` + "`" + `]{0,3}(?:[ \t]*[:：][ \t]*|[ \t]*=[ \t]*)` + valueRE),
			from:     2,
			keywords: foreignKeywords,
			keep:     keepField,
			at:       namedAt,
		},
		{
			// --password x, --api-token "x", -auth x
			id:       "secret-flag",
			re:       lazyRegexp(`(?:^|[\s"'])--?(` + nameRE + `)[ \t]+` + valueRE),
			from:     2,
			keywords: lowerWords(),
			keep: func(g []string, v string) bool {
				return strings.HasPrefix(v, "-") || keepFlagValue(g, v) || keepField(g, v)
			},
			at: namedAt,
		},
		{
			// curl -u user:password, --user=user:password
			id:       "user-password-flag",
			re:       lazyRegexp(`(?:^|\s)(?:-u|--user)(?:=|[ \t]*)["']?[^\s:"'@]+:([^\s"']+)`),
			keywords: []string{"-u"},
			keep: func(g []string, v string) bool {
				user := strings.TrimLeft(g[0][:strings.LastIndex(g[0], ":")], " \t")
				user = user[strings.LastIndexAny(user, " =\"'")+1:]
				return placeholder(v) || v == user || strings.HasPrefix(user, "<") || strings.HasPrefix(user, "$")
			},
		},
		{
			// OpenAI and Anthropic (sk-ant-…) keys; the length keeps
			// "sk-learn" out.
			id:       "sk-key",
			re:       lazyRegexp(`\bsk-[A-Za-z0-9_-]{16,}`),
			keywords: []string{"sk-"},
		},
		{
			// Shorter than gitleaks' exact lengths: a token cut or typed
			// short is still a token. Fakes (ghp_xxxx…) stay.
			id:       "github-token",
			re:       lazyRegexp(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`),
			keywords: []string{"gh", "github_pat_"},
			keep:     func(_ []string, v string) bool { return fake(v) },
		},
		{
			// Slack tokens: xoxb-<team digits>-…; one ending in "-" was
			// cut before a placeholder (xoxp-…-####).
			id:       "slack-token",
			re:       lazyRegexp(`\bxox[abeoprs]-[0-9]{10,}-[A-Za-z0-9-]{8,}`),
			keywords: []string{"xox"},
			keep:     func(_ []string, v string) bool { return fake(v) || strings.HasSuffix(v, "-") },
		},
		{
			id:       "aws-access-key-id",
			re:       lazyRegexp(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`),
			keywords: []string{"akia", "asia", "abia", "acca"},
			keep:     func(_ []string, v string) bool { return fake(v) },
		},
		{
			id:       "slack-webhook",
			re:       lazyRegexp(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_-]{16,})`),
			keywords: []string{"hooks.slack.com"},
		},
	}
}

func lowerWords() []string {
	return []string{"key", "token", "secret", "pass", "pwd", "cred", "auth", "pw", "pat", "jwt", "cookie", "mnemonic", "psk", "pin"}
}

// foreignKeywords find foreignRoots' names (lower case, as asciiLower
// leaves non-ASCII bytes).
var foreignKeywords = []string{"kennwort", "contrase", "clave", "senha", "parola", "wachtwoord", "пароль", "Пароль", "ПАРОЛЬ", "密码", "密碼", "口令", "密钥",
	"パスワード", "暗証番号", "비밀번호", "hasło", "haslo", "şifre", "sifre", "lösenord", "losenord", "adgangskode", "passord", "salasana", "heslo", "jelszó", "jelszo", "κωδικός", "סיסמה", "كلمة", "mật", "sandi"}

// notSecretName: names that hold a secret's size, place or label, not
// the secret (TOKEN_LIMIT, key_file, secret_name, max_tokens).
var notSecretName = lazyRegexp(`(?i)(?:^|[_.-])(?:fingerprint|thumbprint|checksum|kid|keyid|file|path|dir|env|name|names|id|ids|limit|limits|len|length|size|count|type|url|uri|endpoint|max|min|budget|usage|window|threshold|header|field|prefix|format|ttl|expiry|expires|version|method|provider|scheme|strategy|scope|realm|issuer|audience|algorithm|alg|enabled|disabled|required|status|kind|backend|plugin|driver|level|role|user|username|login|email|arn|host|port|server|bucket|timeout|interval|retries|hint|rotation|manager|source|location|salt|state|hash|hashed|digest|policy|ref|reference|min_length|strength|reset|rules)s?$|^(?:max|min|num|total|input|output|cache)[_.-]|(?i)^author(?:s|ed|ship|[_.-]?name|[_.-]?email)?$|^(?:proxy[_-])?authorization$`)

// strongName: names that announce a secret by themselves, unlike a bare
// "key" (sort_key, monkey, KEYBOARD).
var strongName = lazyRegexp(`(?i)^passe$|token|secret|passw(?:or)?d|pwd|passphrase|credential|auth|pass$|pass[_.-]|(?:^|[_.-])(?:pw|pat|pin|puk|jwt|cookie|mnemonic|passcode|psk|creds?)(?:$|[_.-])|(?-i:[a-z](?:Pw|Pat|Jwt|Pass)$)|(?:api|private|access|secret|signing|master|encryption|client)[_.-]?key(?-i:$|[_.\-A-Z0-9]|s$)`)

// foreignName: a name holding a root of foreignRoots. Its regexp folds
// Unicode case, slow: it runs only on a name with a non-ASCII byte or an
// ASCII root of another language in it.
var foreignName = lazyRegexp(`(?i)` + foreignRoots)

var foreignASCII = []string{"passwort", "kennwort", "contrasen", "clave", "senha", "parola", "wachtwoord", "haslo", "sifre", "losenord", "adgangskode", "passord", "salasana", "heslo", "jelszo", "sandi"}

// strong reports whether name announces a secret by itself (strongName,
// or a password's name in another language).
func strong(name string) bool {
	if strongName.MatchString(name) {
		return true
	}
	l := asciiLower(name)
	for i := 0; i < len(l); i++ {
		if l[i] >= 0x80 {
			return foreignName.MatchString(name)
		}
	}
	for _, w := range foreignASCII {
		if strings.Contains(l, w) {
			return foreignName.MatchString(name)
		}
	}
	return false
}

// keyBody reports whether a private key block holds base64 (capitals,
// digits), not nothing or a word ("anything", gitleaks' false positive).
func keyBody(v string) bool {
	return strings.ContainsAny(armor.ReplaceAllString(v, ""), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=")
}

var armor = lazyRegexp(`-----(?:BEGIN|END) [A-Z0-9 ]*-----`)

var (
	allDigits = lazyRegexp(`^[0-9]+(?:\.[0-9]+)?[kKmMbB]?$`)
	codeLike  = lazyRegexp(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(|\[|\.[A-Za-z_$][\w$]*$)|^(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*$`)
	hasDigit  = lazyRegexp(`[0-9]`)
	hasLetter = lazyRegexp(`[A-Za-z]`)
)

// camelNotSecret: notSecretName's suffixes after a lower-case letter, as
// in camelCase (credentialsId, issuerKeyHash, SharedAccessKeyName).
var camelNotSecret = lazyRegexp(`[a-z0-9](?:Digest|Fingerprint|Thumbprint|Checksum|Salt|File|Path|Dir|Env|Name|Names|Id|ID|Ids|IDs|Limit|Len|Length|Size|Count|Type|Url|URL|Uri|Endpoint|Header|Field|Prefix|Format|Ttl|TTL|Version|Hash|Event|Handler|Callback|Listener|Mode|Index|Column|Label|Policy|Vault|Store|Ref|Alias|Region)s?$`)

// otherName: names that hold something else than a secret despite a
// secret's word: public keys and tokens, keyboard events, Java packages,
// authentication results.
var otherName = lazyRegexp(`(?i)public|foreign|manager$|vault$|kms$|tokens$|bypass|compass|passthrough|surpass|trespass|overpass|underpass|passenger|passive|passage|^pub[_.-]?key|pubkey|(?:^|[_.-])(?:event|events|handler|callback|listener|mode|index|column|label|policy|alias|region)$|^(?:io|com|org|net|community|ansible)\.|authentication|authenticity|authority|authored|unauthori[sz]|authori[sz]ed|authori[sz]e$|^existing|(?:password|token)key$|secretkeyref|secretref|secretname`)

// keySegment: "key" as a word of the name (api_key, signingKey, KEY), not
// inside one (keyword, monkeys, keying).
var keySegment = lazyRegexp(`(?:^|[_.-]|[a-z0-9])(?:key|Key|KEY)(?:$|[_.-]|[A-Z0-9])|(?:^|[_.-])keys?(?:$|[_.-])`)

// keepField decides whether a named value is not a secret: g[1] is the
// name, v the value.
func keepField(g []string, v string) bool {
	name := g[1]
	if strings.HasSuffix(g[0], "`"+v+"`") && strings.ContainsAny(v, " \t") {
		return true // `cmd arg`: a shell's command substitution, not markdown's code
	}
	if secretIDName.MatchString(name) && strings.ContainsAny(v, "/:") {
		return true // AWS's SecretId names the secret: a path, an ARN
	}
	if !secretIDName.MatchString(name) && (notSecretName.MatchString(name) || camelNotSecret.MatchString(name)) || otherName.MatchString(name) ||
		allDigits.MatchString(v) && !digitSecret(name, v) || codeLike.MatchString(v) && codeSegments(v) && !bootstrapToken.MatchString(v) {
		return true
	}
	if masked(v) || naturalText(v) && !phraseName.MatchString(name) || strings.HasPrefix(v, "[") || strings.HasPrefix(v, "-") ||
		strings.Contains(v, "/") && pathLike(v) && !randomish(strings.ReplaceAll(v, "/", ""), 16) {
		return true // a mask, words (a translation, a status), a path
	}
	if len(v) < 4 || strings.Contains(strings.ToLower(name), "cookie") && strings.Contains(v, "=") {
		// A cookie header's pairs are the cookie scanner's to judge.
		return true
	}
	if !strong(name) {
		// A bare "key" names many things (sort keys, cache keys, UUIDs);
		// only a value that looks generated is taken for a secret.
		return !keySegment.MatchString(name) || !randomish(v, 12) && !hexKey.MatchString(v) && !(len(v) >= 8 && symbolMix(v) && !wordy(v)) || idLike(v)
	}
	return false
}

// secretIDName: Vault's, Consul's and Nomad's secret id (SecretID,
// secret_id) is the secret itself, not an id of one.
var secretIDName = lazyRegexp(`(?i)^secret[ _.-]?id$`)

// codeSegments: each dotted part of v is a name as code writes them
// (config.api_key, os.environ, settings.DB_PASSWORD), not a password
// with a dot in it (VBx4B.FCPUE3).
func codeSegments(v string) bool {
	if strings.ContainsAny(v, "([") {
		return true // a call, an index
	}
	for _, seg := range strings.Split(v, ".") {
		if !lowerIdent.MatchString(seg) && !upperIdent.MatchString(seg) && !wordy(seg) {
			return false
		}
	}
	return true
}

var (
	lowerIdent = lazyRegexp(`^[a-z_$][a-z0-9_$]*$`)
	upperIdent = lazyRegexp(`^[A-Z_][A-Z0-9_]*$`)
)

// phraseName: names whose secret is words (a wallet's mnemonic, a
// passphrase, a seed phrase).
var phraseName = lazyRegexp(`(?i)mnemonic|passphrase|seed|phrase|recovery`)

// digitSecret: digits that are a secret under their name — a PIN, or six
// or more under a password's or secret's name (not a count: max_tokens
// and token_ttl are notSecretName's).
func digitSecret(name, v string) bool {
	if !strong(name) || strings.ContainsAny(v, ".kKmMbB") {
		return false
	}
	return len(v) >= 6 || len(v) >= 4 && pinName.MatchString(name)
}

var pinName = lazyRegexp(`(?i)(?:^|[_.-])(?:pin|passcode|otp)(?:$|[_.-])`)

// bootstrapToken is kubeadm's abcdef.0123456789abcdef, which codeLike
// would take for a field access.
var bootstrapToken = lazyRegexp(`^` + bootstrapTokenRE + `$`)

// bootstrapTokenRE is kubeadm's token id.secret (the kubeadm-token rule).
const bootstrapTokenRE = `[a-z0-9]{6}\.[a-z0-9]{16}`

// placeholder: values that stand in for a secret rather than being one:
// placeholderRE's, and fake's (an ellipsis, [redacted], your_…, a run of
// one character), which placeholderRE does not spell again.
var placeholderRE = lazyRegexp(`(?i)^(?:` +
	`\*+|x+|\.+|<.*|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\{.*\}|\$\(.*|\{.*\}|%[A-Za-z_]+%|\[[A-Za-z_ -]*\]|` +
	`(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)|` +
	`none|null|nil|true|false|undefined|empty|required|optional|string|str|bool|int|secret|password|token|pass|passwd|pwd|pw|test|file|env|stdin|prompt|` +
	`my[_-].*|example.*|redacted|hidden|masked` +
	`)$`)

func placeholder(v string) bool {
	v = strings.Trim(v, `"'`)
	return placeholderRE.MatchString(v) || fake(v) || secretReference.MatchString(v)
}

// secretReference: where a secret is kept, not the secret: a 1Password,
// Vault, SOPS or cloud secret manager reference, a template, a YAML tag.
var secretReference = lazyRegexp(`^(?:op|vault|ref\+[a-z0-9]+|awssm|awsssm|gcpsm|azkv|keyvault|secretsmanager|ssm|k8s|doppler|infisical|bw|lpass|bitwarden|onepassword)://|^arn:aws[a-z-]*:|^projects/[^/]+/secrets/|^ENC\[|^\$\{|^\{\{|^!`)
