package gitcommit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// gitConfig holds the values of every config file git would read, the last
// one read winning, as git does. Keys are "section.key" or
// "section.subsection.key" with section and key lower-cased and the
// subsection as written (lower-cased for the legacy "[section.sub]" form,
// as git does).
type gitConfig struct {
	values map[string]string
	bare   map[string]bool     // set without "=" ("[core] fileMode"): true as a bool
	all    map[string][]string // every value of a multi-valued key, when non-nil (remote URLs)
}

// has reports whether key is set at all, even to "".
func (c gitConfig) has(key string) bool {
	_, ok := c.values[canonicalKey(key)]
	return ok
}

func (c gitConfig) get(key string) string { return c.values[canonicalKey(key)] }

// canonicalKey lower-cases the section and the variable name of key, and
// keeps a subsection's case.
func canonicalKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 || first == last {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// bool reads a git boolean; def when unset or unparsable.
func (c gitConfig) bool(key string, def bool) bool {
	k := canonicalKey(key)
	v, ok := c.values[k]
	if !ok {
		return def
	}
	if c.bare[k] {
		return true // a bare key ("fileMode") means true
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	case "", "false", "no", "off", "0":
		return false
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		return n != 0
	}
	return def
}

func (c gitConfig) set(key, value string, bare bool) {
	c.values[key] = value
	if c.all != nil {
		c.all[key] = append(c.all[key], value)
	}
	if bare {
		c.bare[key] = true
	} else {
		delete(c.bare, key)
	}
}

// maxIncludeDepth matches git's own guard against include cycles.
const maxIncludeDepth = 10

// ConfigError is a config file git itself would refuse to read: every git
// command fails on it, and so does a commit by debussy, rather than fall
// back to another author or drop core.excludesFile.
type ConfigError struct {
	File string
	Line int // 0 when the file could not be read at all
	Err  error
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("bad config line %d in file %s (git refuses it too; fix or remove that line)", e.Line, e.File)
	}
	return fmt.Sprintf("read git config %s: %v", e.File, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// loadConfig is readConfig for callers that only need values; a file that
// cannot be read is logged. CommitAll uses readConfig and refuses instead.
func (r *Repo) loadConfig() gitConfig {
	c, err := r.readConfig()
	if err != nil {
		r.log.Warn("read git config", "err", err)
	}
	return c
}

// readConfig reads system, global, repository and worktree config in git's
// order of increasing priority, then GIT_CONFIG_COUNT/KEY_n/VALUE_n,
// following include.path and includeIf "gitdir:", "gitdir/i:" and
// "onbranch:". Files are parsed as git parses them (a UTF-8 BOM skipped, the
// legacy "[section.sub]" header accepted), which go-git's gcfg cannot.
func (r *Repo) readConfig() (gitConfig, error) {
	return r.readConfigWith(&includeState{})
}

// includeState is what includeIf conditions need beyond the file: the
// remote URLs for "hasconfig:remote.*.url:", read once per readConfig.
type includeState struct {
	collecting bool     // this is the pass that collects the URLs: every hasconfig include is followed
	urls       []string // nil until needed
	loaded     bool
}

func (r *Repo) readConfigWith(st *includeState) (gitConfig, error) {
	c := gitConfig{values: map[string]string{}, bare: map[string]bool{}}
	if st.collecting {
		c.all = map[string][]string{}
	}
	var errs []error
	for _, f := range r.configFiles() {
		if err := r.readConfigFileWith(c, f, 0, st); err != nil {
			errs = append(errs, err)
		}
	}
	if c.bool("extensions.worktreeConfig", false) {
		if err := r.readConfigFileWith(c, filepath.Join(r.gitDir, "config.worktree"), 0, st); err != nil {
			errs = append(errs, err)
		}
	}
	if n, err := strconv.Atoi(r.getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := range n {
			k := r.getenv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			if k != "" {
				c.set(canonicalKey(k), r.getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i)), false)
			}
		}
	}
	return c, errors.Join(errs...)
}

func (r *Repo) configFiles() []string {
	var files []string
	if r.getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if sys := r.getenv("GIT_CONFIG_SYSTEM"); sys != "" {
			files = append(files, sys)
		} else {
			files = append(files, "/etc/gitconfig")
		}
	}
	if g := r.getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		// git reads the XDG file first, so ~/.gitconfig overrides it.
		if x := r.xdgConfigHome(); x != "" {
			files = append(files, filepath.Join(x, "git", "config"))
		}
		if home := r.getenv("HOME"); home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(r.commonDir, "config"))
	return files
}

