package gitcommit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Change is one line of `git diff --no-renames --name-status`: A, M or D
// (a type change such as file to symlink is M).
type Change struct {
	Status string
	Path   string

	// What the first tree held (M and D): Verify resets a path to it.
	fromMode filemode.FileMode
	fromHash plumbing.Hash
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}

// Changes lists the paths that differ between commit base ("" means the
// empty tree) and HEAD, sorted by path. base may be anything git accepts as
// a revision: a full or abbreviated hash, a branch, a tag.
func (r *Repo) Changes(base string) ([]Change, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer end()
	var from plumbing.Hash
	if base != "" {
		h, err := r.repo.ResolveRevision(plumbing.Revision(base))
		if err != nil {
			return nil, fmt.Errorf("changes: resolve %q: %w", base, err)
		}
		c, err := r.repo.CommitObject(*h)
		if err != nil {
			return nil, fmt.Errorf("changes: read commit %s: %w", base, err)
		}
		from = c.TreeHash
	}
	head, err := r.headHash()
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	var to plumbing.Hash
	if !head.IsZero() {
		c, err := r.repo.CommitObject(head)
		if err != nil {
			return nil, fmt.Errorf("changes: read HEAD commit: %w", err)
		}
		to = c.TreeHash
	}
	cs, err := r.diffTrees(from, to)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	return cs, nil
}

// DirtyTracked lists tracked paths with changes that are not committed:
// staged or not, including deletions and unmerged paths. Untracked files do
// not count, nor anything under .debussy/. Nothing is written, not even the
// index.
func (r *Repo) DirtyTracked() ([]string, error) {
	end, err := r.begin()
	if err != nil {
		return nil, fmt.Errorf("check dirty: %w", err)
	}
	defer end()
	out, err := r.dirtyTracked()
	if err != nil {
		return nil, fmt.Errorf("check dirty: %w", err)
	}
	return out, nil
}

func (r *Repo) dirtyTracked() ([]string, error) {
	idx, err := r.readIndex()
	if err != nil {
		return nil, err
	}
	h, err := r.readHead()
	if err != nil {
		return nil, err
	}

	dirty := map[string]bool{}
	staged, err := r.stagedPaths(idx, h.hash)
	if err != nil {
		return nil, err
	}
	for _, p := range staged {
		dirty[p] = true
	}

	s := r.newStager(idx, r.loadConfig(), false)
	defer s.conv.close() // long-running clean filters (filter.go)
	if err := s.refreshTracked(idx.Entries); err != nil {
		return nil, err
	}
	for _, p := range s.unstaged {
		dirty[p] = true
	}

	out := make([]string, 0, len(dirty))
	for p := range dirty {
		if !isStateDirPath(p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// stagedPaths compares the index with HEAD's tree. Building the index's tree
// in memory answers the common "nothing staged" case without reading HEAD's
// trees; only when it differs are both flattened and compared.
func (r *Repo) stagedPaths(idx *index.Index, head plumbing.Hash) ([]string, error) {
	var stage0 []*index.Entry
	var out []string
	for _, e := range idx.Entries {
		switch {
		case e.Stage != 0:
			out = append(out, e.Name) // unmerged
		case !e.IntentToAdd: // git leaves intent-to-add entries out of trees
			stage0 = append(stage0, e)
		}
	}
	sortEntries(stage0)
	tree, _ := buildTree(stage0)
	var headTree plumbing.Hash
	if !head.IsZero() {
		c, err := r.repo.CommitObject(head)
		if err != nil {
			return nil, fmt.Errorf("read HEAD commit: %w", err)
		}
		headTree = c.TreeHash
	}
	if tree == headTree || (headTree.IsZero() && len(stage0) == 0) {
		return out, nil
	}

	type blob struct {
		hash plumbing.Hash
		mode filemode.FileMode
	}
	inHead := map[string]blob{}
	var flatten func(prefix string, h plumbing.Hash) error
	flatten = func(prefix string, h plumbing.Hash) error {
		es, err := r.treeEntries(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.Mode == filemode.Dir {
				if err := flatten(prefix+e.Name+"/", e.Hash); err != nil {
					return err
				}
				continue
			}
			inHead[prefix+e.Name] = blob{e.Hash, e.Mode}
		}
		return nil
	}
	if err := flatten("", headTree); err != nil {
		return nil, err
	}
	for _, e := range stage0 {
		if b, ok := inHead[e.Name]; !ok || b.hash != e.Hash || b.mode != e.Mode {
			out = append(out, e.Name)
		}
		delete(inHead, e.Name)
	}
	for name := range inHead {
		out = append(out, name)
	}
	return out, nil
}
