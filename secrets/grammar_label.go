package secrets

import (
	"slices"
	"strings"
	"unicode"
)

// Label lines: words that name a secret, then a separator, then the value
// on the same line — "Enter the password to proceed: x", "Password (leave
// blank to generate): x", "AWS Secret Access Key [None]: x", "API key
// provided: x.", "Пароль администратора: x", "Database password ....... x".
// The words between the name and the separator may be anything but a word
// that makes the phrase name something else (secretLabel). A label that is
// a bare identifier (DB_PASSWORD: x) is secret-field's.

// rootKeywords find the lines that may hold a secret's name (folded): no
// keyword holds another (passwort is found by pass).
var rootKeywords = minimalKeywords(func() []string {
	kws := []string{"pass", "pw", "secret", "token", "key", "cred", "psk", "pin", "puk", "jwt", "mnemonic", "authtok"}
	for _, r := range foreignStems {
		kws = append(kws, r.stem)
	}
	return kws
}())

// minimalKeywords drops the keywords that hold another: whatever finds
// the shorter finds them too.
func minimalKeywords(kws []string) []string {
	var out []string
	for i, k := range kws {
		held := false
		for j, o := range kws {
			if i != j && len(o) < len(k) && strings.Contains(k, o) || i > j && o == k {
				held = true
				break
			}
		}
		if !held {
			out = append(out, k)
		}
	}
	return out
}

// hasNonASCII: s holds a byte of a multi-byte rune.
func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// lineStarts are the starts of the lines of text holding one of kws in
// lower, each once, in order.
func lineStarts(text, lower string, kws []string) []int {
	var starts []int
	ascii := !hasNonASCII(lower)
	for _, kw := range kws {
		if ascii && kw[0] >= 0x80 {
			continue
		}
		for from := 0; ; {
			i := strings.Index(lower[from:], kw)
			if i < 0 {
				break
			}
			p := from + i
			ls := strings.LastIndexByte(text[:p], '\n') + 1
			starts = append(starts, ls)
			from = lineEnd(text, p)
			if from >= len(text) {
				break
			}
		}
	}
	if len(starts) < 2 {
		return starts
	}
	slices.Sort(starts)
	out := starts[:1]
	for _, s := range starts[1:] {
		if s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

// scanNameLines runs the grammars that start at a secret's name — label
// lines, config lines, prose, quoted values in messages, JSON and YAML
// parents, markup around it — over each line holding a root, found once
// for all of them (config lines also at auth and community).
func scanNameLines(text, lower string) []span {
	var spans, windows []span
	parentsDone := -1
	roots := lineStarts(text, lower, rootKeywords)
	for _, ls := range roots {
		le := lineEnd(text, ls)
		line := text[ls:le]
		if strings.Contains(line, ": ") || strings.Contains(line, ":\t") || strings.Contains(line, "：") || strings.Contains(line, " ...") {
			if s, e, ok := labelValue(line); ok {
				spans = append(spans, span{ls + s, ls + e})
			}
		}
		spans = configLine(line, lower[ls:le], ls, spans)
		spans = proseLine(line, ls, spans)
		spans = quotedAfterNameIn(line, ls, spans)
		if ls >= parentsDone {
			var end int
			spans, end = parentsIn(text, lower, ls, le, spans)
			parentsDone = max(parentsDone, end)
		}
		// Markup around the line: two lines above, four below.
		s, e := ls, le
		for n := 0; n < 2 && s > 0; n++ {
			s = strings.LastIndexByte(text[:s-1], '\n') + 1
		}
		for n := 0; n < 4 && e < len(text); n++ {
			e = lineEnd(text, e+1)
		}
		windows = append(windows, span{s, e})
	}
	for _, w := range merge(windows) {
		if strings.Contains(text[w.start:w.end], "<") {
			spans = markupValues(text, parseMarkup(text, w.start, w.end), spans)
		}
	}
	k := 0
	for _, ls := range lineStarts(text, lower, configOnlyKeywords) {
		for k < len(roots) && roots[k] < ls {
			k++
		}
		if k < len(roots) && roots[k] == ls {
			continue // done above
		}
		le := lineEnd(text, ls)
		spans = configLine(text[ls:le], lower[ls:le], ls, spans)
	}
	return spans
}

// labelSeps are the separators a label line's value may follow: ": ",
// "：", a run of leader dots; each with where the value may start.
func labelSeps(line string) []span {
	var seps []span
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t'):
			seps = append(seps, span{i, i + 1})
		case strings.HasPrefix(line[i:], "："):
			seps = append(seps, span{i, i + len("：")})
		case line[i] == '.' && i+2 < len(line) && line[i+1] == '.' && line[i+2] == '.' && i > 0 && line[i-1] == ' ':
			j := i
			for j < len(line) && (line[j] == '.' || line[j] == ' ') {
				j++
			}
			if j < len(line) && line[j] == ':' {
				j++
			}
			seps = append(seps, span{i, j})
			i = j - 1
		}
	}
	return seps
}

