// Package secrets finds credentials in text and replaces them with
// [redacted]. Its rules are gitleaks' published rule set (see gitleaks.go)
// and debussy's own generic rules (generic.go) for the shapes gitleaks
// leaves to context: URL credentials, HTTP auth headers, NAME=value and
// NAME: value with a secret-looking name, --password flags, curl -u,
// private key blocks, JWTs.
//
// Everything debussy writes or sends passes through one Redactor (Default,
// or the one SetDefault installs from the redact_allow config key): state
// files and events as JSON (JSON), prompts, checkpoints, summaries, logs
// and gate output as text (String), the terminal through Writer.
package secrets

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a secret's value.
const Redacted = "[redacted]"

// Budget is the most text one call redacts; the rest of a longer text is
// replaced by a note saying how much was dropped. Redaction is linear
// (Go's regexp is RE2), so this bounds the time one event can take.
const Budget = 32 << 20

// chunkSize is how much text, cut at line ends, one keyword look covers:
// a rule runs only over chunks that contain one of its keywords.
const chunkSize = 4 << 10

// rule is one pattern. Its secret is the capture group group, or with
// group 0 the first non-empty group, or the whole match without groups.
type rule struct {
	id string
	// re compiles on first use: most rules run only where their keywords
	// occur, and compiling all ~300 was most of the CPU of a debussy that
	// prints one line (the agent's `debussy done`).
	re    *lazyRE
	group int
	whole bool // the whole match is the secret, whatever its groups
	// wholeIfNamed: whole when every group of the regexp is named (a
	// gitleaks rule whose groups tag what matched, decided once compiled).
	wholeIfNamed bool
	// from is where the search for a non-empty group starts with group 0
	// (the groups before it are context, such as a name).
	from     int
	entropy  float64     // the secret must carry more bits per character
	keywords []string    // lower case; the rule runs only where one occurs
	kw       []int       // the keywords' indexes in Redactor.keywords
	allow    []allowlist // gitleaks' per-rule allowlists
	// keep, for debussy's own rules, says a candidate is not a secret
	// (a placeholder, a count, code); groups are the match's submatches.
	keep func(groups []string, secret string) bool
	// multiline rules run over the whole text, not chunk by chunk.
	multiline bool
	// scan, when set, finds the rule's secrets instead of re (see scan.go).
	scan func(text string) []span
	// scanL is scan for multi-line scanners given the text lower-cased
	// too (String lowers it once for all).
	scanL func(text, lower string) []span
	// at, when set, says whether the match's value stands where no
	// secret does (code, prose, a file position); whole is the text
	// around it, m's indexes start at base in whole.
	at func(whole string, m []int, base, s, e int) bool
	// named rules match a name holding a keyword, given a value; they
	// run anchored (see findNamed) from lead bytes before the name.
	named    bool
	lead     int
	anchored *lazyRE
}

// Redactor replaces secrets. It is safe for concurrent use.
type Redactor struct {
	rules     []rule
	keywords  []string // every rule's, once
	global    allowlist
	allowLits map[string]bool
	allowREs  []*regexp.Regexp
	// denyLits and denyREs are redact_deny's: always redacted, wherever
	// they occur, whatever the rules and redact_allow say.
	denyLits []string
	denyREs  []*regexp.Regexp
}

// New compiles the rules once, with allow: entries that are not secrets
// (false positives) — a literal, or a regular expression written between
// slashes (/^test-[a-z]+$/). A candidate is kept when it equals a literal
// or a regular expression matches it.
func New(allow []string) (*Redactor, error) { return NewWithDeny(allow, nil) }

// NewWithDeny is New with deny: entries always redacted (redact_deny),
// written as allow's are — a literal, or a regular expression between
// slashes, whose every match is redacted.
func NewWithDeny(allow, deny []string) (*Redactor, error) {
	base, err := compiled()
	if err != nil {
		return nil, err
	}
	r := &Redactor{rules: base.rules, keywords: base.keywords, global: base.global, allowLits: map[string]bool{}}
	for _, d := range deny {
		re, isRE, err := ParseDeny(d)
		if err != nil {
			return nil, err
		}
		if isRE {
			r.denyREs = append(r.denyREs, re)
		} else {
			r.denyLits = append(r.denyLits, d)
		}
	}
	for _, a := range allow {
		re, isRE, err := ParseAllow(a)
		if err != nil {
			return nil, err
		}
		if isRE {
			r.allowREs = append(r.allowREs, re)
		} else {
			r.allowLits[a] = true
		}
	}
	return r, nil
}

