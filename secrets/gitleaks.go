package secrets

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The rules file is gitleaks' default config, byte for byte, from the
// module github.com/zricethezav/gitleaks/v8 at GitleaksVersion (MIT, see
// gitleaks.LICENSE). It is loaded as data rather than through gitleaks'
// config package, which pulls viper, sprig and zerolog into the binary.
// scripts/update-gitleaks-rules replaces it and updates the two constants;
// a test checks the checksum so a hand edit is caught.
//
//go:embed gitleaks.toml
var gitleaksTOML []byte

const (
	GitleaksVersion = "v8.30.1"
	gitleaksSHA256  = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"
)

type tomlAllowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
}

type tomlConfig struct {
	Allowlist tomlAllowlist `toml:"allowlist"`
	Rules     []struct {
		ID          string          `toml:"id"`
		Regex       string          `toml:"regex"`
		Path        string          `toml:"path"`
		SecretGroup int             `toml:"secretGroup"`
		Entropy     float64         `toml:"entropy"`
		Keywords    []string        `toml:"keywords"`
		Allowlists  []tomlAllowlist `toml:"allowlists"`
	} `toml:"rules"`
}

// allowlist is one of gitleaks' allowlists, reduced to what applies to
// text without a file path.
type allowlist struct {
	target    string // "secret" (default), "match" or "line"
	regexes   []*lazyRE
	stopWords []string
}

// allowed reports whether the allowlist keeps a finding.
func (a allowlist) allowed(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	for _, re := range a.regexes {
		if re.MatchString(target) {
			return true
		}
	}
	lower := strings.ToLower(secret)
	for _, w := range a.stopWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// loadGitleaks reads the embedded rules; their regexps compile on first
// use (lazyRE), and TestRegexpsCompile compiles every one. Rules scoped to
// a file path are left out: redaction sees text, not files. So are
// allowlists that only apply with a path (a path list alone, or condition
// AND with one).
func loadGitleaks() (rules []rule, global allowlist, err error) {
	var cfg tomlConfig
	if err := toml.Unmarshal(gitleaksTOML, &cfg); err != nil {
		return nil, allowlist{}, fmt.Errorf("load gitleaks rules: %w", err)
	}
	readList := func(t tomlAllowlist) (allowlist, bool) {
		if len(t.Paths) > 0 && (strings.EqualFold(t.Condition, "AND") || len(t.Regexes)+len(t.StopWords) == 0) {
			return allowlist{}, false
		}
		a := allowlist{target: t.RegexTarget}
		for _, w := range t.StopWords {
			a.stopWords = append(a.stopWords, strings.ToLower(w))
		}
		for _, s := range t.Regexes {
			a.regexes = append(a.regexes, lazyRegexp(s))
		}
		return a, true
	}
	global, _ = readList(cfg.Allowlist)
	for _, tr := range cfg.Rules {
		if tr.Regex == "" || tr.Path != "" {
			continue
		}
		r := rule{id: "gitleaks:" + tr.ID, re: lazyRegexp(tr.Regex), group: tr.SecretGroup, entropy: tr.Entropy}
		// Named groups tag what matched (jwt-base64's alg, kid, …): with
		// only those, the secret is the whole match, not the tag.
		r.wholeIfNamed = tr.SecretGroup == 0
		for _, k := range tr.Keywords {
			r.keywords = append(r.keywords, strings.ToLower(k))
		}
		for _, ta := range tr.Allowlists {
			if a, ok := readList(ta); ok {
				r.allow = append(r.allow, a)
			}
		}
		rules = append(rules, r)
	}
	return rules, global, nil
}

// shannonEntropy is gitleaks' measure: bits per character of s.
func shannonEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := make(map[rune]int, 64)
	for _, c := range s {
		counts[c]++
	}
	n := float64(len(s))
	var e float64
	for _, c := range counts {
		p := float64(c) / n
		e -= p * math.Log2(p)
	}
	return e
}

// namedOnly reports whether re has groups and every one is named.
func namedOnly(re *regexp.Regexp) bool {
	names := re.SubexpNames()[1:]
	for _, n := range names {
		if n == "" {
			return false
		}
	}
	return len(names) > 0
}