// labelValue finds a label line's value: its offsets in line. The label
// is the text before a separator, from the line's start or, in a message
// holding several (Error code: 401 - {'message': 'Incorrect API key
// provided: x.'}), from the last quote or bracket before it.
func labelValue(line string) (int, int, bool) {
	seps := labelSeps(line)
	for k := len(seps) - 1; k >= 0; k-- {
		if s, e, ok := labelValueAt(line, seps[k].start, seps[k].end); ok {
			return s, e, true
		}
	}
	return 0, 0, false
}

func labelValueAt(line string, sep, vs int) (int, int, bool) {
	if sep <= 0 {
		return 0, 0, false
	}
	from := 0
	if i := strings.LastIndex(line[:sep], ": "); i >= 0 {
		from = i + 2 // the separator before: Error code: 401 - …
	}
	for _, q := range []byte{'\'', '"'} {
		// Inside a quoted message: the label starts after its quote (an
		// apostrophe between letters, dell'amministratore, is none).
		n, last := 0, -1
		for i := 0; i < sep; i++ {
			if line[i] == q && !(q == '\'' && i > 0 && i+1 < len(line) && isLetter(line[i-1]) && (isLetter(line[i+1]) || line[i+1] >= 0x80)) {
				n, last = n+1, i
			}
		}
		if n%2 == 1 && last+1 > from {
			from = last + 1
		}
	}
	label := strings.TrimSpace(strings.TrimRight(line[from:sep], ". \t"))
	if q := strings.IndexAny(label, `"'`); q >= 0 && strings.LastIndexAny(label, `"'`) == len(label)-1 && strings.TrimSpace(label[:q]) == "" {
		return 0, 0, false // "key": a JSON or YAML key, secret-field's
	}
	// A bare identifier is secret-field's (it judges code, types, prose).
	if label == "" || isIdentifier(label) || len(label) > 120 || strings.Count(label, " ") > 12 ||
		strings.ContainsAny(label, "={};,\"") || strings.HasPrefix(label, "$ ") || strings.Contains(label, " | ") {
		return 0, 0, false
	}
	for vs < len(line) && (line[vs] == ' ' || line[vs] == '\t') {
		vs++
	}
	if vs >= len(line) {
		return 0, 0, false
	}
	ve := vs
	quote := byte(0)
	if c := line[vs]; c == '"' || c == '\'' || c == '`' {
		quote = c
		vs++
		ve = vs
		for ve < len(line) && line[ve] != quote {
			ve++
		}
		if ve >= len(line) {
			return 0, 0, false
		}
	} else {
		for ve < len(line) && !unicode.IsSpace(rune(line[ve])) && line[ve] != '\'' && line[ve] != '"' {
			ve++
		}
		for ve > vs && strings.IndexByte(".,;)", line[ve-1]) >= 0 {
			ve--
		}
	}
	v := line[vs:ve]
	if quote == 0 {
		// The rest of the line is nothing, or a sentence's or a string's end.
		rest := strings.TrimSpace(line[ve:])
		if rest != "" && !strings.ContainsAny(rest[:1], ".,;)'\"]}") {
			return 0, 0, false
		}
	} else if strings.ContainsAny(v, " \t") {
		return 0, 0, false
	}
	if len(v) < 4 || len(v) < 6 && allDigits.MatchString(v) || callOpen.MatchString(label) {
		return 0, 0, false // too short, a count; code: a call's named argument
	}
	kind, ok := secretLabel(label)
	if !ok {
		return 0, 0, false
	}
	if allDigits.MatchString(v) {
		if kind != rootPassword || len(v) < 6 {
			return 0, 0, false
		}
	} else if !plausibleSecret(v, kind) {
		return 0, 0, false
	}
	return vs, ve, true
}

// callOpen: a call in a label (usernamePassword(credentialsId).
var callOpen = lazyRegexp(`[\w.]\(|[\w)\]]\[|\(\[`)

// isIdentifier: a name in code or config: letters, digits, _ . - only.
func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return s != ""
}