// ParseAllow reads one redact_allow entry: a literal, or /regexp/.
func ParseAllow(a string) (re *regexp.Regexp, isRE bool, err error) {
	if a == "" {
		return nil, false, fmt.Errorf("allow entry is empty")
	}
	if len(a) >= 2 && strings.HasPrefix(a, "/") && strings.HasSuffix(a, "/") {
		re, err := regexp.Compile(a[1 : len(a)-1])
		if err != nil {
			return nil, false, fmt.Errorf("allow entry %q: %w", a, err)
		}
		return re, true, nil
	}
	return nil, false, nil
}

// ParseDeny reads one redact_deny entry: a literal, or /regexp/ (one
// that matches the empty string would redact between every byte).
func ParseDeny(d string) (re *regexp.Regexp, isRE bool, err error) {
	if d == "" {
		return nil, false, fmt.Errorf("deny entry is empty")
	}
	re, isRE, err = ParseAllow(d)
	if err != nil {
		return nil, false, fmt.Errorf("deny entry %q: %w", d, errors.Unwrap(err))
	}
	if isRE && re.MatchString("") {
		return nil, false, fmt.Errorf("deny entry %q matches the empty string", d)
	}
	return re, isRE, nil
}

// denied appends the spans of redact_deny's entries in s.
func (r *Redactor) denied(s string, spans []span) []span {
	for _, lit := range r.denyLits {
		for from := 0; ; {
			i := strings.Index(s[from:], lit)
			if i < 0 {
				break
			}
			spans = append(spans, span{from + i, from + i + len(lit)})
			from += i + len(lit)
		}
	}
	for _, re := range r.denyREs {
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[1] > m[0] {
				spans = append(spans, span{m[0], m[1]})
			}
		}
	}
	return spans
}

// compiled holds the rules every Redactor shares, read once per process;
// each rule's regexp compiles on its first use (lazyRE).
var compiled = sync.OnceValues(func() (*Redactor, error) {
	gl, global, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	for i := range gl {
		if gl[i].id == "gitleaks:generic-api-key" {
			gl[i].named = true
			gl[i].at = func(whole string, m []int, base, s, e int) bool { return publicBefore(whole, base+m[0]) }
			// A UUID or a digest under a bare "key" (Idempotency-Key,
			// cache key) is an id; under api_key or a token's name, not.
			gl[i].keep = func(g []string, v string) bool {
				name, _, _ := strings.Cut(g[0], v)
				if strings.HasSuffix(name, "h1:") || strings.Contains(strings.ToLower(name), "public") {
					return true // a go.sum hash, a public key
				}
				n := strings.TrimRight(name, " \t\"'`=:>|?,")
				if n != "" && strings.IndexFunc(n, func(r rune) bool { return r < 128 && !isNameByte(byte(r)) }) < 0 &&
					(otherName.MatchString(n) || notSecretName.MatchString(n) || camelNotSecret.MatchString(n)) {
					return true // secretsmanager:, public_key =
				}
				if strings.ContainsAny(n, " \t") && !secretNamed(n) {
					return true // token id = …: words that name something else
				}
				return (lookAlike(v) || idShape(v) || strings.HasPrefix(v, "-")) && !strong(name)
			}
		}
	}
	own := append(append(append(append(genericRules(), familyRules()...), scanRules()...), positionRules()...), grammarRules()...)
	r := &Redactor{rules: append(own, gl...), global: global}
	for i := range r.rules {
		if ru := &r.rules[i]; ru.named {
			ru.anchored = lazyRegexp(`^(?:` + ru.re.src + `)`)
		}
	}
	index := map[string]int{}
	for i := range r.rules {
		for _, k := range r.rules[i].keywords {
			if _, ok := index[k]; !ok {
				index[k] = len(r.keywords)
				r.keywords = append(r.keywords, k)
			}
			r.rules[i].kw = append(r.rules[i].kw, index[k])
		}
	}
	return r, nil
})

var (
	defaultMu sync.RWMutex
	current   *Redactor
)

// Default is the process's redactor: the one SetDefault installed, else
// one without allow entries.
func Default() *Redactor {
	defaultMu.RLock()
	r := current
	defaultMu.RUnlock()
	if r != nil {
		return r
	}
	r, err := New(nil)
	if err != nil {
		// The rules are embedded and tested; failing here is a build bug.
		panic(err)
	}
	defaultMu.Lock()
	if current == nil {
		current = r
	}
	r = current
	defaultMu.Unlock()
	return r
}

