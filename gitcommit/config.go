package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// gitConfig holds config values, the last one read winning, as git does.
// Keys are "section.key" or "section.subsection.key" with section and key
// lower-cased and the subsection as written.
type gitConfig struct {
	values map[string]string
	bare   map[string]bool // set without "=" ("[core] fileMode"): true as a bool
}

func newConfig() gitConfig { return gitConfig{values: map[string]string{}, bare: map[string]bool{}} }

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
		return true
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

// readConfig is the configuration git reads here: `git config --list`
// (every scope, includes, GIT_CONFIG_* variables, git's own parser and its
// refusal of a broken file), or without git the system, global and
// repository files as go-git parses them.
func (r *Repo) readConfig(ctx context.Context) (gitConfig, error) {
	if r.gitBin == "" {
		return r.readConfigFallback()
	}
	out, err := r.git(ctx, gitRun{}, "config", "-z", "--list")
	if err != nil {
		return gitConfig{}, fmt.Errorf("read config: %w", err)
	}
	c := newConfig()
	for _, kv := range bytes.Split(out, []byte{0}) {
		if len(kv) == 0 {
			continue
		}
		k, v, found := bytes.Cut(kv, []byte{'\n'})
		key := canonicalKey(string(k))
		c.values[key] = string(v)
		if found {
			delete(c.bare, key)
		} else {
			c.bare[key] = true
		}
	}
	return c, nil
}

// readConfigFallback reads, without git, the files git would read first
// to last (no includes: a documented difference of the go-git mode).
func (r *Repo) readConfigFallback() (gitConfig, error) {
	var files []string
	if r.getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if xdg := r.xdgConfigHome(); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if g := r.getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else if h := r.getenv("HOME"); h != "" {
		files = append(files, filepath.Join(h, ".gitconfig"))
	}
	files = append(files, filepath.Join(r.commonDir, "config"))
	return readConfigFiles(files...)
}

// xdgConfigHome is where git looks for its user-wide config, ignore and
// attributes files (under git/): $XDG_CONFIG_HOME, or ~/.config; "" with
// neither set.
func (r *Repo) xdgConfigHome() string {
	if xdg := r.getenv("XDG_CONFIG_HOME"); xdg != "" {
		return xdg
	}
	if home := r.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config")
	}
	return ""
}

// readConfigFiles parses files with go-git's config decoder; a missing one
// is skipped.
func readConfigFiles(files ...string) (gitConfig, error) {
	c := newConfig()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err != nil {
			return gitConfig{}, fmt.Errorf("read config %s: %w", f, err)
		}
		cfg := format.New()
		if err := format.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
			return gitConfig{}, fmt.Errorf("read config %s: %w", f, err)
		}
		for _, s := range cfg.Sections {
			sec := strings.ToLower(s.Name)
			for _, o := range s.Options {
				c.values[sec+"."+strings.ToLower(o.Key)] = o.Value
			}
			for _, sub := range s.Subsections {
				for _, o := range sub.Options {
					c.values[sec+"."+sub.Name+"."+strings.ToLower(o.Key)] = o.Value
				}
			}
		}
	}
	return c, nil
}

// expandPath is git's interpolation of a path-valued config: a leading ~/
// is $HOME, a relative path is taken from base.
func (r *Repo) expandPath(p, base string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(r.getenv("HOME"), rest)
	}
	return absFrom(base, p)
}

// getSub is section.sub.key; ok says it is set.
func (c gitConfig) getSub(section, sub, key string) (string, bool) {
	v, ok := c.values[strings.ToLower(section)+"."+sub+"."+strings.ToLower(key)]
	return v, ok
}
