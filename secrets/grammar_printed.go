package secrets

import (
	"strings"
)

// Printed credentials: the output of a command that prints one. A command
// prints a credential when it generates one (openssl rand, pwgen, wg
// genkey, secrets.token_urlsafe, rails secret) or when it reads one: a
// verb that reads or prints (get, show, read, access, lookup, output, cat,
// echo, printenv, --decode, -field, --plain, --reveal, config:get) with a
// secret's name among its words (get-secret-value, db_password,
// $DEPLOY_SECRET, ~/.config/x/deploy.token, gopass). Its output's first
// line standing alone is the secret, whatever its shape; in tab-separated
// output (aws … --output text), each generated-looking field.

// generators are words of commands that make a credential.
var generators = []string{"secret-tool lookup", "openssl rand", "rand -", "urandom", "pwgen", "apg ", "makepasswd", "mkpasswd", "genkey", "age-keygen",
	"rails secret", "rake secret", "key:generate", "token_hex", "token_urlsafe", "token_bytes", "randombytes", "securerandom",
	"gen-random", "get_random_secret_key", "crypto rand", "random_bytes", "rand::", "uuid4().hex"}

// readVerbs are the words of a command that read or print what it names.
var readVerbs = map[string]bool{"get": true, "show": true, "read": true, "print": true, "reveal": true, "access": true, "lookup": true,
	"view": true, "output": true, "cat": true, "echo": true, "printenv": true, "decrypt": true, "decode": true, "d": true, "raw": true,
	"plain": true, "field": true, "fields": true, "token": true, "type": true, "more": true, "less": true, "head": true, "tail": true,
	// and those that make a new one and print it
	"reset": true, "generate": true, "regenerate": true, "rotate": true, "issue": true, "create": true, "new": true,
	"find": true, "dump": true}

// printedKeywords find the lines that may be such a command.
var printedKeywords = append([]string{"rand", "pwgen", "apg", "genkey", "keygen", "key:generate", "secret", "token", "pass", "pw", "key",
	"cred", "auth", "get_random"}, foreignKeywords...)

// prompt strips a shell prompt from line: "$ ", "# ", "% ", "> ", "PS>",
// "PS C:\x> ", "❯ ", "➜ ", "user@host:~$ "; ok is false without one.
func prompt(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	for _, p := range []string{"$ ", "# ", "% ", "> ", "❯ ", "➜ ", "λ "} {
		if strings.HasPrefix(t, p) {
			return t[len(p):], true
		}
	}
	if strings.HasPrefix(t, "PS") {
		if i := strings.Index(t, "> "); i >= 0 && i < 80 {
			return t[i+2:], true
		}
	}
	if i := strings.Index(t, "$ "); i > 0 && i < 60 && !strings.ContainsAny(t[:i], " \t") && strings.ContainsAny(t[:i], "@:") {
		return t[i+2:], true // user@host:~/src$ cmd
	}
	return t, false
}

// printsSecret reports whether cmd (a shell command) prints a credential.
func printsSecret(cmd string) bool {
	l := strings.ToLower(cmd)
	if strings.Contains(l, "ssh-keygen") || strings.Contains(l, "uuid") && !strings.Contains(l, "uuid4().hex") {
		return false // a fingerprint, an id
	}
	for _, g := range generators {
		if strings.Contains(l, g) {
			return true
		}
	}
	verb, named := false, false
	for _, w := range strings.FieldsFunc(cmd, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '|' || r == ';' || r == '"' || r == '\'' || r == '=' || r == '<' || r == '>' || r == ','
	}) {
		bare := strings.TrimLeft(w, "-")
		lw := strings.ToLower(bare)
		if readVerbs[lw] || strings.HasPrefix(lw, "get-") || strings.HasPrefix(lw, "print-") || strings.HasPrefix(lw, "show-") ||
			strings.HasPrefix(lw, "find-") || strings.HasPrefix(lw, "read-") || strings.HasPrefix(lw, "dump-") ||
			strings.HasSuffix(lw, ":get") || strings.HasSuffix(lw, ":token") {
			verb = true
		}
		// $DEPLOY_SECRET, ${API_TOKEN}, ~/.config/x/deploy.token, db_password
		name := strings.Trim(bare, "${}()")
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		if fileExt.MatchString(name) && !strings.HasSuffix(lw, ".txt") {
			continue // a source file (token.go) holds code
		}
		name = strings.TrimPrefix(name, ".")
		if _, ok := secretLabel(strings.ReplaceAll(name, ".", "_")); ok && name != "" {
			named = true
		}
	}
	return verb && named
}

