package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Staging where git is installed: the private index (the index's lock
// file, seeded with the index's bytes for their stat data) is turned into
// HEAD's tree — the user's own staging is never the start: whatever the
// agent staged or unstaged is undone first — and `git add -A` stages the
// worktree into it. What debussy leaves out is kept out by construction,
// not by pathspec spelling: each such path gets a placeholder entry, an
// assume-unchanged gitlink (placeholder), so git's walk treats it as
// tracked and unchanged and neither hashes nor adds it, and the
// placeholders are removed again by exact path (update-index --stdin,
// never a pathspec) before the tree is written. Linear in the number of
// such paths, immune to GIT_*_PATHSPECS and to names that look like
// pathspec magic.

// emptyBlob is the placeholder entries' object: never written to a tree.
const emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// indexRecord is one line of `git diff-index --cached --raw`: how the
// index differs from HEAD at path.
type indexRecord struct {
	srcMode, dstMode string // "000000" for none
	src, dst         string // object ids
	status           byte   // A, M, D, T, U
	path             string
}

// indexVsHead lists how the index at indexPath differs from HEAD (every
// entry, as added, on an unborn branch).
func (r *Repo) indexVsHead(ctx context.Context, env gitRun, h head) ([]indexRecord, error) {
	if h.hash.IsZero() {
		out, err := r.git(ctx, env, append(noHooks, "ls-files", "-z", "--stage")...)
		if err != nil {
			return nil, fmt.Errorf("stage: %w", err)
		}
		var recs []indexRecord
		for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
			meta, p, ok := strings.Cut(rec, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) != 3 {
				continue
			}
			recs = append(recs, indexRecord{srcMode: "000000", dstMode: f[0], dst: f[1], status: 'A', path: p})
		}
		return recs, nil
	}
	out, err := r.git(ctx, env, append(noHooks, "diff-index", "--cached", "-z", "--raw", "--no-renames", "--ignore-submodules=none", "--no-ext-diff", h.hash.String(), "--")...)
	if err != nil {
		return nil, fmt.Errorf("stage: %w", err)
	}
	return parseRaw(out)
}

// parseRaw reads `--raw -z` output: ":srcmode dstmode src dst status\0path\0".
func parseRaw(out []byte) ([]indexRecord, error) {
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var recs []indexRecord
	for i := 0; i+1 < len(fields); i += 2 {
		f := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(f) != 5 || f[4] == "" {
			return nil, fmt.Errorf("stage: unexpected diff-index record %q", fields[i])
		}
		recs = append(recs, indexRecord{srcMode: f[0], dstMode: f[1], src: f[2], dst: f[3], status: f[4][0], path: fields[i+1]})
	}
	return recs, nil
}

// revertLines are the update-index --index-info lines that turn the index
// the records came from into HEAD's: removals first (a path may be a
// directory on one side), then HEAD's entries back.
func revertLines(recs []indexRecord) []byte {
	var b bytes.Buffer
	for _, rec := range recs {
		if rec.dstMode != "000000" || rec.status == 'U' {
			fmt.Fprintf(&b, "0 %s\t%s\x00", plumbing.ZeroHash, rec.path)
		}
	}
	for _, rec := range recs {
		if rec.srcMode != "000000" && rec.status != 'A' {
			fmt.Fprintf(&b, "%s %s\t%s\x00", rec.srcMode, rec.src, rec.path)
		}
	}
	return b.Bytes()
}

// candidates are the paths debussy may leave out of a commit on top of
// tree (HEAD's; zero on an unborn branch): Never's and the user's files,
// less those HEAD has (the branch's files, committed as usual).
func (r *Repo) candidates(tree plumbing.Hash, o commitOptions, never pathSet) (user []string, err error) {
	var key pathsKey
	for p := range never {
		key.add(0, p)
	}
	for p := range o.exclude {
		key.add(1, p)
	}
	return memoized(r, &r.user, tree, key.value(), func() ([]string, error) {
		var ask []string
		for p := range never {
			ask = append(ask, p)
		}
		for p := range o.exclude {
			if !never[p] {
				ask = append(ask, p)
			}
		}
		inHead, err := r.inTree(tree, ask)
		if err != nil {
			return nil, err
		}
		var user []string
		for _, p := range ask {
			if !inHead[p] && !never[p] {
				user = append(user, p)
			}
		}
		return slices.Clip(user), nil // a caller's append must not write into the kept answer
	})
}

// sorted is what the user's files turned out to be: gone (with the
// fingerprints they had: a file the agent renamed keeps its content),
// changed (the agent's work now), the rest untouched.
type sorted struct {
	gone    map[string]string
	changed []string
}

