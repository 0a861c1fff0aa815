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

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// maxScope is the most paths a scoped check names to git: git matches each
// path it walks against every one, so beyond it the whole tree is cheaper.
const maxScope = 1000

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
	// Paths limits the check to these paths (what the agent touched), the
	// ones the commit changed and Ignored: git walks only the directories
	// they lie in, so it is much cheaper, but a path git would have
	// committed elsewhere is not looked for (see verifyScoped). nil checks
	// the whole tree.
	Paths []string
	// Ignored are the paths the commit left out as ignored
	// (Commit.Ignored): with Paths, git is asked about each.
	Ignored []string
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
//
// A commit CommitAll made with git's verdict (Commit.StagedByGit) needs no
// Verify: git staged it before any hook ran.
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
	r, err := Open(root, WithEnv(env))
	if err != nil {
		return fail(err)
	}
	indexPath := filepath.Join(tmp, "index")
	v.index = indexPath
	var pds []PathDisagreement
	if opts.Paths != nil && len(opts.Paths)+len(opts.Ignored) <= maxScope {
		pds, err = v.verifyScoped(r, commit, indexPath, opts)
	} else {
		pds, err = v.verifyWhole(r, commit, indexPath)
	}
	if err != nil {
		return fail(err)
	}
	var d Disagreement
	for _, pd := range pds {
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

// verifyWhole has git stage the whole tree, from the index the commit
// started from, and compares.
func (v *verifier) verifyWhole(r *Repo, commit, indexPath string) ([]PathDisagreement, error) {
	tree, err := r.writeParentIndex(commit, indexPath)
	if err != nil {
		return nil, err
	}
	if _, err := v.git(nil, "add", "-A"); err != nil {
		return nil, err
	}
	// The common case, agreement, is settled in-process: the tree of what
	// git staged is the commit's.
	if same, err := indexTreeIs(indexPath, tree); err != nil || same {
		return nil, err
	}
	// What git staged against the commit, path by path.
	out, err := v.git(nil, "diff-index", "--cached", "-z", "--no-renames", "--ignore-submodules=none", tree)
	if err != nil {
		return nil, err
	}
	return parseRawDiff(out), nil
}

// writeParentIndex writes, at path, the index `git add -A` started from
// when commit was made: its parent's. Reading the parent's tree would drop
// the stat data and make git hash every file; so the user's index (which
// holds the commit right after CommitAll) is taken and only the paths the
// commit changed are set back to the parent's entries, without stat data.
// It returns the commit's tree and those paths. All in-process: on a loaded
// machine each git process costs more than the work.
func (r *Repo) writeParentIndex(commit, path string) (tree string, err error) {
	end, err := r.begin()
	if err != nil {
		return "", err
	}
	defer end()
	treeHash, changes, err := r.commitChanges(commit)
	if err != nil {
		return "", err
	}
	idx, err := r.readIndex()
	if err != nil {
		return "", err
	}
	reset := make(map[string]bool, len(changes))
	for _, ch := range changes {
		reset[ch.Path] = true
	}
	entries := make([]*index.Entry, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if !reset[e.Name] {
			entries = append(entries, e)
		}
	}
	for _, ch := range changes {
		if ch.Status != "A" {
			entries = append(entries, &index.Entry{Name: ch.Path, Mode: ch.fromMode, Hash: ch.fromHash})
		}
	}
	sortEntries(entries)
	b := encodeIndexEntries(entries, r.assumeValid, idx.Version == 4)
	return treeHash.String(), os.WriteFile(path, b, 0o600)
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

// addPathspec runs `git add -A` on the temporary index for the NUL-ended
// paths in spec (git then walks only the directories they lie in). An
// ignored path named in the pathspec makes git exit 1 after staging the
// rest; that is the answer, not a failure.
func (v *verifier) addPathspec(spec []byte) error {
	_, err := v.git(spec, "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
	if err != nil && strings.Contains(err.Error(), "exit status 1:") && strings.Contains(err.Error(), "ignored by one of your .gitignore files") {
		return nil
	}
	return err
}

type verifier struct {
	ctx   context.Context
	bin   string
	root  string
	env   []string
	index string // GIT_INDEX_FILE for git, "" for the user's
}

// git runs git in the worktree and returns its trimmed stdout.
func (v *verifier) git(stdin []byte, args ...string) (string, error) {
	stdout, stderr, err := v.run(stdin, args...)
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr))
	}
	return strings.TrimRight(stdout, "\n"), nil
}

// run runs git in the worktree, on the index v.index when set, and returns
// its stdout and stderr as they are.
func (v *verifier) run(stdin []byte, args ...string) (stdout, stderr string, err error) {
	// No hooks: post-index-change would fire for the temporary index.
	cmd := exec.CommandContext(v.ctx, v.bin, append([]string{"-c", "core.quotePath=false", "-c", "core.hooksPath=" + os.DevNull}, args...)...)
	cmd.Dir = v.root
	cmd.Env = v.env
	if v.index != "" {
		cmd.Env = append(slices.Clip(v.env), "GIT_INDEX_FILE="+v.index)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
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