func scanPrinted(text, lower string) []span {
	var spans []span
	for _, ls := range lineStarts(text, lower, printedKeywords) {
		le := lineEnd(text, ls)
		cmd, prompted := prompt(text[ls:le])
		if len(cmd) < 3 || len(cmd) > 400 || le >= len(text) {
			continue
		}
		if !prompted && !commandLine(cmd) {
			continue
		}
		if cmd == "" || !printsSecret(cmd) {
			continue
		}
		spans = printedOutput(text, le+1, spans)
	}
	return spans
}

// commandLine: a line without a prompt that reads as a shell command: a
// program's name first, then its words — not a sentence, code or a log.
func commandLine(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 || !programName.MatchString(f[0]) || strings.ContainsAny(line, "{};") || strings.Contains(line, "\":") {
		return false
	}
	for _, t := range f {
		if proseTokens[strings.ToLower(t)] {
			return false
		}
	}
	return true
}

var programName = lazyRegexp(`^(?:sudo|env|[a-z][a-z0-9._+-]*|\.{0,2}/[\w./-]+)$`)

// printedOutput appends the credentials in the output starting at pos:
// its first line standing alone (after comment lines), and the
// generated-looking fields of tab-separated lines, up to the next prompt.
func printedOutput(text string, pos int, spans []span) []span {
	first := true
	for n := 0; n < 12 && pos < len(text); n++ {
		le := lineEnd(text, pos)
		line := text[pos:le]
		t := strings.TrimSpace(line)
		if _, p := prompt(line); p && !strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "$") {
			break
		}
		switch {
		case t == "" && first:
		case strings.HasPrefix(t, "#"):
		case first && !strings.ContainsAny(t, " \t"):
			first = false
			if printedValue(t) {
				s := pos + strings.Index(line, t)
				spans = append(spans, span{s, s + len(t)})
			}
		case labelled(t):
			// New value: x, Password: x — a label and a value that cannot be
			// a word, in what the command printed.
			first = false
			i := strings.LastIndex(line, ": ")
			v := strings.TrimSpace(line[i+2:])
			s := pos + i + 2 + strings.Index(line[i+2:], v)
			spans = append(spans, span{s, s + len(v)})
		case strings.Contains(t, "\t"):
			first = false
			off := pos
			secure := false // SSM's text output: the value follows its type
			for _, f := range strings.Split(line, "\t") {
				v := strings.TrimSpace(f)
				if secure && v != "" && !masked(v) || len(v) >= 16 && randomish(v, 16) && !lookAlike(v) {
					s := off + strings.Index(f, v)
					spans = append(spans, span{s, s + len(v)})
				}
				secure = v == "SecureString"
				off += len(f) + 1
			}
		default:
			first = false
		}
		pos = le + 1
	}
	return spans
}

// labelled: "label: value" with a label of a few words and one value
// that cannot be a word.
func labelled(t string) bool {
	i := strings.LastIndex(t, ": ")
	if i <= 0 || strings.Count(t[:i], " ") > 3 {
		return false
	}
	v := strings.TrimSpace(t[i+2:])
	return v != "" && !strings.ContainsAny(v, " \t") && strongValue(v)
}

// printedValue: a line printed alone that is a value, not a word, a path,
// a placeholder or a command's message.
func printedValue(v string) bool {
	if len(v) < 6 || masked(v) || wordRun(v) || naturalText(v) || keepFlagValue(nil, v) || strings.HasSuffix(v, ":") ||
		publicID.MatchString(v) || sshPublic.MatchString(v) || fileName.MatchString(v) || digestRE.MatchString(v) || encodedText(v) ||
		strings.Contains(v, "(") && strings.Contains(v, ")") {
		return false // a public key, a file, a digest, text, code
	}
	return !strings.Contains(v, "/") || !pathLike(v) || randomish(strings.ReplaceAll(v, "/", ""), 16)
}
