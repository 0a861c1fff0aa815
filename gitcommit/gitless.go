package gitcommit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Without git, go-git stages and commits, and only where its answer is
// provably git's: a repository with anything go-git does not read as git
// does (below) is refused, naming it, before any work (Preflight) and at
// every commit (the agent may have added it). The checks are conservative:
// what they cannot tell is refused.

// installGit is every git-less refusal's way out.
const installGit = "install git (where git is installed, git makes every commit, as `git add -A && git commit`)"

func gitless(feature, detail string) error {
	return &UnsupportedError{Feature: feature, Detail: detail, WayOut: installGit}
}

// commitHooks are the hooks `git commit` (and the index it writes) runs.
var commitHooks = []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change", "reference-transaction"}

// gitlessConfig refuses, without git, the configuration and the files
// outside the worktree that go-git does not honour as git does.
func (r *Repo) gitlessConfig(cfg gitConfig) []error {
	if r.gitBin != "" {
		return nil
	}
	var errs []error
	for _, name := range commitHooks {
		if p, ok := r.hookPath(cfg, name); ok {
			errs = append(errs, gitless("the "+name+" hook", p))
		}
	}
	if cfg.bool("commit.gpgSign", false) {
		errs = append(errs, gitless("commit signing (commit.gpgSign)", ""))
	}
	if enc := cfg.get("i18n.commitEncoding"); enc != "" && !strings.EqualFold(strings.ReplaceAll(enc, "-", ""), "utf8") {
		errs = append(errs, gitless("i18n.commitEncoding="+enc, ""))
	}
	switch m := strings.ToLower(cfg.get("commit.cleanup")); m {
	case "", "default", "whitespace", "verbatim", "scissors":
	default:
		errs = append(errs, gitless("commit.cleanup="+m, ""))
	}
	for key, def := range map[string]bool{"core.fileMode": true, "core.symlinks": true, "core.ignoreCase": false,
		"core.precomposeUnicode": false, "core.sparseCheckout": false, "core.splitIndex": false, "core.ignoreStat": false,
		"core.protectNTFS": true, "core.protectHFS": false} {
		if cfg.has(key) && cfg.bool(key, def) != def {
			errs = append(errs, gitless(fmt.Sprintf("%s=%s", key, cfg.get(key)), "not git's default"))
		}
	}
	if v := strings.ToLower(cfg.get("core.autocrlf")); cfg.has("core.autocrlf") && v != "false" && v != "0" && v != "no" && v != "off" {
		errs = append(errs, gitless("core.autocrlf="+v, "line-ending conversion"))
	}
	for _, key := range []string{"core.worktree", "core.attributesFile"} {
		if cfg.get(key) != "" {
			errs = append(errs, gitless(key, cfg.get(key)))
		}
	}
	if v := cfg.get("core.excludesFile"); v != "" {
		errs = append(errs, gitless("core.excludesFile", v))
	}
	for k := range cfg.values {
		switch {
		case k == "include.path" || strings.HasPrefix(k, "includeif."):
			errs = append(errs, gitless("config includes ("+k+")", "go-git's config reader does not follow them"))
		case k == "extensions.worktreeconfig" && cfg.bool(k, false):
			errs = append(errs, gitless("extensions.worktreeConfig", ""))
		}
	}
	// Ignore and attribute files git reads that go-git does not.
	xdg := r.xdgConfigHome()
	files := map[string]string{
		filepath.Join(r.commonDir, "info", "exclude"):    "ignore rules in .git/info/exclude",
		filepath.Join(r.commonDir, "info", "attributes"): "attributes in .git/info/attributes",
	}
	if xdg != "" {
		if !cfg.has("core.excludesFile") {
			files[filepath.Join(xdg, "git", "ignore")] = "ignore rules in the user's git/ignore"
		}
		if !cfg.has("core.attributesFile") {
			files[filepath.Join(xdg, "git", "attributes")] = "attributes in the user's git/attributes"
		}
	}
	for f, what := range files {
		if hasRules(f) {
			errs = append(errs, gitless(what, f))
		}
	}
	return errs
}

