package gitcommit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ignore rules follow git's dir.c: parse_path_pattern, match_basename,
// match_pathname and last_matching_pattern_from_list, over the wildmatch
// port. go-git's gitignore matcher is not used: it commits every file below
// the root under an allowlist ("*", "!*/", "!*.go") and disagrees on "/**",
// "src/**/", "foo/**/", "ab[!c]" and "foo//bar".

const (
	patNoDir = 1 << iota
	patEndsWith
	patMustBeDir
	patNegative
)

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	pattern       string // without "!" and the trailing "/"
	base          string // directory of the ignore file, "" or "dir/"
	flags         int
	nowildcardLen int // length of the leading part without glob characters
}

// ignoreList holds patterns lowest priority first: core.excludesFile,
// info/exclude, then each .gitignore from the root down.
type ignoreList []ignorePattern

// simpleLength is the length of p's leading part free of glob characters.
func simpleLength(p string) int {
	for i := 0; i < len(p); i++ {
		if isGlobSpecial(p[i]) {
			return i
		}
	}
	return len(p)
}

func parseIgnorePattern(line, base string) ignorePattern {
	ip := ignorePattern{base: base}
	if strings.HasPrefix(line, "!") {
		ip.flags |= patNegative
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		line = line[:len(line)-1]
		ip.flags |= patMustBeDir
	}
	if !strings.Contains(line, "/") {
		ip.flags |= patNoDir
	}
	ip.nowildcardLen = min(simpleLength(line), len(line))
	if strings.HasPrefix(line, "*") && simpleLength(line[1:]) == len(line)-1 {
		ip.flags |= patEndsWith
	}
	ip.pattern = line
	return ip
}

// trimTrailingSpaces drops unescaped trailing spaces (not tabs), as git's
// trim_trailing_spaces does.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

var utf8BOM = []byte("\xef\xbb\xbf")

// parseIgnoreFile parses one ignore file whose patterns are relative to
// base ("" for the worktree root, else "dir/").
func parseIgnoreFile(b []byte, base string) []ignorePattern {
	b = bytes.TrimPrefix(b, utf8BOM)
	var ps []ignorePattern
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		// git keeps each line as a C string: a NUL ends the pattern.
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		s := trimTrailingSpaces(string(line))
		if s == "" {
			continue // git adds it, and an empty pattern never matches
		}
		ps = append(ps, parseIgnorePattern(s, base))
	}
	return ps
}

func pathNCmpEqual(a, b string, fold bool) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func (ip *ignorePattern) matchBasename(basename string, fold bool) bool {
	p := ip.pattern
	switch {
	case ip.nowildcardLen == len(p):
		return pathNCmpEqual(p, basename, fold)
	case ip.flags&patEndsWith != 0:
		return len(p)-1 <= len(basename) && pathNCmpEqual(p[1:], basename[len(basename)-(len(p)-1):], fold)
	}
	flags := 0
	if fold {
		flags = wmCaseFold
	}
	return wildmatchFlags(p, basename, flags)
}

func (ip *ignorePattern) matchPathname(path string, fold bool) bool {
	p, prefix := ip.pattern, ip.nowildcardLen
	if strings.HasPrefix(p, "/") {
		p = p[1:]
		prefix--
	}
	baselen := len(ip.base)
	if baselen > 0 {
		baselen-- // without its trailing slash
	}
	if len(path) < baselen+1 || (baselen > 0 && path[baselen] != '/') || !pathNCmpEqual(path[:baselen], ip.base[:baselen], fold) {
		return false
	}
	name := path
	if baselen > 0 {
		name = path[baselen+1:]
	}
	if prefix > 0 {
		if prefix > len(name) || !pathNCmpEqual(p[:prefix], name[:prefix], fold) {
			return false
		}
		p, name = p[prefix:], name[prefix:]
		if p == "" && name == "" {
			return true
		}
	}
	flags := wmPathname
	if fold {
		flags |= wmCaseFold
	}
	return wildmatchFlags(p, name, flags)
}

// excluded reports whether path (slash-separated, relative to the root) is
// ignored by the last pattern that matches it. It does not look at parent
// directories: the walk never enters an excluded one.
func (l ignoreList) excluded(path string, isDir, fold bool) bool {
	in, _ := l.decide(path, isDir, fold)
	return in
}

// excludePatterns returns the ignore rules that do not live in the worktree,
// lowest priority first: core.excludesFile (default
// $XDG_CONFIG_HOME/git/ignore; set to "" it names no file, for git as here),
// then info/exclude of the common git dir. go-git reads neither for a linked
// worktree and never the first.
func (r *Repo) excludePatterns(cfg gitConfig) (ignoreList, error) {
	var files []string
	if f := r.excludesFile(cfg); f != "" {
		files = append(files, f)
	}
	files = append(files, filepath.Join(r.commonDir, "info", "exclude"))

	var ps ignoreList
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot use %s as an exclude file (git refuses it too; point core.excludesFile at a readable file): %w", f, err)
		}
		ps = append(ps, parseIgnoreFile(b, "")...)
	}
	return ps, nil
}

// excludesFile is core.excludesFile, else the XDG default; "" for none.
func (r *Repo) excludesFile(cfg gitConfig) string {
	if f := cfg.get("core.excludesFile"); f != "" {
		return r.expandPath(f, r.root)
	} else if cfg.has("core.excludesFile") {
		return "" // git's excludes_file is "", which access() refuses: no file
	} else if x := r.xdgConfigHome(); x != "" {
		return filepath.Join(x, "git", "ignore")
	}
	return ""
}

// readDirIgnore reads dir's .gitignore. Like git (which opens it with
// O_NOFOLLOW), a symlinked .gitignore is not read.
func (r *Repo) readDirIgnore(absDir, base string) []ignorePattern {
	p := filepath.Join(absDir, ".gitignore")
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if b, ok := r.ruleFileFromIndex(base + ".gitignore"); ok {
			return parseIgnoreFile(b, base)
		}
	}
	if err != nil || !fi.Mode().IsRegular() {
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			r.log.Warn("skip symlinked .gitignore, as git does", "file", p)
		}
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		r.log.Warn("skip unreadable .gitignore", "file", p, "err", err)
		return nil
	}
	return parseIgnoreFile(b, base)
}
