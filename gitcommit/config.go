package gitcommit

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/gcfg"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// gitConfig holds the plain "section.key" values (no subsection) of every
// config file git would read, the last one read winning, as git does.
type gitConfig struct {
	values map[string]string
}

func (c gitConfig) get(key string) string { return c.values[strings.ToLower(key)] }

// bool reads a git boolean; def when unset or unparsable.
func (c gitConfig) bool(key string, def bool) bool {
	v, ok := c.values[strings.ToLower(key)]
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on", "1": // a bare key ("fileMode") means true
		return true
	case "false", "no", "off", "0":
		return false
	}
	return def
}

// maxIncludeDepth matches git's own guard against include cycles.
const maxIncludeDepth = 10

// loadConfig reads system, global and repository config in git's order of
// increasing priority, following include.path and includeIf "gitdir:".
// A file git could read but gcfg cannot is skipped with a warning rather than
// blocking the commit: the worst outcome is the fallback author.
func (r *Repo) loadConfig() gitConfig {
	c := gitConfig{values: map[string]string{}}
	for _, f := range r.configFiles() {
		r.readConfigFile(c, f, 0)
	}
	return c
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

func (r *Repo) readConfigFile(c gitConfig, path string, depth int) {
	if path == os.DevNull {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			r.log.Warn("skip git config", "file", path, "err", err)
		}
		return
	}
	// Apply a file's values only once it parsed completely, so a half-read
	// file leaves nothing behind. An include is applied at its position, as if
	// its content were written there.
	type item struct{ key, value, include string }
	var items []item
	cb := func(section, subsection, key, value string, blank bool) error {
		if key == "" {
			return nil
		}
		section, key = strings.ToLower(section), strings.ToLower(key)
		if blank {
			value = ""
		}
		switch {
		case section == "include" && subsection == "" && key == "path":
			items = append(items, item{include: r.expandPath(value, filepath.Dir(path))})
		case section == "includeif" && key == "path" && r.includeIfMatches(subsection, filepath.Dir(path)):
			items = append(items, item{include: r.expandPath(value, filepath.Dir(path))})
		case subsection == "":
			items = append(items, item{key: section + "." + key, value: value})
		default:
			// filter.<driver>.clean, gpg.ssh.program: the subsection keeps
			// its case, as in git (see getSub).
			items = append(items, item{key: section + "." + subsection + "." + key, value: value})
		}
		return nil
	}
	if err := gcfg.ReadWithCallback(bytes.NewReader(b), cb); err != nil {
		r.log.Warn("skip unparsable git config", "file", path, "err", err)
		return
	}
	for _, it := range items {
		switch {
		case it.include == "":
			c.values[it.key] = it.value
		case depth < maxIncludeDepth:
			r.readConfigFile(c, it.include, depth+1)
		}
	}
}

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

// includeIfMatches implements the "gitdir:" and "gitdir/i:" conditions;
// other conditions (onbranch:, hasconfig:) are treated as false.
func (r *Repo) includeIfMatches(cond, base string) bool {
	pat, fold := "", false
	switch {
	case strings.HasPrefix(cond, "gitdir:"):
		pat = strings.TrimPrefix(cond, "gitdir:")
	case strings.HasPrefix(cond, "gitdir/i:"):
		pat, fold = strings.TrimPrefix(cond, "gitdir/i:"), true
	default:
		return false
	}
	switch {
	case strings.HasPrefix(pat, "~/"):
		pat = filepath.ToSlash(filepath.Join(r.getenv("HOME"), pat[2:])) + suffixSlash(pat)
	case strings.HasPrefix(pat, "./"):
		pat = filepath.ToSlash(filepath.Join(base, pat[2:])) + suffixSlash(pat)
	case !strings.HasPrefix(pat, "/"):
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	re, err := regexp.Compile(globRegexp(pat, fold))
	if err != nil {
		return false
	}
	dirs := []string{filepath.ToSlash(r.gitDir)}
	if real, err := filepath.EvalSymlinks(r.gitDir); err == nil {
		dirs = append(dirs, filepath.ToSlash(real))
	}
	for _, d := range dirs {
		if re.MatchString(d) {
			return true
		}
	}
	return false
}

func suffixSlash(p string) string {
	if strings.HasSuffix(p, "/") {
		return "/"
	}
	return ""
}

// globRegexp translates the wildmatch subset used in includeIf patterns:
// "**/" any leading directories, "/**" anything below, "*" and "?" within a
// path component, [...] classes.
func globRegexp(pat string, fold bool) string {
	var b strings.Builder
	if fold {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch ch := pat[i]; {
		case strings.HasPrefix(pat[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pat[i:], "**"):
			b.WriteString(".*")
			i++
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		case ch == '[':
			end := strings.IndexByte(pat[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// signature resolves author and committer as `git commit` would: the
// GIT_{AUTHOR,COMMITTER}_{NAME,EMAIL} variables, then author.* / committer.*,
// then user.*, then $EMAIL; each missing field falls back to
// "debussy <debussy@localhost>" where git would refuse to commit.
func (r *Repo) signature(c gitConfig) (author, committer object.Signature) {
	when := r.now()
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	author = object.Signature{
		Name:  pick(r.getenv("GIT_AUTHOR_NAME"), c.get("author.name"), c.get("user.name"), "debussy"),
		Email: pick(r.getenv("GIT_AUTHOR_EMAIL"), c.get("author.email"), c.get("user.email"), r.getenv("EMAIL"), "debussy@localhost"),
		When:  when,
	}
	committer = object.Signature{
		Name:  pick(r.getenv("GIT_COMMITTER_NAME"), c.get("committer.name"), c.get("user.name"), "debussy"),
		Email: pick(r.getenv("GIT_COMMITTER_EMAIL"), c.get("committer.email"), c.get("user.email"), r.getenv("EMAIL"), "debussy@localhost"),
		When:  when,
	}
	clean := strings.NewReplacer("<", "", ">", "", "\n", " ")
	for _, s := range []*object.Signature{&author, &committer} {
		s.Name, s.Email = clean.Replace(s.Name), clean.Replace(s.Email)
	}
	return author, committer
}
