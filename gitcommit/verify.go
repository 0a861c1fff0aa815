package gitcommit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// ErrNoGit means there is no git binary on PATH to verify a commit with.
var ErrNoGit = errors.New("no git binary on PATH")

// Disagreement is where a commit differs from what `git add -A` would
// have committed: an empty one (no Paths) means git agrees.
type Disagreement struct {
	Paths []PathDisagreement
	// Skipped are paths that differ but changed in the worktree after the
	// commit (VerifyOptions.Since): the agent's next edits, not ours.
	Skipped []string
	// Repro is the file written with the reproduction, "" if none.
	Repro string
}

// PathDisagreement is one path: what the commit holds and what git would
// have staged, each as "<mode> <blob>" or "" when absent.
type PathDisagreement struct {
	Path      string
	Committed string
	Git       string
}

func (p PathDisagreement) String() string {
	show := func(s string) string {
		if s == "" {
			return "absent"
		}
		return s
	}
	return fmt.Sprintf("%s: committed %s, git would commit %s", p.Path, show(p.Committed), show(p.Git))
}

// VerifyOptions tunes Verify; the zero value checks the whole tree.
type VerifyOptions struct {
	// Paths limits the check to these paths (what the agent touched) and
	// the ones the commit changed: git walks only the directories they lie
	// in, so it is much cheaper, but a path git would have committed
	// elsewhere is not looked for. nil checks the whole tree.
	Paths []string
	// Exclude names the untracked paths CommitAll was told to leave out
	// (its Exclude option): git adding them is no disagreement.
	Exclude []string
	// Since, when set, is when the commit was made: a differing path whose
	// worktree entry changed at or after it is reported as Skipped.
	Since time.Time
	// ReproDir, when set, receives a reproduction on disagreement.
	ReproDir string
	// Env is the environment git runs with (GIT_DIR and the like are
	// honoured); default os.Environ().
	Env []string
}