// xdgConfigHome is $XDG_CONFIG_HOME, else $HOME/.config, as git resolves it.
func (r *Repo) xdgConfigHome() string {
	if x := r.getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if home := r.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// readConfigFile applies path's values to c. A missing file is not an
// error (git skips it); one git cannot parse is, naming file and line.
func (r *Repo) readConfigFile(c gitConfig, path string, depth int) error {
	return r.readConfigFileWith(c, path, depth, &includeState{})
}

func (r *Repo) readConfigFileWith(c gitConfig, path string, depth int, st *includeState) error {
	if path == os.DevNull {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return &ConfigError{File: path, Err: err}
	}
	// A file's values apply only once it parsed completely, so a half-read
	// file leaves nothing behind. An include is applied at its position, as
	// if its content were written there.
	type item struct {
		key, value string
		bare       bool
		include    string
	}
	var items []item
	var condErr error
	err = parseConfig(b, func(key, value string, bare bool) {
		section, rest, _ := strings.Cut(key, ".")
		last := strings.LastIndexByte(rest, '.')
		switch {
		case key == "include.path" && !bare:
			items = append(items, item{include: r.expandPath(value, filepath.Dir(path))})
		case section == "includeif" && last >= 0 && rest[last+1:] == "path" && !bare:
			ok, err := r.includeIfMatches(rest[:last], path, st)
			if err != nil && condErr == nil {
				condErr = err
			}
			if ok {
				items = append(items, item{include: r.expandPath(value, filepath.Dir(path))})
			}
		default:
			items = append(items, item{key: key, value: value, bare: bare})
		}
	})
	if err != nil {
		var pe *configParseError
		if errors.As(err, &pe) {
			return &ConfigError{File: path, Line: pe.line, Err: err}
		}
		return &ConfigError{File: path, Err: err}
	}
	if condErr != nil {
		return &ConfigError{File: path, Err: condErr}
	}
	var errs []error
	for _, it := range items {
		switch {
		case it.include == "":
			c.set(it.key, it.value, it.bare)
		case depth < 0: // includes not followed (checkFormat, as git's read_repository_format)
		case depth < maxIncludeDepth:
			if err := r.readConfigFileWith(c, it.include, depth+1, st); err != nil {
				errs = append(errs, err)
			}
		default:
			errs = append(errs, &ConfigError{File: path, Err: fmt.Errorf("include nested deeper than %d levels (a cycle?)", maxIncludeDepth)})
		}
	}
	return errors.Join(errs...)
}

type configParseError struct{ line int }

func (e *configParseError) Error() string { return fmt.Sprintf("bad config line %d", e.line) }

// parseConfig is git's config.c parser (git_parse_source, get_base_var,
// get_extended_base_var, get_value, parse_value). It calls fn with the full
// variable name and its value; bare is a variable without "=".
func parseConfig(b []byte, fn func(key, value string, bare bool)) error {
	p := &configParser{b: bytes.TrimPrefix(b, utf8BOM), line: 1}
	var section string // "core" or "remote.origin"; "" before the first header
	comment := false
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return nil
			}
			comment = false
			continue
		}
		if comment || isConfigSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			s, ok := p.baseVar()
			if !ok || s == "" {
				return p.err()
			}
			section = s
			continue
		}
		if !isASCIIAlpha(c) {
			return p.err()
		}
		name := []byte{lower(c)}
		for {
			c = p.next()
			if p.eof || !isKeyChar(c) {
				break
			}
			name = append(name, lower(c))
		}
		for c == ' ' || c == '\t' {
			c = p.next()
		}
		key := string(name) // before any header: git reads it, and no lookup finds it
		if section != "" {
			key = section + "." + key
		}
		if c == '\n' {
			fn(key, "", true)
			continue
		}
		if c != '=' {
			return p.err()
		}
		v, ok := p.value()
		if !ok {
			return p.err()
		}
		fn(key, v, false)
	}
}

type configParser struct {
	b    []byte
	pos  int
	line int
	eof  bool
}

