package gitcommit

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// What git add -A must not see (stagegit.go): the paths, and the
// directories, that placeholder entries hide.

// inTree reports which of paths tree (zero: the empty tree) holds, reading
// each directory's tree once.
func (r *Repo) inTree(tree plumbing.Hash, paths []string) (map[string]bool, error) {
	found := map[string]bool{}
	if tree.IsZero() || len(paths) == 0 {
		return found, nil
	}
	dirs := map[string]map[string]plumbing.Hash{} // directory → name → entry
	var list func(dir string) (map[string]plumbing.Hash, error)
	list = func(dir string) (map[string]plumbing.Hash, error) {
		if es, ok := dirs[dir]; ok {
			return es, nil
		}
		h := tree
		if dir != "" {
			parent, name := path.Split(dir)
			pes, err := list(strings.TrimSuffix(parent, "/"))
			if err != nil {
				return nil, err
			}
			h = pes[name+"/"]
		}
		es := map[string]plumbing.Hash{}
		if !h.IsZero() {
			entries, err := r.treeEntries(h)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				name := e.Name
				if e.Mode == filemode.Dir {
					name += "/"
				}
				es[name] = e.Hash
			}
		}
		dirs[dir] = es
		return es, nil
	}
	for _, p := range paths {
		dir, name := path.Split(p)
		es, err := list(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, err
		}
		_, file := es[name]
		_, sub := es[name+"/"]
		found[p] = file || sub
		if r.facts != nil {
			r.facts.present[p] = found[p]
		}
	}
	return found, nil
}

// placeholders are the entries that hide paths from `git add -A`
// (gitlinks: git does not descend into a directory it has as one, see
// placeholder). A directory HEAD does not have whose every file is one of
// paths (the user's, untouched: a notes/ or data/ of theirs) is hidden
// whole, so git's walk does not even read it; one that holds anything
// else (the agent's new file, an ignored one) has its paths hidden one by
// one and git decides the rest.
//
// The answer is kept (hidememo.go).
func (r *Repo) placeholders(tree plumbing.Hash, paths []string) ([]string, error) {
	var key pathsKey
	for _, p := range paths {
		key.add(0, p)
	}
	return memoized(r, &r.hidden, tree, key.value(), func() ([]string, error) {
		return r.findPlaceholders(tree, paths)
	})
}

func (r *Repo) findPlaceholders(tree plumbing.Hash, paths []string) ([]string, error) {
	set := pathSetOf(paths)
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		if d := path.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	inHead, err := r.inTree(tree, dirs)
	if err != nil {
		return nil, err
	}
	// The top-most directory of each path that HEAD does not have.
	roots := map[string][]string{}
	var single []string
	for _, p := range paths {
		root := ""
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if known, ok := inHead[d]; ok && known {
				break
			}
			if ok, err := r.inTreeDir(tree, d, inHead); err != nil {
				return nil, err
			} else if ok {
				break
			}
			root = d
		}
		if root == "" {
			single = append(single, p)
		} else {
			roots[root] = append(roots[root], p)
		}
	}
	var out []string
	for root, members := range roots {
		if r.onlyThese(root, set) {
			out = append(out, root)
			continue
		}
		single = append(single, members...)
	}
	listed := map[string]map[string]bool{} // this call's listings: a stat per directory
	for _, p := range single {
		d := path.Dir(p)
		ents, ok := listed[d]
		if !ok {
			ents = r.listing(d)
			listed[d] = ents
		}
		if _, present := ents[path.Base(p)]; present { // gone: nothing to hide
			out = append(out, p)
		}
	}
	// In path order: the same answer is the same list (keptindex.go).
	slices.Sort(out)
	return slices.Clip(out), nil
}

// inTreeDir says tree has d, remembering the answer in known.
func (r *Repo) inTreeDir(tree plumbing.Hash, d string, known map[string]bool) (bool, error) {
	if v, ok := known[d]; ok {
		return v, nil
	}
	m, err := r.inTree(tree, []string{d})
	if err != nil {
		return false, err
	}
	known[d] = m[d]
	return m[d], nil
}