// SetDefault installs r (built from the redact_allow config key) as the
// redactor every writer uses. debussy calls it once, after loading config.
func SetDefault(r *Redactor) {
	defaultMu.Lock()
	current = r
	defaultMu.Unlock()
}

// Redact is Default().String(s).
func Redact(s string) string { return Default().String(s) }

// span is a byte range of the text to replace.
type span struct{ start, end int }

// String returns s with every secret replaced by [redacted].
func (r *Redactor) String(s string) string { return r.redact(s, 0) }

// redact is String; depth counts the encodings (base64, URL-encoding)
// the text was found in.
func (r *Redactor) redact(s string, depth int) string {
	if s == "" {
		return s
	}
	tail := ""
	if len(s) > Budget {
		tail = fmt.Sprintf("\n[redacted: %d bytes beyond the redaction budget]", len(s)-Budget)
		s = s[:Budget]
	}
	spans := r.spansIn(s, depth)
	if len(spans) == 0 {
		return s + tail
	}
	return replace(s, spans) + tail
}

// spansIn are the spans of s to redact; depth counts the encodings s was
// found in.
func (r *Redactor) spansIn(s string, depth int) []span {
	var spans []span
	lower := foldLower(s)
	for i := range r.rules {
		if ru := &r.rules[i]; ru.multiline && ru.hit(lower) {
			if ru.scanL != nil {
				spans = r.scanned(ru, ru.scanL(s, lower), s, 0, spans)
				continue
			}
			spans = r.find(ru, s, 0, spans)
		}
	}
	occ := make([][]int, len(r.keywords))
	pairs := new(bigrams)
	var windows []span
	for start := 0; start < len(s); {
		end := chunkEnd(s, start)
		chunk, lchunk := s[start:end], lower[start:end]
		pairs.fill(lchunk)
		for k, kw := range r.keywords {
			occ[k] = occ[k][:0]
			if !pairs.may(kw) {
				continue
			}
			for from := 0; ; {
				i := strings.Index(lchunk[from:], kw)
				if i < 0 {
					break
				}
				occ[k] = append(occ[k], from+i)
				from += i + len(kw)
			}
		}
		for i := range r.rules {
			ru := &r.rules[i]
			if ru.multiline {
				continue
			}
			if ru.scan != nil {
				if len(ru.kw) == 0 || slices.ContainsFunc(ru.kw, func(k int) bool { return len(occ[k]) > 0 }) {
					spans = r.find(ru, chunk, start, spans)
				}
				continue
			}
			if len(ru.kw) == 0 {
				spans = r.find(ru, chunk, start, spans)
				continue
			}
			// Only windows around the rule's keywords: regexps scan at a
			// few MB/s, keyword search at GB/s.
			windows = windows[:0]
			if ru.anchored != nil {
				spans = r.findNamed(ru, chunk, lchunk, start, occ, spans)
				continue
			}
			for _, k := range ru.kw {
				for _, p := range occ[k] {
					windows = append(windows, widen(chunk, p-window, p+len(r.keywords[k])+window))
				}
			}
			for _, w := range merge(windows) {
				n := len(spans)
				spans = r.find(ru, chunk[w.start:w.end], start+w.start, spans)
				// A match that reaches the window's end may go on past
				// it: search again to the chunk's end.
				if w.end < len(chunk) && len(spans) > n && spans[len(spans)-1].end == start+w.end {
					spans = r.find(ru, chunk[w.start:], start+w.start, spans[:n])
				}
			}
		}
		start = end
	}
	if depth < 2 {
		spans = r.encoded(s, depth, spans)
		spans = r.unescaped(s, depth, spans)
	}
	return r.denied(s, outsideHexdumps(s, spans))
}

// bigrams is the set of byte pairs in a chunk: a keyword whose first or
// last two bytes are not in it is not looked for. Most of the ~330
// keywords are absent from any one chunk, and one pass over the chunk
// costs less than a search for each.
type bigrams [1 << 16 / 64]uint64

func (b *bigrams) fill(s string) {
	*b = bigrams{}
	for i := 0; i+1 < len(s); i++ {
		p := uint16(s[i])<<8 | uint16(s[i+1])
		b[p>>6] |= 1 << (p & 63)
	}
}

func (b *bigrams) has(c0, c1 byte) bool {
	p := uint16(c0)<<8 | uint16(c1)
	return b[p>>6]&(1<<(p&63)) != 0
}

// may reports whether kw may occur in the chunk.
func (b *bigrams) may(kw string) bool {
	n := len(kw)
	return n < 2 || b.has(kw[0], kw[1]) && b.has(kw[n-2], kw[n-1])
}

