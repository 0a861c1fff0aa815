package gitcommit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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
	// Paths and Ignored limit the report to these paths (what the agent
	// touched) and the ones the commit changed; nil: the whole tree.
	Paths, Ignored []string
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

// Verify asks real git whether commit (normally one made in the worktree
// at root without git, Mode "go-git") holds what `git add -A` would have
// staged: git stages the worktree into a temporary index seeded from the
// commit's parent, with opts.Exclude and .debussy/ left out as CommitAll
// leaves them, and the two trees are compared. The user's index, refs and
// worktree are never written. It returns ErrNoGit when git is not
// installed. opts.Paths and opts.Ignored are accepted for compatibility:
// git's whole-tree staging is as cheap as a scoped one.
//
// A commit CommitAll made where git is installed (Commit.StagedByGit)
// needs no Verify: git staged it.
func Verify(ctx context.Context, root, commit string, opts VerifyOptions) (Disagreement, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return Disagreement{}, ErrNoGit
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	r, err := OpenContext(ctx, root, WithEnv(withoutVar(env, "GIT_INDEX_FILE")))
	if err != nil {
		return Disagreement{}, fmt.Errorf("verify commit %s: %w", Short(commit), err)
	}
	if r.gitBin == "" {
		return Disagreement{}, ErrNoGit
	}
	pds, err := r.verify(ctx, commit, opts.Exclude)
	if err != nil {
		return Disagreement{}, fmt.Errorf("verify commit %s: %w", Short(commit), err)
	}
	if opts.Paths != nil {
		pds, err = r.inScope(ctx, commit, pds, append(slices.Clone(opts.Paths), opts.Ignored...))
		if err != nil {
			return Disagreement{}, fmt.Errorf("verify commit %s: %w", Short(commit), err)
		}
	}
	var d Disagreement
	for _, pd := range pds {
		if !opts.Since.IsZero() && changedSince(filepath.Join(root, filepath.FromSlash(pd.Path)), opts.Since) {
			d.Skipped = append(d.Skipped, pd.Path)
			continue
		}
		d.Paths = append(d.Paths, pd)
	}
	if len(d.Paths) > 0 && opts.ReproDir != "" {
		if d.Repro, err = r.WriteRepro(opts.ReproDir, commit, d.Paths); err != nil {
			d.Repro = err.Error()
		}
	}
	return d, nil
}

func (r *Repo) verify(ctx context.Context, commit string, exclude []string) ([]PathDisagreement, error) {
	tmp, err := os.MkdirTemp("", "debussy-verify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	idx := gitRun{env: []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}}
	parent := commit + "^"
	if _, err := r.git(ctx, gitRun{}, "rev-parse", "-q", "--verify", parent+"^{commit}"); err != nil {
		parent = ""
	}
	if parent != "" {
		if _, err := r.git(ctx, idx, "read-tree", parent); err != nil {
			return nil, err
		}
	}
	idx.stdin = bytes.NewReader(excludeSpecs(exclude))
	if _, err := r.git(ctx, idx, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
		return nil, err
	}
	idx.stdin = nil
	tree, err := r.git(ctx, idx, "write-tree")
	if err != nil {
		return nil, err
	}
	out, err := r.git(ctx, gitRun{}, "diff-tree", "-r", "-z", "--no-renames", "--raw", commit+"^{tree}", strings.TrimSpace(string(tree)))
	if err != nil {
		return nil, err
	}
	return parseRawDiff(string(out)), nil
}

// inScope keeps the disagreements on scope's paths (or below them) and on
// the paths commit itself changed.
func (r *Repo) inScope(ctx context.Context, commit string, pds []PathDisagreement, scope []string) ([]PathDisagreement, error) {
	out, err := r.git(ctx, gitRun{}, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--root", "--no-commit-id", commit)
	if err != nil {
		return nil, err
	}
	scope = append(scope, strings.Split(string(out), "\x00")...)
	return slices.DeleteFunc(pds, func(pd PathDisagreement) bool {
		for _, p := range scope {
			if p != "" && (pd.Path == p || strings.HasPrefix(pd.Path, p+"/")) {
				return false
			}
		}
		return true
	}), nil
}

// parseRawDiff reads `git diff-tree -z --raw` output.
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
		if fi, err := os.Lstat(p); err == nil {
			return !fi.ModTime().Before(t)
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}

// WriteRepro writes, under dir, what a report of a disagreement needs: the
// paths and how git sees them. It returns the file's name.
func (r *Repo) WriteRepro(dir, commit string, pds []PathDisagreement) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# debussy commit %s disagrees with git add -A\n\n## paths\n", commit)
	var paths []string
	for _, pd := range pds {
		paths = append(paths, pd.Path)
		fmt.Fprintln(&b, pd.String())
	}
	paths = paths[:min(len(paths), 200)]
	ctx := context.Background()
	for _, sec := range [][]string{
		{"version"},
		append([]string{"check-ignore", "-v", "-n", "--no-index", "--"}, paths...),
		append([]string{"--literal-pathspecs", "check-attr", "-a", "--"}, paths...),
	} {
		out, err := r.git(ctx, gitRun{}, sec...)
		if err != nil {
			out = []byte(err.Error())
		}
		fmt.Fprintf(&b, "\n## git %s\n%s\n", strings.Join(sec[:min(len(sec), 2)], " "), out)
	}
	name := filepath.Join(dir, "git-disagreement-"+Short(commit)+".md")
	return name, os.WriteFile(name, []byte(b.String()), 0o644)
}
