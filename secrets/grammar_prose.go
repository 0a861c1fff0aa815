package secrets

import (
	"strings"
	"unicode"
)

// Prose in any language: a secret's name, up to three words that qualify
// it (des Dienstkontos, temporária, for the bot), a copula (is, ist,
// lautet, est, é, jest, är, on…) and the value — or the value right after
// the name (Используйте пароль x для входа, das Kennwort x nach…). Words
// alone are never taken: the value must look generated (strongValue).

// copulas link a name to its value in prose.
var copulas = map[string]bool{
	"is": true, "was": true, "are": true, "be": true, "ist": true, "lautet": true, "war": true, "est": true, "était": true,
	"es": true, "era": true, "é": true, "è": true, "jest": true, "je": true, "är": true, "er": true, "on": true, "adalah": true,
	"là": true, "->": true, "→": true, "—": true, "–": true, "это": true, "—это": true, "ялвяется": true, "является": true,
	"est-il": true, "is:": true, "ist:": true, "vale": true, "equals": true, "será": true, "sera": true, "wird": true,
}

// strongValue: a value in prose that cannot be a word: generated-looking
// or mixed as passwords are, not an id, a digest, a path, a version or
// code.
func strongValue(v string) bool {
	if len(v) < 6 || masked(v) || codeValue(v) || version.MatchString(v) || filePos.MatchString(v) || naturalText(v) ||
		fileName.MatchString(v) || strings.Contains(v, "/") && pathLike(v) || strings.HasPrefix(v, "$") || strings.ContainsAny(v, "()[]{}<>") ||
		strings.Contains(strings.TrimRight(v, "="), "=") {
		return false
	}
	if lookAlike(v) && !hexKey.MatchString(v) {
		return false
	}
	return strongMix(v) || randomish(v, 8) || hexKey.MatchString(v)
}

// rootTokenKind is the kind of secret a word of prose names, 0 for none:
// in English (password, token, apiKey) or another language (пароль,
// Kennwort, Zugangsschlüssel, salasanasi).
func rootTokenKind(w string) rootKind {
	f := foldLower(strings.Trim(w, ".,;:!?\"'`*()[]«»„“”"))
	if f == "" {
		return 0
	}
	for _, lw := range labelWords(f) {
		if k := englishRoot(lw); k != 0 && !otherPass(lw) {
			return k
		}
	}
	if h, ok := foreignRoot(f, 0); ok {
		return h.kind
	}
	return 0
}

// proseLine appends the values of a line of prose (ls is its offset).
func proseLine(line string, ls int, spans []span) []span {
	if len(line) > 600 || !mayHoldValue(line) {
		return spans
	}
	{
		toks := lineTokens(line)
		for i, t := range toks {
			kind := rootTokenKind(t.s)
			if kind == 0 || !proseWord(t.s) || i > 0 && strings.EqualFold(strings.Trim(toks[i-1].s, ".,;:"), "public") ||
				strings.Contains(strings.ToLower(t.s), "public") {
				continue // a name in code (key_length), a public key
			}
			for j, skipped := i+1, 0; j < len(toks) && skipped <= 3; j++ {
				w := toks[j].s
				lw := strings.ToLower(w)
				if copulas[lw] || copulas[strings.TrimRight(lw, ":")] {
					if j+1 < len(toks) {
						spans = proseCandidate(toks[j+1], kind, ls, spans)
					}
					break
				}
				if skipped == 0 && j == i+1 {
					if n := len(spans); len(proseCandidate(toks[j], kind, ls, spans)) > n {
						spans = proseCandidate(toks[j], kind, ls, spans)
						break
					}
				}
				if !proseWord(w) {
					break
				}
				skipped++
			}
		}
	}
	return spans
}

// mayHoldValue: a cheap look for what strongValue takes: a run of six
// or more non-blank bytes with a letter and a digit or a symbol.
func mayHoldValue(line string) bool {
	run, letter, other := 0, false, false
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ' ' || line[i] == '\t' {
			if run >= 6 && letter && other {
				return true
			}
			run, letter, other = 0, false, false
			continue
		}
		run++
		switch c := line[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		default:
			other = true
		}
	}
	return false
}

// proseWord: a word of prose between a name and its copula.
func proseWord(w string) bool {
	w = strings.Trim(w, ".,;:!?\"'()")
	if w == "" || len(w) > 24 {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && r != '-' && r != '\'' {
			return false
		}
	}
	return true
}

// proseCandidate appends t, trimmed of quotes and a sentence's end, when
// it is a strong value.
func proseCandidate(t token, kind rootKind, offset int, spans []span) []span {
	v := t.s
	s := t.start
	for len(v) > 0 && strings.IndexByte("\"'`*«„“", v[0]) >= 0 {
		v, s = v[1:], s+1
	}
	v = strings.TrimRight(v, ".,;:!?)\"'`*»”")
	// A key's name takes only what is mixed as keys are: a digest after
	// "cache key" is the key's, not a secret.
	if strongValue(v) && (kind != rootKey || strongMix(v) || randomish(v, 12) && !hexRE.MatchString(v)) {
		spans = append(spans, span{offset + s, offset + s + len(v)})
	}
	return spans
}