// sortUser looks at the user's files as they are now.
func (r *Repo) sortUser(user []string, o commitOptions) (sorted, error) {
	fps, err := r.fingerprints(user)
	if err != nil {
		return sorted{}, err
	}
	s := sorted{gone: map[string]string{}}
	for _, p := range user {
		got := fps[p]
		switch {
		case !got.present:
			s.gone[p] = o.exclude[p]
		case got.fp != o.exclude[p]:
			s.changed = append(s.changed, p)
		}
	}
	slices.Sort(s.changed)
	return s, nil
}

// leftOutPaths is what go-git's staging leaves out: Never's paths and the
// user's files the agent did not change (gone ones too: go-git puts back
// what the index had for them); changed are committed as its work.
func (r *Repo) leftOutPaths(tree plumbing.Hash, o commitOptions, never pathSet) (out, changed []string, err error) {
	user, err := r.candidates(tree, o, never)
	if err != nil {
		return nil, nil, err
	}
	s, err := r.sortUser(user, o)
	if err != nil {
		return nil, nil, err
	}
	for p := range never {
		out = append(out, p)
	}
	for _, p := range user {
		if !slices.Contains(s.changed, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, s.changed, nil
}

// gitAdd is how git add -A runs: with the -c options args
// (shimDir.gitArgs), and, where naming is set (namingOK), given the root's
// entries by name where that hides the root's paths more cheaply
// (rootnames.go).
type gitAdd struct {
	args   []string
	naming bool
	split  bool // the user's git does not split the index (splitindex.go)
	// ignores are the files of the rules for the root's names
	// (ignoreSources).
	ignores []string
}

// stageByGit has git stage into the private index (see the comment at
// the top of this file).
//
// The user's files are looked at (a stat each, sortUser) while git stages:
// every one of them is hidden from git add -A as if untouched, and in the
// rare commit where the agent changed one, the staging is done again with
// that one left to git.
func (r *Repo) stageByGit(ctx context.Context, lock *lockFile, h head, headTree plumbing.Hash, o commitOptions, never pathSet, add gitAdd) (staging, error) {
	if o.asIs {
		return staging{}, lock.seed(ctx, r, o.from) // a merge: committed as it is
	}
	user, err := r.candidates(headTree, o, never)
	if err != nil {
		return staging{}, err
	}
	var s sorted
	looked := make(chan error, 1)
	go func() {
		var err error
		s, err = r.sortUser(user, o)
		looked <- err
	}()
	st, err := r.stageOnce(ctx, lock, h, headTree, never, user, add)
	if lerr := <-looked; err == nil {
		err = lerr
	}
	if err != nil {
		return staging{}, err
	}
	if len(s.changed) > 0 {
		// The agent changed some of the user's files: those are its work,
		// and git stages them.
		out := slices.DeleteFunc(slices.Clone(user), func(p string) bool { return slices.Contains(s.changed, p) })
		if st, err = r.stageOnce(ctx, lock, h, headTree, never, out, add); err != nil {
			return staging{}, err
		}
		st.changed = s.changed
	}
	st.gone = s.gone
	return st, nil
}

// stageOnce seeds the private index with the index, turns it into HEAD's
// tree, hides out (with Never's paths and .debussy/) and runs git add -A
// — or starts from the last commit's staged index where that is the same
// start (keptindex.go).
func (r *Repo) stageOnce(ctx context.Context, lock *lockFile, h head, headTree plumbing.Hash, never pathSet, out []string, add gitAdd) (staging, error) {
	state, err := r.stateDirsOut(headTree)
	if err != nil {
		return staging{}, err
	}
	hide := slices.DeleteFunc(slices.Clone(out), isStatePath)
	for p := range never {
		if !isStatePath(p) {
			hide = append(hide, p)
		}
	}
	found, err := r.placeholders(headTree, hide)
	if err != nil {
		return staging{}, err
	}
	hidden := append(slices.Clip(found), state...) // the answer is shared (memoized): never appended to in place
	// The index as the commit starts, read once: the kept staged index's
	// check (startsFrom), the seed otherwise, and the trees its cache tree
	// knows (treesAgreeing). A missing or unreadable one is seed's to say.
	from, _ := loadIndex(r.indexFile)
	naming, err := r.rootNames(add.naming, headTree, found, state, from.parsedIndex)
	if err != nil {
		return staging{}, err
	}
	placed := hidden // the paths placeholders hide
	if naming.ok {
		placed = slices.DeleteFunc(slices.Clone(hidden), atRoot)
	}
	var st staging
	var set pathSet // placed's paths
	// With placeholders, git add gets the private index split
	// (splitindex.go); the shared files go with this staging.
	split := add.split && len(placed) > 0 && !from.isSplit()
	var shared sharedFiles
	defer shared.remove()
	if r.startsFrom(r.kept, h, placed, from.parsedIndex) {
		// The last commit's staged index: HEAD's tree, these placeholders.
		r.keptUsed++
		if err := r.seedKept(lock, split, &shared); err != nil {
			return staging{}, err
		}
		set = r.kept.set
	} else {
		if st, err = r.startFromHead(ctx, lock, h, headTree, never, out, from); err != nil {
			return staging{}, err
		}
		if split {
			err = r.placeSplit(ctx, lock, placed, &shared)
		} else {
			err = r.addToIndex(ctx, lock.lockPath(), placed)
		}
		if err != nil {
			return staging{}, err
		}
		set = pathSetOf(placed)
	}
	rootPlaced, err := r.addAll(ctx, lock.lockPath(), add, naming, hidden)
	if err != nil {
		return staging{}, err
	}
	if rootPlaced {
		placed, set = hidden, pathSetOf(hidden)
	}
	staged, byGit, err := r.removeFromIndexBy(ctx, lock.lockPath(), placed, set, from.parsedIndex, split, &shared)
	if !byGit && len(placed) > 0 {
		st.staged = keptIndex{index: staged, hidden: placed, set: set}
	}
	return st, err
}

// addAll runs git add -A on the private index at indexPath: given the
// root's entries by name where naming says so, and otherwise, or where
// git refuses what it was given (a name gone meanwhile, one ignored that
// withoutIgnored did not see), with the root's hidden paths placed too
// (rootPlaced: placeholders now hide all of hidden).
func (r *Repo) addAll(ctx context.Context, indexPath string, add gitAdd, naming rootNaming, hidden []string) (rootPlaced bool, _ error) {
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}, user: true}
	if naming.ok {
		names, err := r.withoutIgnored(ctx, naming, add.ignores)
		if err != nil {
			return false, err
		}
		if len(names) > 0 { // none: git add -A would take everything
			args := append(append(slices.Clone(add.args), "add", "-A", "--"), literally(names)...)
			_, err := r.git(ctx, env, args...)
			if err == nil {
				r.rootNamed++
				return false, nil
			}
			if ctx.Err() != nil {
				return false, fmt.Errorf("stage: %w", err)
			}
			r.log.Debug("git add refused the root's names; placeholders hide them", "err", err)
		}
		if err := r.addToIndex(ctx, indexPath, slices.DeleteFunc(slices.Clone(hidden), notAtRoot)); err != nil {
			return false, err
		}
		rootPlaced = true
	}
	if _, err := r.git(ctx, env, append(add.args, "add", "-A")...); err != nil {
		return false, fmt.Errorf("stage: %w", err)
	}
	return rootPlaced, nil
}