// onlyThese says every file below dir is in set (a nested repository in
// set counts as one), so that hiding dir hides nothing else.
func (r *Repo) onlyThese(dir string, set map[string]bool) bool {
	ents := r.listing(dir)
	if ents == nil {
		return false
	}
	for name, isDir := range ents {
		p := dir + "/" + name
		switch {
		case set[p]:
		case isDir:
			if _, nested := r.listing(p)[".git"]; nested {
				return false // a repository that is not the user's
			}
			if !r.onlyThese(p, set) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// dirListing is a directory's entries (name: is a directory) with the
// stat data they were read with.
type dirListing struct {
	stat fpStat
	at   int64
	ents map[string]bool
}

// listing is dir's entries, nil if it is not a directory. A directory
// whose stat data are those it was last read with, long enough after it
// last changed (the racy rule fingerprints follow), is not read again.
func (r *Repo) listing(dir string) map[string]bool {
	abs := filepath.Join(r.root, filepath.FromSlash(dir))
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		if r.facts != nil {
			r.facts.listed[dir] = 0
		}
		return nil
	}
	st := statOf(fi)
	if c, ok := r.dirs[dir]; ok && c.holds(st) {
		if r.facts != nil {
			r.facts.listed[dir] = c.at
		}
		return c.ents
	}
	at := time.Now().UnixNano()
	list, err := os.ReadDir(abs)
	if err != nil {
		if r.facts != nil {
			r.facts.listed[dir] = -1 // unreadable: never vouched for
		}
		return nil
	}
	ents := make(map[string]bool, len(list))
	for _, e := range list {
		ents[e.Name()] = e.IsDir()
	}
	if r.dirs == nil || len(r.dirs) > maxCachedDirs {
		r.dirs = map[string]dirListing{}
	}
	r.dirs[dir] = dirListing{stat: st, at: at, ents: ents}
	if r.facts != nil {
		r.facts.listed[dir] = at
	}
	return ents
}

// holds says st, a directory's stat data now, vouch for the listing:
// the same as it was read with, and old enough then (the racy rule).
func (c dirListing) holds(st fpStat) bool {
	return c.stat == st && vouches(st, c.at)
}

// maxCachedDirs bounds listing's cache.
const maxCachedDirs = 50000

// stateDirsOut lists what of .debussy/ at the root HEAD does not track:
// the directory itself, or (HEAD tracking some of it, a config file) its
// untracked entries, at any depth. Nested .debussy directories elsewhere
// are taken out once staged (see stageByGit).
func (r *Repo) stateDirsOut(tree plumbing.Hash) ([]string, error) {
	var out []string
	var walk func(rel string, h plumbing.Hash) error
	walk = func(rel string, h plumbing.Hash) error {
		tracked := map[string]plumbing.Hash{}
		if !h.IsZero() {
			es, err := r.treeEntries(h)
			if err != nil {
				return err
			}
			for _, e := range es {
				if e.Mode == filemode.Dir {
					tracked[e.Name] = e.Hash
				} else {
					tracked[e.Name] = plumbing.ZeroHash
				}
			}
		}
		ents, err := os.ReadDir(filepath.Join(r.root, filepath.FromSlash(rel)))
		if err != nil {
			return nil // gone, or not a directory: nothing to hide
		}
		for _, e := range ents {
			p := rel + "/" + e.Name()
			sub, ok := tracked[e.Name()]
			switch {
			case !ok:
				out = append(out, p)
			case e.IsDir() && !sub.IsZero():
				if err := walk(p, sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	fi, err := os.Lstat(filepath.Join(r.root, stateDir))
	if err != nil || !fi.IsDir() {
		return nil, nil
	}
	root, err := r.inTreeHash(tree, stateDir)
	if err != nil {
		return nil, err
	}
	if root.IsZero() {
		return []string{stateDir}, nil
	}
	return out, walk(stateDir, root)
}

// inTreeHash is the hash of tree's directory name at the root, zero when
// there is none.
func (r *Repo) inTreeHash(tree plumbing.Hash, name string) (plumbing.Hash, error) {
	if tree.IsZero() {
		return plumbing.ZeroHash, nil
	}
	es, err := r.treeEntries(tree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, e := range es {
		if e.Name == name && e.Mode == filemode.Dir {
			return e.Hash, nil
		}
	}
	return plumbing.ZeroHash, nil
}