// Verify asks real git whether commit (normally the auto-commit just made
// in the worktree at root) holds what `git add -A` would have staged: no
// ignored path committed, none left out, modes and blob ids equal. It works
// on a copy of the index in a temporary file (GIT_INDEX_FILE), so the
// user's index, refs and worktree are never written; git only adds objects
// for what it would stage. It returns ErrNoGit when git is not installed.
//
// git starts from the commit's parent (see startFromParent), so a path the
// commit added that git ignores shows, as does one it deleted that git
// keeps. Paths under .debussy/ are debussy's and never compared.
func Verify(ctx context.Context, root, commit string, opts VerifyOptions) (Disagreement, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return Disagreement{}, ErrNoGit
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	v := &verifier{ctx: ctx, bin: bin, root: root, env: withoutVar(env, "GIT_INDEX_FILE")}
	fail := func(err error) (Disagreement, error) {
		return Disagreement{}, fmt.Errorf("verify commit %s: %w", Short(commit), err)
	}

	tmp, err := os.MkdirTemp("", "debussy-verify-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	lookup := getenvOf(env)
	r, err := Open(root, WithGetenv(lookup))
	if err != nil {
		return fail(err)
	}
	tree, changed, err := r.writeParentIndex(commit, filepath.Join(tmp, "index"))
	if err != nil {
		return fail(err)
	}
	v.env = append(v.env, "GIT_INDEX_FILE="+filepath.Join(tmp, "index"))
	if err := v.add(root, opts.Paths, changed); err != nil {
		return fail(err)
	}
	// The common case, agreement, is settled in-process: the tree of what
	// git staged is the commit's.
	if same, err := indexTreeIs(filepath.Join(tmp, "index"), tree); err != nil {
		return fail(err)
	} else if same {
		return Disagreement{}, nil
	}
	// What git staged against the commit, path by path.
	out, err := v.git(nil, "diff-index", "--cached", "-z", "--no-renames", "--ignore-submodules=none", tree)
	if err != nil {
		return fail(err)
	}
	var d Disagreement
	for _, pd := range parseRawDiff(out) {
		switch {
		case isStateDirPath(pd.Path) || pd.Path == stateDir:
			continue // debussy's own state, never committed by design
		case pd.Committed == "" && underAny(pd.Path, opts.Exclude):
			continue // the user's untracked files, left out by Exclude
		}
		if !opts.Since.IsZero() && changedSince(filepath.Join(root, filepath.FromSlash(pd.Path)), opts.Since) {
			d.Skipped = append(d.Skipped, pd.Path)
			continue
		}
		d.Paths = append(d.Paths, pd)
	}
	if len(d.Paths) > 0 && opts.ReproDir != "" {
		d.Repro, err = v.writeRepro(opts.ReproDir, commit, d.Paths)
		if err != nil {
			return d, fmt.Errorf("verify commit %s: write reproduction: %w", Short(commit), err)
		}
	}
	return d, nil
}

// writeParentIndex writes, at path, the index `git add -A` started from
// when commit was made: its parent's. Reading the parent's tree would drop
// the stat data and make git hash every file; so the user's index (which
// holds the commit right after CommitAll) is taken and only the paths the
// commit changed are set back to the parent's entries, without stat data.
// It returns the commit's tree and those paths. All in-process: on a loaded
// machine each git process costs more than the work.
func (r *Repo) writeParentIndex(commit, path string) (tree string, changed []string, err error) {
	end, err := r.begin()
	if err != nil {
		return "", nil, err
	}
	defer end()
	h, err := r.repo.ResolveRevision(plumbing.Revision(commit))
	if err != nil {
		return "", nil, fmt.Errorf("resolve %s: %w", commit, err)
	}
	c, err := r.repo.CommitObject(*h)
	if err != nil {
		return "", nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	var parentTree plumbing.Hash
	if len(c.ParentHashes) > 0 {
		p, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return "", nil, fmt.Errorf("read parent of %s: %w", commit, err)
		}
		parentTree = p.TreeHash
	}
	changes, err := r.diffTrees(parentTree, c.TreeHash)
	if err != nil {
		return "", nil, err
	}
	idx, err := r.readIndex()
	if err != nil {
		return "", nil, err
	}
	reset := make(map[string]*Change, len(changes))
	for i := range changes {
		reset[changes[i].Path] = &changes[i]
		changed = append(changed, changes[i].Path)
	}
	entries := make([]*index.Entry, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if reset[e.Name] == nil {
			entries = append(entries, e)
		}
	}
	for _, ch := range changes {
		if ch.Status != "A" {
			entries = append(entries, &index.Entry{Name: ch.Path, Mode: ch.fromMode, Hash: ch.fromHash})
		}
	}
	slices.SortStableFunc(entries, func(a, b *index.Entry) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(a.Stage) - int(b.Stage)
	})
	b := encodeIndexEntries(entries, r.assumeValid, idx.Version == 4)
	return c.TreeHash.String(), changed, os.WriteFile(path, b, 0o600)
}

// indexTreeIs reports whether the index file at path, written as a tree,
// is tree.
func indexTreeIs(path, tree string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	idx, _, ok, err := decodeIndex(b)
	if err != nil || !ok {
		return false, err // a format this codec leaves alone: let git compare
	}
	var stage0 []*index.Entry
	for _, e := range idx.Entries {
		if e.Stage != 0 {
			return false, nil
		}
		if !e.IntentToAdd {
			stage0 = append(stage0, e)
		}
	}
	h, _ := buildTree(stage0)
	return h.String() == tree, nil
}