// startFromHead seeds the private index with the index (as stageOnce read
// it) and turns it into HEAD's tree, noting the user's own entries for the paths
// left out (out).
//
// Where the index is HEAD's tree — noted so after debussy's last commit,
// or so its cache tree says (the agent's `git status` since rewrote the
// file, not its entries) — git is not asked how they differ.
func (r *Repo) startFromHead(ctx context.Context, lock *lockFile, h head, headTree plumbing.Hash, never pathSet, out []string, index indexBytes) (staging, error) {
	if index.data == nil {
		if err := lock.seed(ctx, r, ""); err != nil { // says why it could not be read, or seeds an empty one
			return staging{}, err
		}
	} else if err := lock.seedWith(index); err != nil {
		return staging{}, err
	}
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + lock.lockPath()}}
	var err error
	var recs []indexRecord
	if !r.indexIsHead(h) && !index.isTree(headTree) {
		if recs, err = r.indexVsHead(ctx, env, h); err != nil {
			return staging{}, err
		}
	}
	if len(recs) == 0 {
		return staging{}, nil
	}
	// What the index holds of the paths left out stays the user's: put
	// back after the commit (Never's, an agent's `git add -f .env`, are
	// taken out and named instead).
	var st staging
	leftOut := pathSetOf(out)
	for _, rec := range recs {
		switch {
		case rec.dstMode == "000000" || rec.srcMode != "000000":
		case never[rec.path]:
			st.unstaged = append(st.unstaged, rec.path)
		case leftOut[rec.path]:
			st.restore = append(st.restore, rec)
		}
	}
	env.stdin = bytes.NewReader(revertLines(recs))
	if _, err := r.git(ctx, env, append(noHooks, "update-index", "-z", "--index-info")...); err != nil {
		return staging{}, fmt.Errorf("stage: start from HEAD: %w", err)
	}
	return st, nil
}

