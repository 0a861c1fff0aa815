package gitcommit

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// onlyIgnoredSubmodules reports whether, with diff.ignoreSubmodules=all,
// entries differ from the tree parent only in gitlinks: git commit then
// says "nothing to commit" (its check ignores submodules; the per-submodule
// ignore settings do not count there), though git add -A staged them.
func (r *Repo) onlyIgnoredSubmodules(cfg gitConfig, entries []*index.Entry, parent plumbing.Hash) bool {
	if parent.IsZero() || !strings.EqualFold(strings.TrimSpace(cfg.get("diff.ignoreSubmodules")), "all") {
		return false
	}
	head := map[string]treeItem{}
	if !r.flattenTree(parent, "", head) {
		return false
	}
	n := 0
	for _, e := range entries {
		if e.Mode == filemode.Submodule {
			continue
		}
		n++
		if it, ok := head[e.Name]; !ok || it != (treeItem{e.Hash, e.Mode}) {
			return false
		}
	}
	return n == len(head)
}

type treeItem struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

// flattenTree adds path → (blob, mode) for every non-gitlink entry below tree.
func (r *Repo) flattenTree(tree plumbing.Hash, prefix string, out map[string]treeItem) bool {
	t, err := r.repo.TreeObject(tree)
	if err != nil {
		return false
	}
	for _, e := range t.Entries {
		switch e.Mode {
		case filemode.Dir:
			if !r.flattenTree(e.Hash, prefix+e.Name+"/", out) {
				return false
			}
		case filemode.Submodule:
		default:
			out[prefix+e.Name] = treeItem{e.Hash, e.Mode}
		}
	}
	return true
}
