package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage"
)

// staging is what the staging step decided.
type staging struct {
	tree     plumbing.Hash
	changed  []string // Exclude paths staged because their content changed
	unstaged []string // Never paths taken back out of the index
	// restore are the index's own entries for paths the commit leaves out
	// (an agent's `git add notes.txt`), put back once it is made.
	restore []indexRecord
	// gone are the user's files that are no longer there, with their
	// fingerprints: under a new name (the agent renamed one), they stay
	// out too (leaveOut).
	gone map[string]string
	// staged is the private index as git add -A left it, placeholders
	// still in (keptIndex).
	staged keptIndex
}

// writeTree is `git write-tree` of the index at indexPath, or without git
// the tree of its stage-0 entries.
func (r *Repo) writeTree(ctx context.Context, indexPath string) (plumbing.Hash, error) {
	if r.gitBin == "" {
		idx, err := readIndexFile(indexPath)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return r.storeIndexTree(idx.Entries)
	}
	out, err := r.git(ctx, gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}}, append(noHooks, "write-tree")...)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree: %w", err)
	}
	return plumbing.NewHash(strings.TrimSpace(string(out))), nil
}

// stageByGoGit stages with go-git where git is not installed: `git add -A`
// as go-git does it (worktree.AddWithOptions{All: true}), then every path
// debussy leaves out put back as the index had it.
func (r *Repo) stageByGoGit(indexPath string, headTree plumbing.Hash, o commitOptions, never pathSet) (staging, error) {
	if err := r.gitlessTree(indexPath, headTree); err != nil {
		return staging{}, err
	}
	before, err := readIndexFile(indexPath)
	if err != nil {
		return staging{}, err
	}
	st := staging{}
	if !o.asIs {
		out, changed, err := r.leftOutPaths(headTree, o, never)
		if err != nil {
			return staging{}, err
		}
		st.changed = changed
		wt, err := r.repo.Worktree()
		if err != nil {
			return staging{}, fmt.Errorf("stage: %w", err)
		}
		// go-git stages into the repository's index; this one is the lock.
		rs := &lockIndexStorer{Storer: r.store, path: indexPath}
		repo, err := git.Open(rs, wt.Filesystem)
		if err != nil {
			return staging{}, fmt.Errorf("stage: %w", err)
		}
		if wt, err = repo.Worktree(); err != nil {
			return staging{}, fmt.Errorf("stage: %w", err)
		}
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil && !errors.Is(err, git.ErrGlobNoMatches) {
			return staging{}, fmt.Errorf("stage: %w", err)
		}
		after, err := readIndexFile(indexPath)
		if err != nil {
			return staging{}, err
		}
		keep := map[string]*index.Entry{}
		for _, e := range before.Entries {
			keep[e.Name] = e
		}
		entries := after.Entries[:0]
		for _, e := range after.Entries {
			switch {
			case isStatePath(e.Name) || slices.Contains(out, e.Name) && !never[e.Name]:
				if old := keep[e.Name]; old != nil {
					entries = append(entries, old)
				}
			case never[e.Name]:
				st.unstaged = append(st.unstaged, e.Name)
			default:
				entries = append(entries, e)
			}
		}
		after.Entries = entries
		for _, e := range entries {
			if !verifyPath(e.Name) {
				return staging{}, fmt.Errorf("stage: error: invalid path '%s'", e.Name)
			}
		}
		if err := writeIndexFile(indexPath, after); err != nil {
			return staging{}, err
		}
	}
	tree, err := r.writeTree(context.Background(), indexPath)
	st.tree = tree
	return st, err
}

// isStatePath says p is inside a .debussy directory at any depth.
func isStatePath(p string) bool {
	return p == stateDir || strings.HasPrefix(p, stateDir+"/") || strings.Contains(p, "/"+stateDir+"/") || strings.HasSuffix(p, "/"+stateDir)
}

// lockIndexStorer is the repository's storage with the index read from and
// written to path (the lock file).
type lockIndexStorer struct {
	storage.Storer
	path string
}

func (s *lockIndexStorer) Index() (*index.Index, error) { return readIndexFile(s.path) }

func (s *lockIndexStorer) SetIndex(idx *index.Index) error { return writeIndexFile(s.path, idx) }

// readIndexFile decodes an index file with go-git; a missing or empty one
// is empty.
func readIndexFile(path string) (*index.Index, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) == 0 {
		return &index.Index{Version: 2}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(b)).Decode(idx); err != nil {
		return nil, fmt.Errorf("read index %s: %w", path, err)
	}
	return idx, nil
}

// writeIndexFile encodes idx over path (the lock file itself: its rename
// is the commit).
func writeIndexFile(path string, idx *index.Index) error {
	var b bytes.Buffer
	if idx.Version < 2 || idx.Version > 4 {
		idx.Version = 2
	}
	if err := index.NewEncoder(&b).Encode(idx); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	return os.WriteFile(path, b.Bytes(), 0o666)
}

// storeIndexTree builds and stores the tree of the stage-0 entries.
func (r *Repo) storeIndexTree(entries []*index.Entry) (plumbing.Hash, error) {
	var es []*index.Entry
	for _, e := range entries {
		if e.Stage != 0 {
			return plumbing.ZeroHash, fmt.Errorf("write tree: %s is unmerged in the index", e.Name)
		}
		if !e.IntentToAdd {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
	tree, trees := buildTree(es)
	if err := r.storeTrees(trees, tree, plumbing.ZeroHash); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write trees: %w", err)
	}
	return tree, nil
}

// nestedHead is the HEAD commit of the repository at dir, "" without one.
func nestedHead(dir string) string {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return ""
	}
	ref, err := repo.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}
