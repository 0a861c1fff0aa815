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
	id    string
	re    *regexp.Regexp
	group int
	// from is where the search for a non-empty group starts with group 0
	// (the groups before it are context, such as a name).
	from     int
	entropy  float64     // the secret must carry more bits per character
	keywords []string    // lower case; the rule runs only where one occurs
	allow    []allowlist // gitleaks' per-rule allowlists
	// keep, for debussy's own rules, says a candidate is not a secret
	// (a placeholder, a count, code); groups are the match's submatches.
	keep func(groups []string, secret string) bool
	// multiline rules run over the whole text, not chunk by chunk.
	multiline bool
}

// Redactor replaces secrets. It is safe for concurrent use.
type Redactor struct {
	rules     []rule
	global    allowlist
	allowLits map[string]bool
	allowREs  []*regexp.Regexp
}

// New compiles the rules once, with allow: entries that are not secrets
// (false positives) — a literal, or a regular expression written between
// slashes (/^test-[a-z]+$/). A candidate is kept when it equals a literal
// or a regular expression matches it.
func New(allow []string) (*Redactor, error) {
	base, err := compiled()
	if err != nil {
		return nil, err
	}
	r := &Redactor{rules: base.rules, global: base.global, allowLits: map[string]bool{}}
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

// compiled holds the rules every Redactor shares: compiling ~230 regexps
// takes milliseconds, done once per process.
var compiled = sync.OnceValues(func() (*Redactor, error) {
	gl, global, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	return &Redactor{rules: append(genericRules(), gl...), global: global}, nil
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
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	tail := ""
	if len(s) > Budget {
		tail = fmt.Sprintf("\n[redacted: %d bytes beyond the redaction budget]", len(s)-Budget)
		s = s[:Budget]
	}
	var spans []span
	lower := strings.ToLower(s)
	for i := range r.rules {
		if r.rules[i].multiline && r.rules[i].hit(lower) {
			spans = r.find(&r.rules[i], s, 0, spans)
		}
	}
	for start := 0; start < len(s); {
		end := chunkEnd(s, start)
		chunk, lchunk := s[start:end], lower[start:end]
		for i := range r.rules {
			ru := &r.rules[i]
			if ru.multiline || !ru.hit(lchunk) {
				continue
			}
			if len(ru.keywords) == 0 || len(chunk) <= lineScan {
				spans = r.find(ru, chunk, start, spans)
				continue
			}
			// Only the lines holding a keyword: regexps scan at a few
			// MB/s, keyword search at GB/s.
			for _, l := range keywordLines(lchunk, ru.keywords) {
				spans = r.find(ru, chunk[l.start:l.end], start+l.start, spans)
			}
		}
		start = end
	}
	if len(spans) == 0 {
		return s + tail
	}
	return replace(s, spans) + tail
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

// lineScan: a chunk longer than this is searched line by line.
const lineScan = 512

// keywordLines are the lines of lower holding one of keywords, in order,
// adjacent lines merged.
func keywordLines(lower string, keywords []string) []span {
	var lines []span
	for _, k := range keywords {
		for from := 0; ; {
			i := strings.Index(lower[from:], k)
			if i < 0 {
				break
			}
			i += from
			ls := strings.LastIndexByte(lower[:i], '\n') + 1
			le := strings.IndexByte(lower[i:], '\n')
			if le < 0 {
				le = len(lower)
			} else {
				le += i + 1
			}
			lines = append(lines, span{ls, le})
			from = le
		}
	}
	if len(lines) < 2 {
		return lines
	}
	slices.SortFunc(lines, func(a, b span) int { return a.start - b.start })
	out := lines[:1]
	for _, l := range lines[1:] {
		if last := &out[len(out)-1]; l.start <= last.end {
			last.end = max(last.end, l.end)
		} else {
			out = append(out, l)
		}
	}
	return out
}

func (ru *rule) hit(lower string) bool {
	if len(ru.keywords) == 0 {
		return true
	}
	for _, k := range ru.keywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// find appends the spans of ru's secrets in text, which starts at offset
// in the whole.
func (r *Redactor) find(ru *rule, text string, offset int, spans []span) []span {
	for _, m := range ru.re.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[0], m[1]
		if ngroups := len(m)/2 - 1; ngroups > 0 {
			g := ru.group
			if g == 0 {
				for i := max(1, ru.from); i <= ngroups; i++ {
					if m[2*i] >= 0 && m[2*i+1] > m[2*i] {
						g = i
						break
					}
				}
			}
			if g == 0 || g > ngroups || m[2*g] < 0 {
				continue
			}
			start, end = m[2*g], m[2*g+1]
		}
		if start == end {
			continue
		}
		secret, match := text[start:end], text[m[0]:m[1]]
		if ru.entropy > 0 && shannonEntropy(secret) <= ru.entropy {
			continue
		}
		if ru.keep != nil && ru.keep(submatches(text, m), secret) {
			continue
		}
		if r.allowed(ru, secret, match, lineAround(text, m[0], m[1])) {
			continue
		}
		spans = append(spans, span{offset + start, offset + end})
	}
	return spans
}

func (r *Redactor) allowed(ru *rule, secret, match, line string) bool {
	if r.allowLits[secret] || r.allowLits[match] {
		return true
	}
	for _, re := range r.allowREs {
		if re.MatchString(secret) {
			return true
		}
	}
	if r.global.allowed(secret, match, line) {
		return true
	}
	for _, a := range ru.allow {
		if a.allowed(secret, match, line) {
			return true
		}
	}
	return false
}

func submatches(text string, m []int) []string {
	out := make([]string, len(m)/2)
	for i := range out {
		if m[2*i] >= 0 {
			out[i] = text[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

// lineAround is the line or lines holding text[start:end].
func lineAround(text string, start, end int) string {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		return text[ls:]
	}
	return text[ls : end+le]
}

// replace puts [redacted] over the union of spans.
func replace(s string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start <= cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		b.WriteString(s[pos:cur.start])
		b.WriteString(Redacted)
		pos = cur.end
	}
	b.WriteString(s[pos:])
	return b.String()
}