// window is how far around a keyword a rule's match is looked for.
const window = 256

// widen is the window [start, end) of chunk, moved out to the nearest
// space at either end: a token longer than the window (a JWT, a base64
// blob) is seen whole. Merged windows keep the scan linear.
func widen(chunk string, start, end int) span {
	start, end = max(0, start), min(len(chunk), end)
	for start > 0 && !isSpace(chunk[start-1]) {
		start--
	}
	for end < len(chunk) && !isSpace(chunk[end]) {
		end++
	}
	return span{start, end}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// findNamed is find for a named rule: at each of its keywords, the name
// around it, and if within a few bytes one of = > : | ? , follows, the
// rule's anchored regexp from the name's start to the end of the line.
// The named rules match much of any text (every "key" and "token"); this
// keeps their regexps off all but the few bytes that can match.
func (r *Redactor) findNamed(ru *rule, chunk, lower string, offset int, occ [][]int, spans []span) []span {
	for _, k := range ru.kw {
		klen := len(r.keywords[k])
		for _, p := range occ[k] {
			// Back to the name's start, at most 50 bytes (generic-api-key's
			// bound; secret-field's name matches from any byte).
			ns := p
			for ns > 0 && p-ns < 50 && isNameByte(lower[ns-1]) {
				ns--
			}
			if ns >= 2 && lower[ns-1] == ':' && isNameByte(lower[ns-2]) {
				continue // a link of a:b:c (an ARN's :secret:), not a name
			}
			e := p + klen
			for limit := e + 24; e < len(lower) && e < limit && (isNameByte(lower[e]) || lower[e] >= 0x80 && !strings.HasPrefix(lower[e:], "：") || strings.IndexByte(" \t\"'*`", lower[e]) >= 0); e++ {
			}
			if e >= len(lower) || strings.IndexByte("=>:|?,", lower[e]) < 0 && !strings.HasPrefix(lower[e:], "：") {
				continue
			}
			ws := max(0, ns-ru.lead)
			we := lineEnd(lower, e)
			if rest := strings.TrimSpace(lower[e+1 : we]); (rest == "" || yamlBlock(rest) || hereStart(rest)) && we < len(lower) {
				// <token>\n    value\n</token>: the value is on the next line;
				// a here-string's (@"⏎x⏎"@) or triple quote's on the next lines.
				we = lineEnd(lower, we+1)
				if hereStart(rest) && we < len(lower) {
					we = lineEnd(lower, we+1)
				}
			}
			spans = r.match(ru, ru.anchored.FindStringSubmatchIndex(chunk[ws:we]), chunk[ws:we], offset+ws, spans, chunk, ws)
		}
	}
	return spans
}

// hereStart: a literal whose value starts on the next line: PowerShell's
// here-string, Python's triple quotes.
func hereStart(s string) bool {
	s = strings.TrimLeft(s, ":=> \t")
	return s == `@"` || s == "@'" || s == `"""` || s == "'''"
}

// yamlBlock: a YAML block scalar's indicator (|, >-, |+): its value is
// on the next lines.
func yamlBlock(s string) bool {
	return len(s) <= 2 && (s[0] == '|' || s[0] == '>') && (len(s) == 1 || s[1] == '+' || s[1] == '-')
}

// lineEnd is the index of the first line end in s from i, or len(s).
func lineEnd(s string, i int) int {
	if n := strings.IndexByte(s[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(s)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// asciiLower lower-cases ASCII letters only, so offsets in the result are
// offsets in s (strings.ToLower may change a non-ASCII rune's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// chunkEnd is the end of the chunk starting at start: past the first line
// end after chunkSize bytes, or the end of s.
func chunkEnd(s string, start int) int {
	if len(s)-start <= chunkSize {
		return len(s)
	}
	nl := strings.IndexByte(s[start+chunkSize:], '\n')
	if nl < 0 {
		return len(s)
	}
	return start + chunkSize + nl + 1
}

// merge sorts spans and joins those that overlap or touch, in place.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp.start <= last.end {
			last.end = max(last.end, sp.end)
		} else {
			out = append(out, sp)
		}
	}
	return out
}

// replace puts [redacted] over the union of spans.
func replace(s string, spans []span) string {
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for _, sp := range merge(spans) {
		b.WriteString(s[pos:sp.start])
		b.WriteString(Redacted)
		pos = sp.end
	}
	b.WriteString(s[pos:])
	return b.String()
}
