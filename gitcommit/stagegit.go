package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Staging where git is installed: the private index (the index's lock
// file, seeded with the index's bytes for their stat data) is turned into
// HEAD's tree — the user's own staging is never the start: whatever the
// agent staged or unstaged is undone first — and `git add -A` stages the
// worktree into it. What debussy leaves out is kept out by construction,
// not by pathspec spelling: each such path gets a placeholder entry marked
// assume-unchanged (a directory: a gitlink), so git's walk treats it as
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

// leftOutPaths sorts the paths debussy decides about, for a commit on top
// of tree (HEAD's; zero on an unborn branch): out are present and kept out
// (Never's, and the user's whose fingerprint holds), gone are the user's
// that no longer exist, with their fingerprints (a file the agent renamed
// keeps its content), changed are the user's the agent changed, committed
// as its work. Paths HEAD's tree has are the branch's files: none of the
// three.
// dirs are the paths of out that are directories (nested repositories).
func (r *Repo) leftOutPaths(tree plumbing.Hash, o commitOptions, never pathSet) (out []string, gone map[string]string, changed []string, dirs map[string]bool, err error) {
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
		return nil, nil, nil, nil, err
	}
	var user []string
	for _, p := range ask {
		if !inHead[p] && !never[p] {
			user = append(user, p)
		}
	}
	fps, err := r.fingerprints(user)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	gone, dirs = map[string]string{}, map[string]bool{}
	for _, p := range ask {
		got := fps[p]
		switch {
		case inHead[p]:
		case never[p]:
			out = append(out, p)
		case !got.present:
			gone[p] = o.exclude[p]
		case got.fp == o.exclude[p]:
			out = append(out, p)
			dirs[p] = got.dir
		default:
			changed = append(changed, p)
		}
	}
	slices.Sort(out)
	slices.Sort(changed)
	return out, gone, changed, dirs, nil
}

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
	}
	return found, nil
}

