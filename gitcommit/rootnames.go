package gitcommit

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Where many of the paths debussy leaves out sit at the top of the work
// tree beside the branch's own entries (a run started with 20,000
// untracked files in the root), a placeholder each is what made a commit
// 1.3 times as slow as with none: git add -A reads, looks up, hashes and
// writes back every placeholder, and debussy's passes read and write them
// again (issue 55). There, the root's other entries are named to git add
// -A instead, as literal pathspecs: git walks and stages only what it is
// given, and the root's hidden paths are out by construction — none is
// named, and no name is a directory holding one. Below the root, hidden
// paths keep their placeholders, and git decides everything else.
//
// A pathspec costs git about 35 ns for every index entry and path it
// visits (git 2.39: 16 of them in a 20,000-file tree cost git add 11 ms
// more than one), where a placeholder costs about 1.2 µs: so the root is
// named only where its names cost less than its placeholders would, the
// paths visited counted as the index's entries and the root's.
const (
	pathspecPerEntry  = 35   // ns, per pathspec and index entry
	placeholderCost   = 1200 // ns, per placeholder
	minHiddenForNames = 64   // below this, placeholders are no cost worth a change
	maxRootNames      = 256  // a command line well within any system's limit
)

// rootNaming is how stageOnce hides the root's paths: by naming the rest
// (names, those of them HEAD does not have in untracked), or, ok false,
// by placeholders.
type rootNaming struct {
	ok        bool
	names     []string
	untracked []string
}

// namingOK says git add -A given literal pathspecs stages exactly what it
// would stage unnamed less the paths not named, as far as the repository's
// settings go: no GIT_*_PATHSPECS of the user's (git add runs with the
// user's environment, and they would reread the pathspecs), a
// case-sensitive work tree whose names git takes as they are, and no
// sparse checkout (a pathspec that matches only skip-worktree entries
// makes git add fail).
func (r *Repo) namingOK(cfg gitConfig) bool {
	for _, k := range []string{"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"} {
		if r.getenv(k) != "" {
			return false
		}
	}
	return !cfg.bool("core.ignoreCase", false) && !cfg.bool("core.precomposeUnicode", false) && !cfg.bool("core.sparseCheckout", false)
}

// rootNames decides how the root's hidden paths (of found, placeholders'
// answer, and state) are hidden: named around where that is cheaper than
// placeholders and naming can say the same (ok, set by the caller from
// namingOK, and an index with no skip-worktree entry). The names are
// HEAD's root entries and the root's entries on disk, less the hidden
// ones and .git.
func (r *Repo) rootNames(ok bool, headTree plumbing.Hash, found, state []string, index parsedIndex) (rootNaming, error) {
	if !ok || index.partial() || hasSkipWorktree(index) {
		return rootNaming{}, nil
	}
	ents := r.listing(".")
	if ents == nil {
		return rootNaming{}, nil
	}
	inHead, err := r.rootEntries(headTree)
	if err != nil {
		return rootNaming{}, err
	}
	m := &r.rootMemo
	if !m.holds(found, state, r.dirs["."].at, inHead) {
		*m = rootMemo{found: found, state: slices.Clone(state), listed: r.dirs["."].at, inHead: inHead}
		skip := pathSet{".git": true}
		for _, p := range append(slices.Clip(found), state...) {
			if atRoot(p) {
				skip[p] = true
				m.root++
			}
		}
		head := pathSetOf(inHead)
		m.names = slices.Clone(inHead)
		for name := range ents {
			if !skip[name] && !head[name] {
				m.names = append(m.names, name)
				m.untracked = append(m.untracked, name)
			}
		}
		slices.Sort(m.names)
	}
	visited := len(index.entries) + len(ents)
	if m.root < minHiddenForNames || len(m.names) == 0 || len(m.names) > maxRootNames ||
		len(m.names)*visited*pathspecPerEntry > m.root*placeholderCost {
		return rootNaming{}, nil
	}
	return rootNaming{ok: true, names: m.names, untracked: m.untracked}, nil
}

// rootMemo is rootNames' last answer (the root's hidden paths counted,
// the names, the untracked ones), for the hidden paths it was worked out
// from (found by identity: placeholders' kept answer, never changed), the
// root's listing (by when it was read) and HEAD's root entries: working
// it out, a set of 20,000 names and a pass over as many entries, cost
// about 3 ms a commit. Its lists are shared: never changed in place.
type rootMemo struct {
	found, state     []string
	listed           int64
	inHead           []string
	root             int
	names, untracked []string
}

