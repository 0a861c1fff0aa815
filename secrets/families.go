package secrets

import (
	"strings"
)

// familyRules are shapes by family rather than by example: password flags
// of command-line tools, credential files and connection strings, vendor
// prefixes gitleaks lacks, and private blocks besides PEM. Each secret
// still passes fake() and the placeholder checks, so "-p <password>" and
// "pass:xxxxxxxx" stay.
func familyRules() []rule {
	val := `["']?([^\s"'` + "`" + `]+)`
	quotedOrBare := `(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'` + "`" + `;|&]+))`
	return []rule{
		{
			// Short password flags, per tool: a -p means a port to most
			// tools, a password to these. mysql's is attached (-pSECRET;
			// "-p db" prompts), as is 7-Zip's and rar's.
			id:       "cli-password-attached",
			re:       lazyRegexp(`(?i)\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlpump|mysqlbinlog|mariadb|mariadb-dump|mariadb-admin|7z|7za|7zz|rar|unrar)\b[^\n|;&]*?[ \t]["']?-p` + quotedOrBare),
			keywords: []string{" -p", "'-p", "\"-p"},
		},
		{
			id: "cli-password-flag",
			re: lazyRegexp(`\b(?:` +
				`(?:sshpass)[^\n|;&]*?[ \t]-p[ \t]*|` +
				`(?:docker|podman|buildah|nerdctl|helm|oras|crane|regctl|skopeo|finch)\b[^\n|;&]*?\blogin\b[^\n|;&]*?[ \t]-p[ \t]+|` +
				`(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|cqlsh|hdbsql|rabbitmqadmin|twine|az|oc|cf|psexec|paexec|winexe)\b[^\n|;&]*?[ \t]-p[ \t]+|` +
				`(?:openssl)\b[^\n|;&]*?[ \t]-[kK][ \t]+|` +
				`(?:p4)\b[^\n|;&]*?[ \t]-P[ \t]+|` +
				`(?:redis-cli|keydb-cli|valkey-cli|redis-benchmark)\b[^\n|;&]*?[ \t]-a[ \t]+|` +
				`(?:ldapsearch|ldapmodify|ldapadd|ldapdelete|ldapwhoami|ldappasswd|ldapcompare|ldapmodrdn|ldapexop|vsql)\b[^\n|;&]*?[ \t]-w[ \t]+|` +
				`(?:sqlcmd|bcp|osql|ipmitool|zip|unzip|zipcloak|pgloader)\b[^\n|;&]*?[ \t]-P[ \t]+|` +
				`(?:plink|pscp|psftp|putty|kitty)\b[^\n|;&]*?[ \t]-pw[ \t]+|` +
				`(?:rdesktop)\b[^\n|;&]*?[ \t]-p[ \t]+|` +
				`(?:winrs)\b[^\n|;&]*?[ \t]-p(?:assword)?:|` +
				`(?:snmpwalk|snmpget|snmpset|snmpbulkwalk|snmptrap|snmptable)\b[^\n|;&]*?[ \t]-[AX][ \t]+|` +
				`(?:rar|winrar)\b[^\n|;&]*?[ \t]-hp|` +
				`(?:ssh-keygen)\b[^\n|;&]*?[ \t]-[NP][ \t]+|` +
				`(?:rabbitmqctl)[ \t]+(?:add_user|change_password|authenticate_user)[ \t]+\S+[ \t]+|` +
				`(?:htpasswd)(?:[ \t]+-[a-zA-Z]+)*?[ \t]+-[a-zA-Z]*b[a-zA-Z]*(?:[ \t]+-[a-zA-Z]+)*[ \t]+(?:[^\s-]\S*[ \t]+)?[^\s-]\S*[ \t]+|` +
				`(?:lftp)\b[^\n|;&]*?[ \t]-u[ \t]+[^\s,]+,|` +
				`(?:net)[ \t]+user[ \t]+\S+[ \t]+|` +
				`(?:security)[ \t]+add-(?:generic|internet)-password\b[^\n|;&]*?[ \t]-w[ \t]+|` +
				`(?:mysqladmin)\b[^\n|;&]*?[ \t]password[ \t]+` +
				`)` + quotedOrBare),
			// The flags, not the tools, are the keywords: "oc", "az" or
			// "net" occur in every other word.
			keywords: []string{" -p", "\t-p", " -a ", " -w ", " -k ", " -n ", " -x ", " -hp", "add_user", "change_password", "authenticate_user", "htpasswd", " user ", " -u ", "mysqladmin"},
			keep:     keepFlagValue,
		},
		{
			// smbclient -U user%password, --user=DOMAIN/user%password
			id:       "smb-user-password",
			re:       lazyRegexp(`(?:^|[\s"'])(?:-U|--user(?:name)?|-u)(?:=|[ \t]+)["']?[^\s%"']+%([^\s"']+)`),
			keywords: []string{"%"},
			keep:     keepFlagValue,
		},
		{
			// openssl -passout pass:X, apksigner --ks-pass pass:X,
			// keytool -storepass X: a flag named for a pass, whatever the
			// tool. env:, file:, fd: and stdin name where it is instead.
			id:       "pass-flag",
			re:       lazyRegexp(`(?i)(?:^|[\s"'])--?[a-z0-9-]*pass(?:in|out|word|wd|phrase)?(?:=|[ \t]+)(?:pass:)?` + quotedOrBare),
			keywords: []string{"pass"},
			keep: func(g []string, v string) bool {
				flag := strings.ToLower(g[0])
				return strings.Contains(flag, "bypass") || strings.Contains(flag, "compass") || strings.Contains(flag, "passthrough") ||
					strings.Contains(flag, "-stdin") || strings.Contains(flag, "passes") ||
					strings.Contains(flag, "-pass-") || keepFlagValue(g, v)
			},
		},
		{
			// Windows tools: /p:secret, /password:secret (msbuild's
			// /p:Name=Value is a property, not a password).
			id:       "slash-password",
			re:       lazyRegexp(`(?i)(?:^|[\s"'])/(?:p|pass|password|passwd|pwd|rp)[:=]` + quotedOrBare),
			keywords: []string{"/p"},
			keep: func(g []string, v string) bool {
				return strings.Contains(v, "=") || keepFlagValue(g, v)
			},
		},
		{
			// net use \\host\share PASSWORD /user:DOMAIN\user
			id:       "net-use",
			re:       lazyRegexp(`(?i)\bnet[ \t]+use[ \t]+(?:\S+:[ \t]+)?\\\\\S+[ \t]+` + quotedOrBare + `[ \t]+/user:`),
			keywords: []string{"net"},
			keep:     keepFlagValue,
		},
		{
			id:       "powershell-securestring",
			re:       lazyRegexp(`(?i)ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?(?:"([^"\n]+)"|'([^'\n]+)')`),
			keywords: []string{"convertto-securestring"},
			keep:     keepFlagValue,
		},
		{
			// A here-string to a command reading a password on stdin:
			// mysql --password-stdin <<< "x", docker login … <<< x.
			id:       "here-string-stdin",
			re:       lazyRegexp(`(?:--password-stdin|--with-token|--token-stdin|\bsudo[ \t]+-S|\bchpasswd|\bpasswd[ \t]+--stdin|\blogin\b|--password\b|-p\b)[^\n<]*<<<[ \t]*` + quotedOrBare),
			keywords: []string{"<<<"},
			keep:     keepFlagValue,
		},
		{
			// echo SECRET | docker login --password-stdin
			id:       "echo-to-stdin",
			re:       lazyRegexp(`\b(?:echo|printf)[ \t]+(?:-n[ \t]+)?` + quotedOrBare + `[ \t]*\|[^\n|]*(?:--password-stdin|--with-token|--token-stdin|login|sudo[ \t]+-S|chpasswd|passwd[ \t]+--stdin)`),
			keywords: []string{"stdin", "login", "with-token", "sudo", "passwd"},
			keep:     keepFlagValue,
		},
		{
			// aws configure set aws_secret_access_key X, setx API_TOKEN X,
			// git config github.token X: a secret's name, a space, its value.
			id:       "set-name-value",
			re:       lazyRegexp(`(?i)\b(?:configure[ \t]+set|config(?:[ \t]+--?[a-z-]+)*(?:[ \t]+set)?|setx|set-item|secret[ \t]+set)[ \t]+(?:\S*?:)?(` + nameRE + `)[ \t]+(?:--?(?:body|value|b)(?:[ \t]+|=))?` + quotedOrBare),
			from:     2,
			keywords: []string{"set", "config"},
			keep:     keepField,
		},
		{
			// Secrets in a URL's query: ?sig= (Azure SAS), ?access_token=,
			// ?X-Amz-Security-Token=, ?key= (Google), ?password=.
			id:       "url-query-secret",
			re:       lazyRegexp(`[?&;]([A-Za-z0-9_.-]*(?i:sig|signature|token|key|passw(?:or)?d|pwd|pass|secret|auth|session|sid|credential)[A-Za-z0-9_.-]*)=([^&#\s"'<>]+)`),
			from:     2,
			keywords: []string{"?", "&"},
			keep: func(g []string, v string) bool {
				return len(v) < 8 || otherValueName(g[1]) || placeholder(v) || allDigits.MatchString(v) ||
					!strong(g[1]) && !queryStrong.MatchString(g[1]) && (lookAlike(v) || !randomish(v, 12))
			},
		},
		{
			// printf's arguments piped to a command that reads a password
			// on stdin: printf '%s\n%s\n' 'x' 'x' | smbpasswd -s -a u.
			id:       "printf-to-stdin",
			scan:     scanPrintfStdin,
			keywords: []string{"printf"},
		},
		{
			// email:password, the pairs of a credentials list or a postfix
			// sasl_passwd line ([smtp.example.com]:587 user@example.com:x).
			id:       "email-password",
			re:       lazyRegexp(`(?:^|[\s\[\]"'=,])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}:([^\s:/@"'<>]{4,})(?:[\s"']|$)`),
			keywords: []string{"@"},
			keep: func(g []string, v string) bool {
				return allDigits.MatchString(v) || keepFlagValue(g, v) || masked(v) || naturalText(v)
			},
		},
		{
			// A (user, password) pair given as auth: requests' auth=("u",
			// "x"), an auth tuple or array in any language.
			id:       "auth-pair",
			re:       lazyRegexp(`(?i)auth[a-z_]*[ \t]*[=:][ \t]*[(\[][ \t]*["'][^"'\n]+["'][ \t]*,[ \t]*(?:"([^"\n]+)"|'([^'\n]+)')[ \t]*[)\]]`),
			keywords: []string{"auth=(", "auth = (", "auth=[", "auth = [", "auth: [", "auth:(", "auth: (", "auth_tuple", "basic_auth="},
			keep:     keepFlagValue,
		},
		{
			// Function arguments and PHP arrays: define('DB_PASSWORD', 'x'),
			// setProperty("api.token", "x").
			id:       "quoted-pair",
			re:       lazyRegexp(`\([ \t]*["'](` + nameRE + `)["'][ \t]*,[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')`),
			from:     2,
			keywords: []string{"(\"", "('", "( \"", "( '"},
			keep:     keepField,
		},
		{
			// <password>x</password> (Maven's settings.xml, NuGet.Config,
			// FileZilla's sitemanager.xml).
			id:       "xml-element",
			re:       lazyRegexp(`<((?:[A-Za-z0-9_-]+:)?` + nameRE + `)>[ \t]*([^<\s][^<\n]{0,500}?)[ \t]*</`),
			from:     2,
			keywords: lowerWords(),
			keep:     keepField,
		},
		{
			// <add key="ClearTextPassword" value="x" /> (NuGet.Config,
			// app.config), <property name="db.password" value="x"/>.
			id:       "xml-key-value",
			re:       lazyRegexp(`\b(?:key|name)=["'](` + nameRE + `)["'][ \t]+value=(?:"([^"\n]*)"|'([^'\n]*)')`),
			from:     2,
			keywords: []string{"value="},
			keep:     keepField,
		},
		{
			// .netrc: machine host login user password SECRET, on one line
			// or several.
			id:       "netrc",
			re:       lazyRegexp(`\b(?:login|account)[ \t\r\n]+\S+[ \t\r\n]+(?:account[ \t\r\n]+\S+[ \t\r\n]+)?password[ \t\r\n]+` + val),
			keywords: []string{"password"},
			keep:     keepFlagValue,
		},
		{
			// Oracle: jdbc:oracle:thin:user/pw@host, sqlplus user/pw@db,
			// user/pw@//host:1521/svc (EZConnect), CONNECT user/pw.
			id: "oracle-user-password",
			re: lazyRegexp(`(?i)(?:jdbc:oracle:[a-z0-9]+:|\b(?:sqlplus|sqlldr|expdp|impdp|exp|imp|rman|dgmgrl|sqlcl|conn|connect)(?:[ \t]+-\S+)*[ \t]+(?:userid=|target=)?["']?)` +
				`[A-Za-z0-9_$#.]+/([^\s@/"']+)|\b[A-Za-z0-9_$#.]+/([^\s@/"':]+)@(?://[A-Za-z0-9.-]+|[A-Za-z0-9.-]+:\d{2,5}[/:][A-Za-z])`),
			keywords: []string{"oracle", "sqlplus", "sqlldr", "expdp", "impdp", " exp ", " imp ", "userid=", "rman", "dgmgrl", "sqlcl", "conn ", "connect ", "@"},
			keep:     keepFlagValue,
		},
		{
			// Provider prefixes gitleaks lacks or matches only next to the
			// provider's name: Google OAuth (ya29., 1//0, GOCSPX-), Doppler
			// (dp.st., dp.ct., …), Stripe webhook secrets (whsec_), and
			// others.
			id: "vendor-prefix",
			re: lazyRegexp(`(?:\b|_)((?:AGE-SECRET-KEY-1|ya29\.|1//0|GOCSPX-|dp\.(?:st|ct|sa|scim|audit|pt)\.|whsec_|dckr_pat_|tskey-[a-z]+-|r8_|gsk_|xai-|lsv2_(?:pt|sk)_|sbp_|sb_secret_|napi_|rnd_|phx_|nfp_|figd_|sq0csp-|k8s-aws-v1\.|amzn\.mws\.|IQoJb3JpZ2lu|FwoGZXIvYXdz|ATBB|oy2|cio|sl\.)[A-Za-z0-9_.+/=-]{16,})`),
			keywords: []string{"age-secret-key-1", "ya29.", "1//0", "gocspx-", "dp.", "whsec_", "dckr_pat_", "tskey-", "r8_", "gsk_", "xai-", "lsv2_", "sbp_", "sb_secret_", "napi_", "rnd_",
				"phx_", "nfp_", "figd_", "sq0csp-", "k8s-aws-v1.", "amzn.mws.", "iqojb3jpz2lu", "fwogzxivyxdz", "atbb", "oy2", "cio", "sl."},
			// The prefix says what it is: only a fake or a word is kept.
			keep: func(_ []string, v string) bool {
				return !generated(v[strings.IndexAny(v, "._-/")+1:])
			},
		},
		{
			// Firebase Cloud Messaging server keys.
			id:       "fcm-server-key",
			re:       lazyRegexp(`\b(AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{60,})`),
			keywords: []string{":apa91b"},
		},
		{
			// Mailgun's private API keys: key- and 32 characters.
			id:       "mailgun-key",
			re:       lazyRegexp(`\b(key-[0-9a-zA-Z]{32})\b`),
			keywords: []string{"key-"},
			keep:     func(_ []string, v string) bool { return !generated(v[4:]) },
		},
		{
			// Telegram bot tokens: the bot's id, a colon, and a hash that
			// starts with AA — bare, or in a /bot<token>/ URL path.
			id:       "telegram-bot-token",
			re:       lazyRegexp(`\b(?:bot)?(\d{6,12}:AA[A-Za-z0-9_-]{30,40})\b`),
			keywords: []string{":aa"},
		},
		{
			// kubeadm bootstrap tokens (abcdef.0123456789abcdef), near
			// their name: "--token", "kubeadm", a TOKEN column.
			id:       "kubeadm-token",
			re:       lazyRegexp(`\b(` + bootstrapTokenRE + `)\b`),
			keywords: []string{"token", "kubeadm", "bootstrap"},
			keep:     func(_ []string, v string) bool { return !hasDigit.MatchString(v) || fake(v) },
		},
		{
			// A secret encoded in base64: a PEM block (LS0tLS1CRUdJTi…),
			// a docker config ({"auths":…}), a JSON credential.
			id:       "base64-secret",
			re:       lazyRegexp(`(?:LS0tLS1|eyJ|ewog|eyAi|ewoi)[A-Za-z0-9+/_-]{36,}={0,2}`),
			keywords: []string{"ls0tls1", "eyj", "ewog", "eyai", "ewoi"},
			keep:     func(_ []string, v string) bool { return !encodedSecret(v) },
		},
		{
			// PuTTY .ppk: the base64 lines after Private-Lines: are the
			// private key.
			id:        "putty-private-lines",
			re:        lazyRegexp(`(?i)Private-Lines:[ \t]*\d+[ \t]*\r?\n((?:[^\S\n]*[A-Za-z0-9+/=]{4,}[ \t]*(?:\r?\n|\z))+)`),
			keywords:  []string{"private-lines"},
			multiline: true,
		},
		{
			id:       "putty-private-mac",
			re:       lazyRegexp(`(?i)Private-MAC:[ \t]*([0-9a-f]{32,})`),
			keywords: []string{"private-mac"},
		},
	}
}