// addToIndex adds placeholders (assume-unchanged) to the index at
// indexPath: in one pass (editIndex), or by git where that cannot edit it.
func (r *Repo) addToIndex(ctx context.Context, indexPath string, ps []string) error {
	if len(ps) == 0 {
		return nil
	}
	err := editIndex(indexPath, ps, nil)
	if !errors.Is(err, errIndexUnsupported) {
		return err
	}
	var b bytes.Buffer
	for _, p := range ps {
		fmt.Fprintf(&b, "160000 %s\t%s\x00", emptyBlob, p)
	}
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}, stdin: &b}
	if _, err := r.git(ctx, env, append(noHooks, "-c", "core.ignoreStat=true", "update-index", "-z", "--index-info")...); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return nil
}

// removeFromIndex takes paths, exactly as named, out of the index at
// indexPath: in one pass (editIndex), or by git where that cannot edit it.
func (r *Repo) removeFromIndex(ctx context.Context, indexPath string, paths []string) error {
	_, _, err := r.removeFromIndexBy(ctx, indexPath, paths, nil, parsedIndex{}, false, nil)
	return err
}

// removeFromIndexBy is removeFromIndex (set: paths as a set, or nil),
// with the cache tree of the index file treesFrom where it agrees (edit),
// returning the index as it read it before, or saying git had to do it
// (byGit). Where split, the index is debussy's private one in git's split
// form: read whole through its shared index (noted in shared), and
// written whole.
func (r *Repo) removeFromIndexBy(ctx context.Context, indexPath string, paths []string, set pathSet, treesFrom parsedIndex, split bool, shared *sharedFiles) (read indexBytes, byGit bool, _ error) {
	if len(paths) == 0 {
		return indexBytes{}, false, nil
	}
	if set == nil {
		set = pathSetOf(paths)
	}
	read, err := loadIndex(indexPath)
	if err == nil && split {
		err = read.resolve(r.gitDir, shared)
	}
	if err == nil {
		err = read.edit(indexPath, nil, set, treesFrom)
	}
	if !errors.Is(err, errIndexUnsupported) {
		return read, false, err
	}
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}, stdin: &b}
	args := []string{"update-index", "-z", "--force-remove", "--stdin"}
	if split {
		args = append(args, "--no-split-index") // the shared files go after this
	}
	if _, err := r.git(ctx, env, append(noHooks, args...)...); err != nil {
		return indexBytes{}, true, fmt.Errorf("stage: %w", err)
	}
	return indexBytes{}, true, nil
}

// restoreEntries puts the user's own index entries for the paths a commit
// left out back into the index (see staging.restore): an intent-to-add
// entry as one (`git add -N`), the others as they were.
func (r *Repo) restoreEntries(ctx context.Context, recs []indexRecord, ita map[string]bool) error {
	if len(recs) == 0 {
		return nil
	}
	var info, intents bytes.Buffer
	for _, rec := range recs {
		if ita[rec.path] {
			if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(rec.path))); err == nil {
				intents.WriteString(rec.path + "\x00")
			}
			continue
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", rec.dstMode, rec.dst, rec.path)
	}
	if info.Len() > 0 {
		if _, err := r.git(ctx, gitRun{stdin: &info}, append(noHooks, "update-index", "-z", "--index-info")...); err != nil {
			return fmt.Errorf("put the user's index entries back: %w", err)
		}
	}
	if intents.Len() > 0 {
		env := gitRun{stdin: &intents, env: []string{"GIT_LITERAL_PATHSPECS=1"}}
		if _, err := r.git(ctx, env, append(noHooks, "add", "-N", "-f", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
			return fmt.Errorf("put the user's index entries back: %w", err)
		}
	}
	return nil
}

// intentToAdd reads which of paths the index file at indexPath marks
// intent-to-add (the flag `git add -N` sets): go-git reads the index,
// as reading is all that is needed.
func intentToAdd(indexPath string, recs []indexRecord) map[string]bool {
	out := map[string]bool{}
	if len(recs) == 0 {
		return out
	}
	want := map[string]bool{}
	for _, rec := range recs {
		if rec.dst == emptyBlob {
			want[rec.path] = true
		}
	}
	if len(want) == 0 {
		return out
	}
	idx, err := readIndexFile(indexPath)
	if err != nil {
		return out
	}
	for _, e := range idx.Entries {
		if want[e.Name] && e.IntentToAdd {
			out[e.Name] = true
		}
	}
	return out
}