func (m *rootMemo) holds(found, state []string, listed int64, inHead []string) bool {
	return m.names != nil && sameList(found, m.found) && slices.Equal(state, m.state) && listed == m.listed && slices.Equal(inHead, m.inHead)
}

// rootEntries are the names of tree's root entries (none for a zero
// tree), sorted as git sorts a tree's entries.
func (r *Repo) rootEntries(tree plumbing.Hash) ([]string, error) {
	es, err := r.treeEntries(tree)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name)
	}
	return names, nil
}

// hasSkipWorktree says an entry of index is marked skip-worktree (the
// extended flag sparse checkout sets).
func hasSkipWorktree(index parsedIndex) bool {
	for _, e := range index.entries {
		if len(e.fixed) == 64 && binary.BigEndian.Uint16(e.fixed[62:64])&0x4000 != 0 {
			return true
		}
	}
	return false
}

// withoutIgnored is n's names less the untracked ones git's ignore rules
// leave out (git check-ignore: an ignored file or directory): named, git
// add refuses an ignored path; unnamed, git add -A adds nothing of it
// either. check-ignore reads no directory (ls-files -o -i read the whole
// root for two names: 17 ms with 20,000 files there) and no index; it
// takes no literal magic, so each name goes as "./name", which no name
// turns into magic. The answer is kept while the names (rootMemo's) and
// the files the rules of the root's names come from (sources) are the
// same, by their stat data under the racy rule: asking git cost about 3 ms
// a commit.
func (r *Repo) withoutIgnored(ctx context.Context, n rootNaming, sources []string) ([]string, error) {
	if len(n.untracked) == 0 {
		return n.names, nil
	}
	m := &r.ignoredMemo
	stats := make([]fpStat, len(sources))
	for i, f := range sources {
		if fi, err := os.Stat(f); err == nil {
			stats[i] = statOf(fi)
		}
	}
	if m.holds(n.untracked, stats) {
		return m.names, nil
	}
	at := time.Now().UnixNano()
	var in bytes.Buffer
	for _, name := range n.untracked {
		in.WriteString("./" + name + "\x00")
	}
	out, err := r.git(ctx, gitRun{stdin: &in}, append(noHooks, "check-ignore", "--no-index", "-z", "--stdin")...)
	var ge *GitError
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) { // 1: none is ignored
		return nil, fmt.Errorf("stage: %w", err)
	}
	ignored := pathSet{}
	for _, p := range strings.Split(string(out), "\x00") {
		ignored[strings.TrimPrefix(p, "./")] = true
	}
	names := slices.DeleteFunc(slices.Clone(n.names), func(name string) bool { return ignored[name] })
	*m = ignoredMemo{untracked: n.untracked, stats: stats, at: at, names: names}
	return names, nil
}

// ignoredMemo is withoutIgnored's last answer, for the untracked names
// (by identity: rootMemo's, never changed) and the stat data of the
// sources then.
type ignoredMemo struct {
	untracked []string
	stats     []fpStat
	at        int64
	names     []string
}

func (m *ignoredMemo) holds(untracked []string, stats []fpStat) bool {
	if m.names == nil || !sameList(untracked, m.untracked) || !slices.Equal(stats, m.stats) {
		return false
	}
	for _, st := range stats {
		if !vouches(st, m.at) {
			return false // written as git read it, or just before: maybe not what git read
		}
	}
	return true
}

// ignoreSources are the files whose rules decide whether a name at the
// root is ignored: the root's .gitignore, info/exclude, and
// core.excludesFile or its default.
func (r *Repo) ignoreSources(cfg gitConfig) []string {
	files := []string{filepath.Join(r.root, ".gitignore"), filepath.Join(r.commonDir, "info", "exclude")}
	if v := cfg.get("core.excludesFile"); v != "" {
		return append(files, r.expandPath(v, r.root))
	}
	if xdg := r.xdgConfigHome(); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "ignore"))
	}
	return files
}

// atRoot says the slash path p names an entry of the root.
func atRoot(p string) bool { return !strings.Contains(p, "/") }

func notAtRoot(p string) bool { return !atRoot(p) }

// literally makes names literal pathspecs (git add is given them only
// where namingOK: no GIT_*_PATHSPECS of the user's rereads them).
func literally(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ":(literal)" + n
	}
	return out
}