// getenvOf looks variables up in env as exec would (the last one wins).
func getenvOf(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// add runs `git add -A` on the temporary index: on the whole tree, or with
// paths on those paths and the ones the commit changed (git then walks only
// the directories they lie in). An ignored path named in the pathspec makes
// git exit 1 after staging the rest; that is the answer, not a failure.
func (v *verifier) add(root string, paths, changed []string) error {
	if paths == nil {
		_, err := v.git(nil, "add", "-A")
		return err
	}
	var spec []byte
	for _, p := range changed {
		spec = append(append(spec, p...), 0)
	}
	for _, p := range paths {
		// A path neither on disk nor changed by the commit would be a
		// pathspec error: nothing for git to stage there anyway.
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			spec = append(append(spec, p...), 0)
		}
	}
	if len(spec) == 0 {
		return nil
	}
	_, err := v.git(spec, "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
	if err != nil && strings.Contains(err.Error(), "exit status 1:") && strings.Contains(err.Error(), "ignored by one of your .gitignore files") {
		return nil
	}
	return err
}

type verifier struct {
	ctx  context.Context
	bin  string
	root string
	env  []string
}

// git runs git in the worktree and returns its trimmed stdout.
func (v *verifier) git(stdin []byte, args ...string) (string, error) {
	// No hooks: post-index-change would fire for the temporary index.
	cmd := exec.CommandContext(v.ctx, v.bin, append([]string{"-c", "core.quotePath=false", "-c", "core.hooksPath=" + os.DevNull}, args...)...)
	cmd.Dir = v.root
	cmd.Env = v.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// parseRawDiff reads `git diff-tree -r -z` (or diff-index) output, the
// first tree the committed side: for each path
// ":<old mode> <new mode> <old id> <new id> <status>\0<path>\0".
func parseRawDiff(out string) []PathDisagreement {
	var pds []PathDisagreement
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			continue
		}
		side := func(mode, id string) string {
			if strings.Trim(mode, "0") == "" {
				return ""
			}
			return mode + " " + id
		}
		pds = append(pds, PathDisagreement{Path: fields[i+1], Committed: side(meta[0], meta[2]), Git: side(meta[1], meta[3])})
	}
	return pds
}

// changedSince reports whether path (or, when gone, its parent) changed at
// or after t: then a difference is the worktree moving on, not the commit.
func changedSince(path string, t time.Time) bool {
	for p := path; ; p = filepath.Dir(p) {
		st, err := lstat(p)
		if err == nil && st.kind != kindMissing {
			return !st.mtime.Before(t) || !st.ctime.Before(t)
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}

// writeRepro writes what a bug report needs to replay the disagreement:
// the paths, and for each the config, attribute and ignore lines that
// decide it, and git's version.
func (v *verifier) writeRepro(dir, commit string, pds []PathDisagreement) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var paths []string
	var b strings.Builder
	fmt.Fprintf(&b, "# debussy auto-commit %s disagrees with git add -A\n\n## paths\n", commit)
	for _, pd := range pds {
		paths = append(paths, pd.Path)
		fmt.Fprintln(&b, pd.String())
	}
	shown := paths[:min(len(paths), 200)]
	section := func(title string, stdin []byte, args ...string) {
		out, err := v.git(stdin, args...)
		if err != nil {
			out = err.Error()
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", title, out)
	}
	section("git version", nil, "version")
	section("ignore rules (git check-ignore -v -n --no-index)", nil, append([]string{"check-ignore", "-v", "-n", "--no-index", "--"}, shown...)...)
	section("attributes (git check-attr -a)", nil, append([]string{"check-attr", "-a", "--"}, shown...)...)
	section("what git staged (ls-files -s -v of its temporary index)", nil, append([]string{"--literal-pathspecs", "ls-files", "-s", "-v", "--"}, shown...)...)
	if out, err := v.git(nil, "config", "--show-origin", "--list"); err == nil {
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			origin, kv, _ := strings.Cut(l, "\t")
			if origin == "command line:" {
				continue // ours
			}
			k, _, _ := strings.Cut(strings.ToLower(kv), "=")
			if relevantConfigKey(k) {
				lines = append(lines, l)
			}
		}
		fmt.Fprintf(&b, "\n## config (core, filters, includes, extensions, submodules)\n%s\n", strings.Join(lines, "\n"))
	}
	name := filepath.Join(dir, "git-disagreement-"+Short(commit)+".md")
	return name, os.WriteFile(name, []byte(b.String()), 0o644)
}

// relevantConfigKey is a config key that can change what git stages; user
// names, remotes and credentials stay out of a reproduction.
func relevantConfigKey(k string) bool {
	for _, p := range []string{"core.", "filter.", "include.", "includeif.", "extensions.", "index.", "submodule.", "status.", "lfs."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// underAny reports whether p is one of dirs or lies below one.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func withoutVar(env []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}