// generated: what follows a provider's prefix is a credential unless it is
// a fake or a word: letters with digits or with both cases.
func generated(v string) bool {
	mixed := strings.ToLower(v) != v && strings.ToUpper(v) != v
	return !fake(v) && hasLetter.MatchString(v) && (hasDigit.MatchString(v) || mixed)
}

// queryStrong: query parameters that hold a secret by their name alone.
var queryStrong = lazyRegexp(`(?i)^(?:sig|signature|x-amz-signature|x-goog-signature|session|sid|sessionid)$`)

// keepFlagValue keeps a flag's value that names no secret: a placeholder,
// a variable, a path to read it from, an empty string, a fake.
func keepFlagValue(_ []string, v string) bool {
	v = strings.Trim(v, `"'`)
	return v == "" || placeholder(v) || fake(v) || strings.HasPrefix(v, "-") ||
		strings.HasPrefix(v, "$") || strings.HasPrefix(v, "env:") || strings.HasPrefix(v, "file:") ||
		strings.HasPrefix(v, "fd:") || v == "stdin" || v == "*" || strings.HasPrefix(v, "/") && strings.Count(v, "/") > 1
}

// printfStdin: printf with a %s format, its arguments, and a pipe into a
// command that reads a password on stdin.
var printfStdin = lazyRegexp(`\bprintf[ \t]+(?:'[^'\n]*%s[^'\n]*'|"[^"\n]*%s[^"\n]*")((?:[ \t]+(?:'[^'\n]*'|"[^"\n]*"|[^\s|'"]+))+)[ \t]*\|[ \t]*(?:sudo[ \t]+)?(?:smbpasswd|passwd|chpasswd|htpasswd|docker[ \t]+login|podman[ \t]+login|helm[ \t]+registry[ \t]+login|sudo[ \t]+-S|[^\n|]*--password-stdin|[^\n|]*--stdin)`)

func scanPrintfStdin(text string) []span {
	var spans []span
	for _, m := range printfStdin.FindAllStringSubmatchIndex(text, -1) {
		for _, t := range lineTokens(text[m[2]:m[3]]) {
			v, s := t.s, m[2]+t.start
			if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
				v, s = v[1:len(v)-1], s+1
			}
			if !keepFlagValue(nil, v) && len(v) >= 4 {
				spans = append(spans, span{s, s + len(v)})
			}
		}
	}
	return spans
}