// placeholders are the entries that hide paths from `git add -A`: a
// gitlink for a directory (git does not descend into one), a file entry
// otherwise. A directory HEAD does not have whose every file is one of
// paths (the user's, untouched: a notes/ or data/ of theirs) is hidden
// whole, so git's walk does not even read it; one that holds anything
// else (the agent's new file, an ignored one) has its paths hidden one by
// one and git decides the rest.
func (r *Repo) placeholders(tree plumbing.Hash, paths []string, isDir map[string]bool) ([]placeholder, error) {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	var dirs []string
	for _, p := range paths {
		dirs = append(dirs, path.Dir(p))
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
	var out []placeholder
	for root, members := range roots {
		if r.onlyThese(root, set) {
			out = append(out, placeholder{path: root, dir: true})
			continue
		}
		single = append(single, members...)
	}
	for _, p := range single {
		dir, known := isDir[p]
		if !known { // Never's: not stat'ed yet
			fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
			dir = err == nil && fi.IsDir()
		}
		out = append(out, placeholder{path: p, dir: dir})
	}
	return out, nil
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
	ents, err := os.ReadDir(filepath.Join(r.root, filepath.FromSlash(dir)))
	if err != nil {
		return false
	}
	for _, e := range ents {
		p := dir + "/" + e.Name()
		switch {
		case set[p]:
		case e.IsDir():
			if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p), ".git")); err == nil {
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

// stageByGit has git stage into the private index at indexPath (see the
// comment at the top of this file) and write its tree.
// gitArgs are the -c options git add -A runs with (shimDir.gitArgs).
func (r *Repo) stageByGit(ctx context.Context, indexPath string, h head, o commitOptions, never pathSet, gitArgs []string) (staging, error) {
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}}
	if o.asIs {
		return staging{}, nil // a merge: committed as it is
	}
	var headTree plumbing.Hash
	if !h.hash.IsZero() {
		c, err := r.repo.CommitObject(h.hash)
		if err != nil {
			return staging{}, fmt.Errorf("read HEAD commit: %w", err)
		}
		headTree = c.TreeHash
	}
	recs, err := r.indexVsHead(ctx, env, h)
	if err != nil {
		return staging{}, err
	}
	out, gone, changed, isDir, err := r.leftOutPaths(headTree, o, never)
	if err != nil {
		return staging{}, err
	}
	st := staging{changed: changed}
	// What the index holds of the paths left out stays the user's: put
	// back after the commit (Never's, an agent's `git add -f .env`, are
	// taken out and named instead).
	leftOut := map[string]bool{}
	for _, p := range out {
		leftOut[p] = true
	}
	for p := range gone {
		leftOut[p] = true
	}
	for _, rec := range recs {
		switch {
		case rec.dstMode == "000000" || rec.srcMode != "000000":
		case never[rec.path]:
			st.unstaged = append(st.unstaged, rec.path)
		case leftOut[rec.path]:
			st.restore = append(st.restore, rec)
		}
	}
	if len(recs) > 0 {
		env.stdin = bytes.NewReader(revertLines(recs))
		if _, err := r.git(ctx, env, append(noHooks, "update-index", "-z", "--index-info")...); err != nil {
			return staging{}, fmt.Errorf("stage: start from HEAD: %w", err)
		}
	}
	state, err := r.stateDirsOut(headTree)
	if err != nil {
		return staging{}, err
	}
	hidden, err := r.placeholders(headTree, slices.DeleteFunc(out, func(p string) bool { return isStatePath(p) }), isDir)
	if err != nil {
		return staging{}, err
	}
	for _, p := range state {
		fi, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p)))
		hidden = append(hidden, placeholder{path: p, dir: err == nil && fi.IsDir()})
	}
	if err := r.addToIndex(ctx, indexPath, hidden); err != nil {
		return staging{}, err
	}
	env.stdin = nil
	if _, err := r.git(ctx, gitRun{env: env.env, user: true}, append(gitArgs, "add", "-A")...); err != nil {
		return staging{}, fmt.Errorf("stage: %w", err)
	}
	var names []string
	for _, p := range hidden {
		names = append(names, p.path)
	}
	if err := r.removeFromIndex(ctx, indexPath, names); err != nil {
		return staging{}, err
	}
	// Taken out once git staged them: .debussy directories below the root,
	// and the user's files the agent renamed (what a gone file held, under
	// a new name). The index is compared with HEAD, not written as a tree:
	// git commit must find it as git add -A leaves it (it writes the tree
	// itself, and the index with it, and runs post-index-change then).
	goneObjects := map[string]bool{}
	for _, fp := range gone {
		if fp != "" && fp != emptyBlob && !strings.HasPrefix(fp, "link:") {
			goneObjects[fp] = true
		}
	}
	staged, err := r.indexVsHead(ctx, gitRun{env: env.env}, h)
	if err != nil {
		return staging{}, err
	}
	var later []string
	for _, rec := range staged {
		if rec.srcMode == "000000" && (isStatePath(rec.path) || goneObjects[rec.dst]) {
			later = append(later, rec.path)
		}
	}
	if len(later) > 0 {
		r.log.Debug("left out after staging", "paths", later)
		if err := r.removeFromIndex(ctx, indexPath, later); err != nil {
			return staging{}, err
		}
	}
	st.same = len(staged) == len(later)
	return st, nil
}

// addToIndex adds placeholders (assume-unchanged) to the index at
// indexPath: in one pass (editIndex), or by git where that cannot edit it.
func (r *Repo) addToIndex(ctx context.Context, indexPath string, ps []placeholder) error {
	if len(ps) == 0 {
		return nil
	}
	err := editIndex(indexPath, ps, nil)
	if !errors.Is(err, errIndexUnsupported) {
		return err
	}
	var b bytes.Buffer
	for _, p := range ps {
		mode := "100644"
		if p.dir {
			mode = "160000"
		}
		fmt.Fprintf(&b, "%s %s\t%s\x00", mode, emptyBlob, p.path)
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
	if len(paths) == 0 {
		return nil
	}
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	err := editIndex(indexPath, nil, set)
	if !errors.Is(err, errIndexUnsupported) {
		return err
	}
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	env := gitRun{env: []string{"GIT_INDEX_FILE=" + indexPath}, stdin: &b}
	if _, err := r.git(ctx, env, append(noHooks, "update-index", "-z", "--force-remove", "--stdin")...); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	return nil
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
