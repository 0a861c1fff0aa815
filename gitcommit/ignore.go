package gitcommit

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// excludePatterns returns the ignore rules that do not live in the worktree,
// lowest priority first: core.excludesFile (default
// $XDG_CONFIG_HOME/git/ignore), then info/exclude of the common git dir.
// go-git reads neither for a linked worktree and never the first.
func (r *Repo) excludePatterns(cfg gitConfig) ([]gitignore.Pattern, error) {
	var files []string
	if f := cfg.get("core.excludesFile"); f != "" {
		files = append(files, r.expandPath(f, r.root))
	} else if x := r.xdgConfigHome(); x != "" {
		files = append(files, filepath.Join(x, "git", "ignore"))
	}
	files = append(files, filepath.Join(r.commonDir, "info", "exclude"))

	var ps []gitignore.Pattern
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ps = append(ps, parsePatterns(b, nil)...)
	}
	return ps, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// parsePatterns parses one ignore file whose patterns are relative to the
// directory domain (nil for the worktree root).
func parsePatterns(b []byte, domain []string) []gitignore.Pattern {
	b = bytes.TrimPrefix(b, utf8BOM)
	var ps []gitignore.Pattern
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(string(line), domain))
	}
	return ps
}