// next returns the next byte with "\r\n" read as "\n"; at the end it
// returns '\n' and sets eof.
func (p *configParser) next() byte {
	if p.pos >= len(p.b) {
		if !p.eof {
			p.eof = true
		}
		return '\n'
	}
	c := p.b[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.b) && p.b[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// err reports the line being read (git counts the line a newline ends).
func (p *configParser) err() error {
	line := p.line
	if p.pos > 0 && p.pos <= len(p.b) && p.b[p.pos-1] == '\n' {
		line--
	}
	return &configParseError{line: max(line, 1)}
}

func (p *configParser) baseVar() (string, bool) {
	var name []byte
	for {
		c := p.next()
		if p.eof {
			return "", false
		}
		if c == ']' {
			return string(name), true
		}
		if isConfigSpace(c) {
			return p.extendedBaseVar(string(name), c)
		}
		if !isKeyChar(c) && c != '.' {
			return "", false
		}
		name = append(name, lower(c))
	}
}

func (p *configParser) extendedBaseVar(name string, c byte) (string, bool) {
	for {
		if c == '\n' {
			return "", false
		}
		c = p.next()
		if !isConfigSpace(c) {
			break
		}
	}
	if c != '"' {
		return "", false
	}
	sub := []byte{}
	for {
		c = p.next()
		if c == '\n' {
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			c = p.next()
			if c == '\n' {
				return "", false
			}
		}
		sub = append(sub, c)
	}
	if p.next() != ']' {
		return "", false
	}
	return name + "." + string(sub), true
}

func (p *configParser) value() (string, bool) {
	var v []byte
	quote, comment, space := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			c = p.next()
			switch c {
			case '\n':
				if p.eof {
					return "", false
				}
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isASCIIAlpha(c byte) bool  { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isKeyChar(c byte) bool     { return isASCIIAlpha(c) || (c >= '0' && c <= '9') || c == '-' }
func lower(c byte) byte         { return wmToLower(c) }

// expandPath resolves a config path value: "~/" is $HOME, a relative path is
// relative to base.
func (r *Repo) expandPath(p, base string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(r.getenv("HOME"), rest)
	}
	if !filepath.IsAbs(p) && base != "" {
		return filepath.Join(base, p)
	}
	return p
}

// includeIfMatches is git's include_condition for "gitdir:", "gitdir/i:",
// "onbranch:" and "hasconfig:remote.*.url:". file is the config file
// holding the condition ("./" patterns are relative to it). Any other
// condition is an error: git evaluates conditions it does not know as false,
// but a newer git may know it, and a skipped include can hold the
// core.excludesFile that keeps secrets out.
func (r *Repo) includeIfMatches(cond, file string, st *includeState) (bool, error) {
	switch {
	case strings.HasPrefix(cond, "gitdir:"):
		return r.includeByGitdir(strings.TrimPrefix(cond, "gitdir:"), file, false), nil
	case strings.HasPrefix(cond, "gitdir/i:"):
		return r.includeByGitdir(strings.TrimPrefix(cond, "gitdir/i:"), file, true), nil
	case strings.HasPrefix(cond, "onbranch:"):
		return r.includeByBranch(strings.TrimPrefix(cond, "onbranch:")), nil
	case strings.HasPrefix(cond, "hasconfig:remote.*.url:"):
		if st.collecting {
			return true, nil
		}
		if !st.loaded {
			st.urls, st.loaded = r.remoteURLs(), true
		}
		pat := strings.TrimPrefix(cond, "hasconfig:remote.*.url:")
		for _, u := range st.urls {
			if wildmatchFlags(pat, u, wmPathname) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("includeIf condition %q is not one debussy knows (gitdir:, gitdir/i:, onbranch:, hasconfig:remote.*.url:); "+
		"remove that includeIf section or write its settings without the condition", cond)
}

// remoteURLs collects every remote.<name>.url in the whole config, following
// hasconfig includes unconditionally, as git's populate_remote_urls does.
func (r *Repo) remoteURLs() []string {
	c, _ := r.readConfigWith(&includeState{collecting: true})
	var urls []string
	for k, vs := range c.all {
		if strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".url") {
			urls = append(urls, vs...)
		}
	}
	return urls
}

// includeByGitdir matches the git directory, real path first, then as
// given, as git's include_by_gitdir does.
func (r *Repo) includeByGitdir(pat, file string, fold bool) bool {
	prefix := 0
	switch {
	case strings.HasPrefix(pat, "~/"):
		pat = filepath.ToSlash(r.getenv("HOME")) + pat[1:]
	case strings.HasPrefix(pat, "./"):
		dir := filepath.Dir(file)
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		dir = filepath.ToSlash(dir)
		pat = dir + pat[1:]
		prefix = len(dir) + 1
	case !strings.HasPrefix(pat, "/"):
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	flags := wmPathname
	if fold {
		flags |= wmCaseFold
	}
	var texts []string
	if real, err := filepath.EvalSymlinks(r.gitDir); err == nil {
		texts = append(texts, filepath.ToSlash(real))
	}
	texts = append(texts, filepath.ToSlash(r.gitDir))
	for _, text := range texts {
		if prefix > 0 {
			if len(text) < prefix || !pathNCmpEqual(pat[:prefix], text[:prefix], fold) {
				continue
			}
		}
		if wildmatchFlags(pat[prefix:], text[prefix:], flags) {
			return true
		}
	}
	return false
}

// includeByBranch matches the branch HEAD points to, born or not.
func (r *Repo) includeByBranch(pat string) bool {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return false
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
	if !ok {
		return false
	}
	branch, ok := strings.CutPrefix(strings.TrimSpace(ref), "refs/heads/")
	if !ok {
		return false
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	return wildmatchFlags(pat, branch, wmPathname)
}

// signature resolves author and committer as `git commit` would: the
// GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL,DATE} variables, then author.* /
// committer.*, then user.*, then $EMAIL; each missing name or email falls
// back to "debussy <debussy@localhost>" where git would refuse to commit.
// A date git cannot parse is an error, as in git.
func (r *Repo) signature(c gitConfig) (author, committer object.Signature, err error) {
	loc, now := time.Local, r.now()
	if z := posixZone(r.getenv); z != nil {
		loc, now = z, now.In(z)
	}
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	when := func(envVar string) time.Time {
		v := r.getenv(envVar)
		if v == "" {
			return now
		}
		t, perr := parseGitDate(v, loc)
		if perr != nil {
			err = errors.Join(err, fmt.Errorf("%s=%q: %w", envVar, v, perr))
			return now
		}
		return t
	}
	author = object.Signature{
		Name:  pick(r.getenv("GIT_AUTHOR_NAME"), c.get("author.name"), c.get("user.name"), "debussy"),
		Email: pick(r.getenv("GIT_AUTHOR_EMAIL"), c.get("author.email"), c.get("user.email"), r.getenv("EMAIL"), "debussy@localhost"),
		When:  when("GIT_AUTHOR_DATE"),
	}
	committer = object.Signature{
		Name:  pick(r.getenv("GIT_COMMITTER_NAME"), c.get("committer.name"), c.get("user.name"), "debussy"),
		Email: pick(r.getenv("GIT_COMMITTER_EMAIL"), c.get("committer.email"), c.get("user.email"), r.getenv("EMAIL"), "debussy@localhost"),
		When:  when("GIT_COMMITTER_DATE"),
	}
	for _, s := range []*object.Signature{&author, &committer} {
		s.Name, s.Email = withoutCrud(s.Name), withoutCrud(s.Email)
	}
	return author, committer, err
}

// withoutCrud is git's strbuf_addstr_without_crud (ident.c): spaces,
// control characters and .,:;<>"\' trimmed from both ends, and newlines,
// '<' and '>' dropped inside (they delimit an identity line).
func withoutCrud(s string) string {
	crud := func(c byte) bool { return c <= ' ' || strings.IndexByte(".,:;<>\"\\'", c) >= 0 }
	for len(s) > 0 && crud(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && crud(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return strings.NewReplacer("\n", "", "<", "", ">", "").Replace(s)
}

// parseGitDate reads the date formats git documents for GIT_AUTHOR_DATE:
// git's internal "<unix seconds> <±hhmm>" (optionally "@"-prefixed), RFC
// 2822 and ISO 8601 (a missing zone is local time).
func parseGitDate(s string, local *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	raw := strings.TrimPrefix(s, "@")
	secs, zone, hasZone := strings.Cut(raw, " ")
	if n, err := strconv.ParseInt(secs, 10, 64); err == nil && (strings.HasPrefix(s, "@") || hasZone) {
		loc := local
		if hasZone {
			l, ok := parseZone(strings.TrimSpace(zone))
			if !ok {
				return time.Time{}, errors.New("invalid date format")
			}
			loc = l
		}
		return time.Unix(n, 0).In(loc), nil
	}
	layouts := []string{
		time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 -0700", "Mon Jan 2 15:04:05 2006 -0700",
		"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 Z07:00", "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05 -0700",
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	for _, l := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006.01.02 15:04:05", "Mon, 2 Jan 2006 15:04:05"} {
		if t, err := time.ParseInLocation(l, s, local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("invalid date format")
}

func parseZone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	h, err1 := strconv.Atoi(z[1:3])
	m, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	off := (h*60 + m) * 60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), true
}
