package gitcommit

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// verifyScoped is Verify with VerifyOptions.Paths: git stages only the
// scope (the agent's paths, the paths the commit changed and the ones it
// left out as ignored) on a temporary index holding only the scope's
// entries. The whole-tree check costs git's lstat of every tracked file and
// a rewrite of the full index, about half a commit on a 20,000-file tree;
// this one costs one git process and the scope's files. Naming an ignored
// path to `git add -A` is how git is asked whether it ignores it too (it
// neither enters an ignored directory nor stages it, as in the walk). What
// it cannot see is a tracked file outside the scope whose edit debussy
// missed, or an untracked one its walk never reached: the whole-tree check
// looks for those.
func (v *verifier) verifyScoped(r *Repo, commit, indexPath string, opts VerifyOptions) ([]PathDisagreement, error) {
	var extra []string
	for _, p := range opts.Ignored {
		if !underAny(p, opts.Exclude) {
			extra = append(extra, p)
		}
	}
	tree, spec, err := r.writeScopedIndex(commit, indexPath, append(extra, opts.Paths...))
	if err != nil || len(spec) == 0 {
		return nil, err
	}
	var stdin []byte
	for _, p := range spec {
		stdin = append(append(stdin, p...), 0)
	}
	if err := v.addPathspec(stdin); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, err
	}
	idx, _, ok, err := decodeIndex(b)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("git wrote index version %d", idx.Version)
	}
	staged := map[string]string{}
	for _, e := range idx.Entries {
		if e.Stage == 0 && !e.IntentToAdd {
			staged[e.Name] = modeBlob(e.Mode, e.Hash)
		}
	}
	committed, err := r.treeFilesUnder(tree, spec)
	if err != nil {
		return nil, err
	}
	var pds []PathDisagreement
	for p, c := range committed {
		if g := staged[p]; g != c {
			pds = append(pds, PathDisagreement{Path: p, Committed: c, Git: g})
		}
	}
	for p, g := range staged {
		if _, ok := committed[p]; !ok {
			pds = append(pds, PathDisagreement{Path: p, Git: g})
		}
	}
	slices.SortFunc(pds, func(a, b PathDisagreement) int { return strings.Compare(a.Path, b.Path) })
	return pds, nil
}

func modeBlob(m filemode.FileMode, h plumbing.Hash) string {
	return fmt.Sprintf("%06o %s", uint32(m), h)
}

// writeScopedIndex writes, at indexPath, the entries within scope (extra
// and the paths commit changed) of the index `git add -A` started from:
// the user's index (the commit, with stat data and flags) with the changed
// paths set back to the parent's entries. It returns the commit's tree and
// the scope as a pathspec: the paths that exist on disk or in that index
// (any other is a pathspec error to git, and nothing to stage).
func (r *Repo) writeScopedIndex(commit, indexPath string, extra []string) (plumbing.Hash, []string, error) {
	end, err := r.begin()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	defer end()
	tree, changes, err := r.commitChanges(commit)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	reset := make(map[string]*Change, len(changes))
	scope := map[string]bool{}
	onDisk := func(p string) bool {
		_, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
		return err == nil
	}
	for i, ch := range changes {
		reset[ch.Path] = &changes[i]
		if ch.Status != "A" || onDisk(ch.Path) {
			scope[ch.Path] = true
		}
	}
	for _, p := range extra {
		p = path.Clean(filepath.ToSlash(p))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) || scope[p] {
			continue
		}
		if onDisk(p) {
			scope[p] = true
		}
	}
	inScope := func(name string) bool {
		for i := 0; ; {
			j := strings.IndexByte(name[i:], '/')
			if j < 0 {
				return scope[name]
			}
			if scope[name[:i+j]] {
				return true
			}
			i += j + 1
		}
	}
	idx, err := r.readIndex()
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var entries []*index.Entry
	for _, e := range idx.Entries {
		if reset[e.Name] == nil && inScope(e.Name) {
			entries = append(entries, e)
		}
	}
	for _, ch := range changes {
		if ch.Status != "A" {
			entries = append(entries, &index.Entry{Name: ch.Path, Mode: ch.fromMode, Hash: ch.fromHash})
		}
	}
	sortEntries(entries)
	spec := make([]string, 0, len(scope))
	for p := range scope {
		spec = append(spec, p)
	}
	slices.Sort(spec)
	b := encodeIndexEntries(entries, r.assumeValid, idx.Version == 4)
	return tree, spec, os.WriteFile(indexPath, b, 0o600)
}

// commitChanges resolves commit and lists what it changed from its first
// parent (everything, for a root commit).
func (r *Repo) commitChanges(commit string) (plumbing.Hash, []Change, error) {
	h, err := r.repo.ResolveRevision(plumbing.Revision(commit))
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("resolve %s: %w", commit, err)
	}
	c, err := r.repo.CommitObject(*h)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	var parentTree plumbing.Hash
	if len(c.ParentHashes) > 0 {
		p, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return plumbing.ZeroHash, nil, fmt.Errorf("read parent of %s: %w", commit, err)
		}
		parentTree = p.TreeHash
	}
	changes, err := r.diffTrees(parentTree, c.TreeHash)
	return c.TreeHash, changes, err
}

// treeFilesUnder lists, as "<mode> <blob>" by path, the non-tree entries of
// tree at or below each of paths.
func (r *Repo) treeFilesUnder(tree plumbing.Hash, paths []string) (map[string]string, error) {
	end, err := r.begin()
	if err != nil {
		return nil, err
	}
	defer end()
	trees := map[plumbing.Hash][]object.TreeEntry{}
	entries := func(h plumbing.Hash) ([]object.TreeEntry, error) {
		if es, ok := trees[h]; ok {
			return es, nil
		}
		es, err := r.treeEntries(h)
		trees[h] = es
		return es, err
	}
	out := map[string]string{}
	var walk func(prefix string, h plumbing.Hash) error
	walk = func(prefix string, h plumbing.Hash) error {
		es, err := entries(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.Mode == filemode.Dir {
				if err := walk(prefix+e.Name+"/", e.Hash); err != nil {
					return err
				}
			} else {
				out[prefix+e.Name] = modeBlob(e.Mode, e.Hash)
			}
		}
		return nil
	}
next:
	for _, p := range paths {
		h := tree
		parts := strings.Split(p, "/")
		for i, name := range parts {
			es, err := entries(h)
			if err != nil {
				return nil, err
			}
			k := slices.IndexFunc(es, func(e object.TreeEntry) bool { return e.Name == name })
			switch {
			case k < 0:
				continue next
			case es[k].Mode == filemode.Dir:
				h = es[k].Hash
			case i == len(parts)-1:
				out[p] = modeBlob(es[k].Mode, es[k].Hash)
				continue next
			default:
				continue next // a file where p needs a directory
			}
		}
		if err := walk(p+"/", h); err != nil {
			return nil, err
		}
	}
	return out, nil
}
