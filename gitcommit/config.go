package gitcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// order of increasing priority, then GIT_CONFIG_COUNT/KEY_n/VALUE_n and
// GIT_CONFIG_PARAMETERS (git -c),
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
	urlErr     error // the collecting pass failed (a URL set inside a hasconfig include)
	inHas      int   // collecting: depth of hasconfig includes being read
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
	if err := r.readEnvConfig(c); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// readEnvConfig applies the config git takes from the environment, after
// the files: GIT_CONFIG_COUNT/KEY_n/VALUE_n, then GIT_CONFIG_PARAMETERS
// (git -c).
func (r *Repo) readEnvConfig(c gitConfig) error {
	if n, err := strconv.Atoi(r.getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := range n {
			k := r.getenv("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			if k != "" {
				c.set(canonicalKey(k), r.getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i)), false)
			}
		}
	}
	env := r.getenv("GIT_CONFIG_PARAMETERS")
	if env == "" {
		return nil
	}
	keys, values, err := configParameters(env)
	if err != nil {
		return &ConfigError{File: "GIT_CONFIG_PARAMETERS", Err: err}
	}
	for i, k := range keys {
		if values[i] == nil {
			c.set(k, "", true)
		} else {
			c.set(k, *values[i], false)
		}
	}
	return nil
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
		hasconfig  bool // include of an includeIf "hasconfig:..."
	}
	var items []item
	var condErr error
	err = parseConfig(b, func(key, value string, bare bool) {
		section, rest, _ := strings.Cut(key, ".")
		last := strings.LastIndexByte(rest, '.')
		isInclude := key == "include.path" || (section == "includeif" && last >= 0 && rest[last+1:] == "path")
		switch {
		case isInclude && bare && condErr == nil:
			condErr = fmt.Errorf("missing value for '%s' (git refuses it too; give it a path or remove it)", key)
		case key == "include.path" && !bare:
			items = append(items, item{include: r.expandPath(value, filepath.Dir(path))})
		case section == "includeif" && last >= 0 && rest[last+1:] == "path" && !bare:
			ok, err := r.includeIfMatches(rest[:last], path, st)
			if err != nil && condErr == nil {
				condErr = err
			}
			if ok {
				items = append(items, item{include: r.expandPath(value, filepath.Dir(path)), hasconfig: strings.HasPrefix(rest[:last], "hasconfig:")})
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
		case it.include == "" && st.inHas > 0 && strings.HasPrefix(it.key, "remote.") && strings.HasSuffix(it.key, ".url"):
			errs = append(errs, &ConfigError{File: path, Err: errors.New("remote URLs cannot be configured in file directly or indirectly included by " +
				"includeIf.hasconfig:remote.*.url (git refuses it too; move the URL out of that file)")})
		case it.include == "":
			c.set(it.key, it.value, it.bare)
		case depth < 0: // includes not followed (checkFormat, as git's read_repository_format)
		case depth < maxIncludeDepth:
			if it.hasconfig && st.collecting {
				st.inHas++
			}
			if err := r.readConfigFileWith(c, it.include, depth+1, st); err != nil {
				errs = append(errs, err)
			}
			if it.hasconfig && st.collecting {
				st.inHas--
			}
		default:
			errs = append(errs, &ConfigError{File: path, Err: fmt.Errorf("include nested deeper than %d levels (a cycle?)", maxIncludeDepth)})
		}
	}
	return errors.Join(errs...)
}

type configParseError struct{ line int }

func (e *configParseError) Error() string { return fmt.Sprintf("bad config line %d", e.line) }

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
			st.urls, st.urlErr = r.remoteURLs()
			st.loaded = true
		}
		if st.urlErr != nil {
			return false, st.urlErr
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
func (r *Repo) remoteURLs() ([]string, error) {
	c, err := r.readConfigWith(&includeState{collecting: true})
	var ce *ConfigError
	for _, e := range joinedErrors(err) {
		if errors.As(e, &ce) && strings.Contains(ce.Err.Error(), "remote URLs cannot be configured") {
			return nil, ce.Err
		}
	}
	var urls []string
	for k, vs := range c.all {
		if strings.HasPrefix(k, "remote.") && strings.HasSuffix(k, ".url") {
			urls = append(urls, vs...)
		}
	}
	return urls, nil
}

// joinedErrors flattens errors.Join trees.
func joinedErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, joinedErrors(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
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

// includeByBranch matches the branch HEAD points to, born or not, at the end
// of a chain of symbolic refs as git's resolve_ref_unsafe follows it.
func (r *Repo) includeByBranch(pat string) bool {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return false
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
	if !ok {
		return false
	}
	ref = strings.TrimSpace(ref)
	for range 5 { // git's SYMREF_MAXDEPTH
		b, err := os.ReadFile(filepath.Join(r.commonDir, filepath.FromSlash(ref)))
		next, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref:")
		if err != nil || !ok {
			break
		}
		ref = strings.TrimSpace(next)
	}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return false
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	return wildmatchFlags(pat, branch, wmPathname)
}
