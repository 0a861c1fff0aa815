package secrets

import (
	"regexp"
	"sync"
)

// lazyRE is a regexp compiled on its first use, as cmd/go's
// internal/lazyregexp does. Compiling the package's ~60 regexps at init
// and every rule's (~300, most of them gitleaks') on the first line a
// process wrote was most of the CPU of a debussy that prints one line: the
// agent's `debussy done`, `progress`, `handoff`, run many times a session.
// `debussy --version` ×100, both builds in one run: 117 ms of CPU a run
// before, 50 ms after (the -race build: 355 and 170). A rule runs only
// where one of its keywords occurs, so most are never compiled in a run.
// Safe for concurrent use.
type lazyRE struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// allLazy is every lazyRE made, so TestRegexpsCompile compiles each one:
// a pattern that cannot compile used to fail every test of the package at
// init (regexp.MustCompile); lazy, it would panic only where a run first
// used it.
var allLazy struct {
	sync.Mutex
	res []*lazyRE
}

func lazyRegexp(src string) *lazyRE {
	l := &lazyRE{src: src}
	allLazy.Lock()
	allLazy.res = append(allLazy.res, l)
	allLazy.Unlock()
	return l
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *lazyRE) Match(b []byte) bool                  { return l.get().Match(b) }
func (l *lazyRE) MatchString(s string) bool            { return l.get().MatchString(s) }
func (l *lazyRE) FindAllIndex(b []byte, n int) [][]int { return l.get().FindAllIndex(b, n) }
func (l *lazyRE) FindStringSubmatchIndex(s string) []int {
	return l.get().FindStringSubmatchIndex(s)
}
func (l *lazyRE) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return l.get().FindAllStringSubmatchIndex(s, n)
}
func (l *lazyRE) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