// hasRules says a gitignore-syntax file holds a line that is neither blank
// nor a comment.
func hasRules(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// stagingAttributes are the attributes that change what `git add` stores.
var stagingAttributes = map[string]bool{"text": true, "eol": true, "crlf": true, "filter": true, "ident": true,
	"working-tree-encoding": true, "binary": true}

// gitlessTree refuses, without git, what in the worktree, the index or
// HEAD go-git would stage otherwise than git: attributes that change the
// stored bytes, ignore patterns beyond the plain forms go-git matches as
// git does, submodules and nested repositories, and index entries with
// flags go-git does not keep.
func (r *Repo) gitlessTree(indexPath string, headTree plumbing.Hash) error {
	var errs []error
	if _, err := os.Lstat(filepath.Join(r.root, ".gitmodules")); err == nil {
		errs = append(errs, gitless("submodules", ".gitmodules"))
	}
	err := filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: git add would say, go-git skips it
		}
		rel, _ := filepath.Rel(r.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
				return nil
			case d.Name() == ".git" || rel == stateDir:
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				errs = append(errs, gitless("a nested repository", rel))
				return filepath.SkipDir
			}
			return nil
		}
		switch d.Name() {
		case ".gitattributes":
			if attr := stagingAttribute(p); attr != "" {
				errs = append(errs, gitless("the "+attr+" attribute", rel))
			}
		case ".gitignore":
			if pat := unplainPattern(p); pat != "" {
				errs = append(errs, gitless(fmt.Sprintf("the ignore pattern %q", pat), rel))
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if links, err := r.hasGitlink(headTree); err != nil {
		errs = append(errs, err)
	} else if links != "" {
		errs = append(errs, gitless("submodules", links))
	}
	if flag, p := indexFlags(indexPath); flag != "" {
		errs = append(errs, gitless(flag, p))
	}
	return errors.Join(errs...)
}

// stagingAttribute names the first attribute in a .gitattributes file
// that changes what git stores (or a macro, which could), "" if none.
func stagingAttribute(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if strings.HasPrefix(f[0], "[attr]") {
			return "macro " + f[0]
		}
		for _, a := range f[1:] {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-!"), "=")
			if stagingAttributes[name] {
				return name
			}
		}
	}
	return ""
}

// unplainPattern returns the first pattern of a .gitignore that is not
// plain (letters and the like, "*", "?", "/"), "" if all are: negations,
// "**", character classes, escapes and trailing spaces are matched by
// go-git otherwise than by git in some forms, and so refused in all.
func unplainPattern(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, "!") || strings.Contains(l, "**") || strings.ContainsAny(l, "[\\") ||
			strings.Contains(l, "//") || strings.TrimRight(l, " \t") != l {
			return l
		}
	}
	return ""
}

// hasGitlink names a gitlink (a submodule) in tree, "" if there is none.
func (r *Repo) hasGitlink(tree plumbing.Hash) (string, error) {
	var found string
	var walk func(prefix string, h plumbing.Hash) error
	walk = func(prefix string, h plumbing.Hash) error {
		es, err := r.treeEntries(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			switch {
			case found != "":
				return nil
			case e.Mode == filemode.Submodule:
				found = prefix + e.Name
			case e.Mode == filemode.Dir:
				if err := walk(prefix+e.Name+"/", e.Hash); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return found, walk("", tree)
}

// indexFlags names the first index entry go-git would not keep as git
// does: assume-unchanged, skip-worktree, intent-to-add, a gitlink, an
// unmerged stage, or a split index. It reads the index format itself
// (versions 2 to 4): go-git drops the assume-unchanged bit.
func indexFlags(indexPath string) (flag, name string) {
	b, err := os.ReadFile(indexPath)
	if err != nil || len(b) < 12 || string(b[:4]) != "DIRC" {
		return "", ""
	}
	version := binary.BigEndian.Uint32(b[4:8])
	n := binary.BigEndian.Uint32(b[8:12])
	off, prev := 12, ""
	for i := uint32(0); i < n; i++ {
		start := off
		if off+62 > len(b) {
			return "", ""
		}
		mode := binary.BigEndian.Uint32(b[off+24 : off+28])
		flags := binary.BigEndian.Uint16(b[off+60 : off+62])
		off += 62
		var ext uint16
		if flags&0x4000 != 0 && version >= 3 {
			if off+2 > len(b) {
				return "", ""
			}
			ext = binary.BigEndian.Uint16(b[off : off+2])
			off += 2
		}
		if version == 4 {
			strip, k := binary.Uvarint(b[off:])
			if k <= 0 || int(strip) > len(prev) {
				return "", ""
			}
			off += k
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return "", ""
			}
			prev = prev[:len(prev)-int(strip)] + string(b[off:off+end])
			off += end + 1
		} else {
			end := bytes.IndexByte(b[off:], 0)
			if end < 0 {
				return "", ""
			}
			prev = string(b[off : off+end])
			off = start + (off+end-start+8)&^7
		}
		switch {
		case flags&0x8000 != 0:
			return "an assume-unchanged index entry", prev
		case ext&0x4000 != 0:
			return "a skip-worktree index entry", prev
		case ext&0x2000 != 0:
			return "an intent-to-add index entry", prev
		case flags&0x3000 != 0:
			return "an unmerged index entry", prev
		case mode == uint32(filemode.Submodule):
			return "a submodule in the index", prev
		}
	}
	for off+8 <= len(b)-20 {
		sig := string(b[off : off+4])
		size := int(binary.BigEndian.Uint32(b[off+4 : off+8]))
		if sig == "link" {
			return "a split index", path.Base(indexPath)
		}
		off += 8 + size
	}
	return "", ""
}

// verifyPath is git's verify_path for what go-git stages, conservatively:
// no empty, "." or ".." component, and none git reads as .git (any case,
// trailing dots or spaces, NTFS's short "git~1", HFS+'s ignored code
// points), nor a .gitmodules that is not a plain name.
func verifyPath(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
		low := strings.ToLower(strings.TrimRight(c, ". "))
		clean := strings.Map(func(r rune) rune {
			switch r {
			case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
				return -1
			}
			return r
		}, low)
		if clean == ".git" || low == "git~1" || strings.HasPrefix(low, ".git:") {
			return false
		}
	}
	return true
}
